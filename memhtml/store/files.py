"""Creating memory files in the working tree: atomically, never replacing a file, never through a symlink.

A transaction records what these functions created so it can remove exactly that (and the directories
it had to make) when its commit does not land.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from memhtml.contracts.errors import InvalidMemory, StorageFailure, WriteConflict


def create_file_exclusively(root: Path, path: str, text: str) -> list[Path]:
    """Write `path` atomically without ever replacing a file or following a symlink out of the store;
    returns the directories it created."""
    target = root / path
    _refuse_symlinks(root, target.parent)
    created = _make_parents(root, target.parent)
    temporary = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with temporary.open("xb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        # link() refuses to replace an existing file, unlike rename(): a racing file is never clobbered.
        os.link(temporary, target)
    except FileExistsError as error:
        remove_created(root, [], created)
        raise WriteConflict(f"write conflict on {path}: the path was taken while writing", []) from error
    except OSError as error:
        remove_created(root, [], created)
        raise StorageFailure(f"could not write {path} ({error.strerror})", []) from error
    finally:
        temporary.unlink(missing_ok=True)
    return created


def remove_created(root: Path, paths: Iterable[str], directories: list[Path]) -> None:
    """Undo a transaction that did not land: its new files, then the directories it made (deepest first)."""
    for path in paths:
        (root / path).unlink(missing_ok=True)
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
