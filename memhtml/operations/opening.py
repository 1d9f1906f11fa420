"""Opening a store's index ahead of the command that is about to use it.

The entry point calls this as soon as it knows the command and its store, before importing the code that
runs the command: DuckDB starts its instance (a stretch of native code, the GIL released) on a thread
while the command imports, opens the store and loads its model. Before that, a command that projects
the whole store forks its workers, while the process still has one thread. This module imports only
the index's database module, so that importing it costs nothing the command would not pay anyway.
"""

from __future__ import annotations

from pathlib import Path

from memhtml.contracts import lifetime
from memhtml.index.database import open_ahead


def open_index_ahead(root: Path, *, read_only: bool) -> None:
    """Start the open the command's first use of the index makes (`database.open_ahead`)."""
    open_ahead(root, read_only=read_only)


def fork_workers_ahead(root: Path) -> None:
    """Fork the workers of the store-wide projection the command is about to make (`parallel.
    fork_workers_ahead`), when this process ends by its exit (one that lives on, the MCP server or a
    test, may have threads, and keeps the fork server) and git's index says the store is big enough. A
    store whose size git's index does not tell (a worktree's `.git` is a file) is left to the fork server:
    forking for a store that turns out small would cost more than it saves."""
    if lifetime.ends_by_exit():
        from memhtml.index.parallel import fork_workers_ahead as fork_pool_ahead
        from memhtml.store.gitread import index_entry_count

        entries = index_entry_count(root)
        if entries is not None:
            fork_pool_ahead(lambda count: entries > count)
