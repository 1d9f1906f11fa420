"""Setting a damaged index or state database aside: the rename that moves the file (and its
write-ahead log) out of the way so the next open creates a fresh one, kept apart from the opening
itself because it runs only after an open was refused.

A set-aside file is renamed, never deleted: its bytes are the evidence of what went wrong, and the
names stay under the ignore patterns `init` writes, so git never shows them.
"""

from __future__ import annotations

import os
from pathlib import Path

from memhtml.index.database import close_left_connections, database_paths, drop_ahead


def index_identity(root: Path) -> tuple[int, int] | None:
    """Which file the index is now (device, inode), or None when there is none."""
    try:
        found = database_paths(root)[0].stat()
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


def set_aside_index(root: Path, instant: str, damaged: tuple[int, int] | None) -> Path | None:
    """Rename the damaged index file (and its write-ahead log) out of the way, so the next open creates a
    fresh one; the names stay under the ignore patterns `init` writes. Only the file found damaged
    (`damaged`, its `index_identity`) is moved: another process may have replaced it already and be
    rebuilding into the new one. Returns the new name, or None when nothing was moved."""
    drop_ahead(root)
    close_left_connections()  # this process lets go of the file before moving it
    index_file = database_paths(root)[0]
    if damaged is None or index_identity(root) != damaged:
        return None
    return _moved_aside(index_file, instant)


def set_aside_state(root: Path, instant: str) -> Path | None:
    """Rename a damaged state database (and its write-ahead log) out of the way, so the next open creates
    an empty one; the name stays under the ignore patterns `init` writes. Returns the new name, or None
    when there was none."""
    drop_ahead(root)
    close_left_connections()
    state_file = database_paths(root)[1]
    if not os.path.lexists(state_file):
        return None
    return _moved_aside(state_file, instant)


def _moved_aside(file: Path, instant: str) -> Path:
    """Rename `file` and its write-ahead log to `<name>.damaged-<instant>` (`-2`, `-3`… when that name
    is taken: an earlier repair in the same second kept its own)."""
    stamp = instant.replace("-", "").replace(":", "")
    aside = file.with_name(f"{file.name}.damaged-{stamp}")
    suffix = 1
    while os.path.lexists(aside):
        suffix += 1
        aside = file.with_name(f"{file.name}.damaged-{stamp}-{suffix}")
    os.replace(file, aside)
    log = file.with_name(file.name + ".wal")
    if log.exists():
        os.replace(log, aside.with_name(aside.name + ".wal"))
    return aside
