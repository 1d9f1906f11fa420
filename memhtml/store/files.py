"""Creating memory files in the working tree: atomically, never replacing a file, never through a symlink.

A transaction records what these functions created so it can remove exactly that (and the directories
it had to make) when its commit does not land.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from memhtml.contracts.errors import InvalidMemory, StorageFailure, WriteConflict


def create_file_exclusively(root: Path, path: str, text: str, known_directories: set[Path] | None = None) -> list[Path]:
    """Create `path` with `text`, never replacing a file (O_EXCL) nor following a symlink out of the
    store; returns the directories it created. `known_directories` caches directories already checked
    by this transaction, so a batch checks each directory once.

    No fsync and no temporary file: the commit takes its bytes from memory, not from this file, and a
    transaction that does not land removes what it created.
    """
    target = root / path
    parent = target.parent
    created: list[Path] = []
    if known_directories is None or parent not in known_directories:
        _refuse_symlinks(root, parent)
        created = _make_parents(root, parent)
        if known_directories is not None:
            known_directories.add(parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(target, flags, 0o644)
    except FileExistsError as error:
        remove_directories(created)
        raise WriteConflict(f"write conflict on {path}: the path was taken while writing", []) from error
    except OSError as error:
        remove_directories(created)
        raise StorageFailure(f"could not write {path} ({error.strerror})", []) from error
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(text.encode("utf-8"))
    except OSError as error:
        target.unlink(missing_ok=True)
        remove_directories(created)
        raise StorageFailure(f"could not write {path} ({error.strerror})", []) from error
    return created


def remove_directories(directories: list[Path]) -> None:
    """Undo the directories a transaction made (deepest first); one something else now uses stays."""
    for directory in sorted(directories, key=lambda item: len(item.parts), reverse=True):
        with contextlib.suppress(OSError):  # not empty: something else lives there now
            directory.rmdir()


def _refuse_symlinks(root: Path, directory: Path) -> None:
    """Every existing directory between the root and `directory` must be a real directory."""
    current = root
    for part in directory.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            raise InvalidMemory(
                f"invalid memory: {current.relative_to(root)} is a symbolic link; memories are written "
                "only inside the store. Nothing was written",
                [],
            )
        if not current.exists():
            return


def _make_parents(root: Path, directory: Path) -> list[Path]:
    missing: list[Path] = []
    current = directory
    while current != root and not current.exists():
        missing.append(current)
        current = current.parent
    for item in reversed(missing):
        item.mkdir()
    return missing
