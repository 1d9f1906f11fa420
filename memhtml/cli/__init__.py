"""The command-line door: argument grammar, envelopes, rendering and the exit-status mapping.

Importing it, first of the executable's modules, also sets the cyclic collector's threshold for the
executable's process. Its modules and DuckDB's allocate tens of thousands of objects as they load, none
of them garbage; at Python's threshold of 700 that was ≈24 young and 2 middle collections, ≈5 ms of an
update after one commit. A threshold of 10,000 leaves ≈2, and keeps collecting what a long command (a
rebuild, an `apply`, the server `serve mcp` runs) allocates later, each young collection over at most
10,000 objects. Measured, alternating the two: an update after one commit 164 against 171 ms at 1k (30
a side) and 170 against 181 ms at 10k (24 a side); a 10k rebuild no different (1,921 against 1,918 ms,
12 a side).
"""

import gc

gc.set_threshold(10_000, 10, 10)
