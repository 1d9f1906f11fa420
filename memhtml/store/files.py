"""Memory files in the working tree: created atomically, never replacing a file, and neither created
nor read through a symbolic link.

A transaction records what these functions created so it can remove exactly that (and the directories
it had to make) when its commit does not land. A path a caller names is confined to the corpus by
`contracts.paths` from its text alone; only the file system can tell whether one of its components
is a link leading elsewhere, so that check lives here: a memory is a regular file reached through
real directories, as git itself tracks it (git never looks beyond a symbolic link).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from memhtml.contracts.errors import InvalidMemory, StorageFailure, WriteConflict

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class LinkedPath(Exception):
    """A component of a repo-relative path is a symbolic link; `component` is its repo-relative path."""

    def __init__(self, component: str) -> None:
        super().__init__(component)
        self.component = component


def linked_component(root: Path, path: str) -> str | None:
    """The first component of `path` (repo-relative) that is a symbolic link, or None; components
    past the first missing one are not looked at (nothing can be reached through them)."""
    current = root
    for part in path.split("/"):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stat.S_ISLNK(mode):
            return current.relative_to(root).as_posix()
        if not stat.S_ISDIR(mode):
            return None
    return None


def is_regular_file(root: Path, path: str) -> bool:
    """Whether `path` is a regular file reached through real directories only."""
    if linked_component(root, path) is not None:
        return False
    try:
        return stat.S_ISREG(os.lstat(root / path).st_mode)
    except OSError:
        return False


def read_regular_file(root: Path, path: str) -> bytes | None:
    """The bytes of the regular file at `path`, opened one component at a time without following a
    symbolic link (so a link swapped in while reading cannot lead out either); None when it is
    missing or is not a regular file (a directory, a FIFO). Raises LinkedPath for a link."""
    parts = path.split("/")
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | _CLOEXEC | (os.O_NONBLOCK if last else os.O_DIRECTORY)
            try:
                opened = os.open(part, flags, dir_fd=directory)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) and _is_link(directory, part):
                    raise LinkedPath("/".join(parts[: index + 1])) from None
                if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ENXIO):
                    return None
                raise
            os.close(directory)
            directory = opened
        if not stat.S_ISREG(os.fstat(directory).st_mode):
            return None
        chunks = []
        while chunk := os.read(directory, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(directory)


# A working-tree copy larger than this is not read to be compared with its blob: git reads it instead.
LARGEST_COMPARED_FILE = 64 << 20


def blob_id(data: bytes) -> str:
    """The object name git gives a blob of `data` (`git hash-object --no-filters`)."""
    digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


def committed_bytes_on_disk(root: Path, entries: Iterable[tuple[str, str]]) -> dict[str, bytes]:
    """Blob contents by blob id, for the `(path, blob id)` entries whose working-tree file holds exactly
    that blob's bytes; the rest are left out, for git to read.

    A clean checkout holds every committed blob as a plain file, and reading one costs a fraction of
    having git find and inflate its object (a rebuild spends a fraction of the CPU on it).
    The bytes are trusted only when they hash to the blob id, so an edited, filtered (autocrlf, a smudge
    filter) or half-written file is simply read from git. The file itself is never a symbolic link
    followed (O_NOFOLLOW); a linked directory on its path is, but what it leads to counts only if it
    holds the blob's exact bytes, the very bytes git would give. The file is opened without blocking
    (a FIFO) and read only when it is a regular file.
    """
    found: dict[str, bytes] = {}
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
    # Joined as text: a `Path` join per file was a visible share of a rebuild worker's time per file.
    prefix = os.path.join(root, "")
    for path, blob in entries:
        try:
            descriptor = os.open(prefix + path, flags)
        except OSError:
            continue
        try:
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode) or status.st_size > LARGEST_COMPARED_FILE:
                continue
            data = os.read(descriptor, status.st_size + 1)
        except OSError:
            continue
        finally:
            os.close(descriptor)
        if blob_id(data) == blob:
            found[blob] = data
    return found


def _is_link(directory: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=directory).st_mode)
    except OSError:
        return False


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
            raise linked_refusal(current.relative_to(root).as_posix(), "written")
        if not current.exists():
            return


def linked_refusal(component: str, verb: str) -> InvalidMemory:
    """The refusal to write, rewrite or move a memory through the symbolic link `component`."""
    return InvalidMemory(
        f"invalid memory: {component} is a symbolic link; memories are {verb} only inside the store, "
        "never through a link. Nothing was written",
        [f"ls -ld {component}", "memhtml status"],
    )


def _make_parents(root: Path, directory: Path) -> list[Path]:
    missing: list[Path] = []
    current = directory
    while current != root and not current.exists():
        missing.append(current)
        current = current.parent
    for item in reversed(missing):
        item.mkdir()
    return missing
