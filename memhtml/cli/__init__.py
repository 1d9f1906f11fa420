"""The command-line door: argument grammar, envelopes, rendering and the exit-status mapping.

Importing it, first of the executable's modules, also sets the cyclic collector's threshold for the
executable's process. Its modules and DuckDB's allocate tens of thousands of objects as they load, none
of them garbage; at Python's threshold of 700 they set off a couple of dozen collections, a visible
share of a write. A threshold of 10,000 leaves a few, and keeps collecting what a long command (a
rebuild, an `apply`, the server `serve mcp` runs) allocates later, each young collection over at most
10,000 objects. It stays because a write sits at its target's line (docs/performance.md, "Speed
machinery").
"""

import gc

gc.set_threshold(10_000, 10, 10)
