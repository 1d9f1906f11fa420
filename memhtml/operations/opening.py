"""Opening a store's index ahead of the command that is about to use it.

The entry point calls this as soon as it knows the command and its store, before importing the code that
runs the command: DuckDB starts its instance (≈30–45 ms of native code, the GIL released) on a thread
while the command imports, opens the store and loads its model. This module imports only the index's
database module, so that importing it costs nothing the command would not pay anyway.
"""

from __future__ import annotations

from pathlib import Path

from memhtml.index.database import open_ahead


def open_index_ahead(root: Path, *, read_only: bool) -> None:
    """Start the open the command's first use of the index makes (`database.open_ahead`)."""
    open_ahead(root, read_only=read_only)
