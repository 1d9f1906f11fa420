"""The single-memory write transaction: dedupe, claim a free path, write atomically, commit that path.

Everything between the dedupe question and the branch update runs under the store's write lock, so
two writers can neither store the same fact twice nor claim one path. Until the commit lands, a
failure, an interrupt or a SIGTERM/SIGHUP removes what this transaction created; only SIGKILL can
leave an uncommitted file behind, and the next writer's lock sweep clears its private index.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Literal

from memhtml.contracts.errors import InvalidMemory, StorageFailure, WriteConflict
from memhtml.contracts.paths import MAX_COLLISION_ORDINAL, memory_filename
from memhtml.store.commit import Staged, commit_paths, path_in_head, sweep_private_indexes, sync_real_index
from memhtml.store.gitcmd import run_git
from memhtml.store.lock import write_lock
from memhtml.store.repository import Store

# Answers "which active, non-task memory has this content hash?" (the index, or a tree scan).
ActiveHashLookup = Callable[[Store, str], "str | None"]


@dataclass(frozen=True)
class PlacedMemory:
    """A rendered, validated memory file and the rules that will give it a path."""

    file_text: str
    content_hash: str
    memory_type: str
    directory: str
    slug: str
    date_prefix: str | None
    explicit_path: str | None


@dataclass(frozen=True)
class StoredWrite:
    outcome: Literal["written", "unchanged"]
    path: str
    commit_sha: str | None
    index_synced: bool


def write_memory(store: Store, memory: PlacedMemory, lookup: ActiveHashLookup, commit_message: str) -> StoredWrite:
    """Store `memory` as one commit, or answer the committed active memory that already says it."""
    with write_lock(store.git_dir), signals_as_interrupts():
        sweep_private_indexes(store.git_dir)
        if memory.memory_type != "task":
            existing = lookup(store, memory.content_hash)
            # Only a committed memory counts: an uncommitted leftover must not swallow a write.
            if existing is not None and path_in_head(store.root, existing):
                return StoredWrite("unchanged", existing, None, True)
        if memory.explicit_path is not None:
            path = memory.explicit_path
            if _occupied(store.root, path, _archive_years(store.root), _head_names(store.root, path)):
                raise WriteConflict(
                    f"write conflict on {path}: a memory already occupies this path; nothing was written",
                    [f"memhtml read {path}", "memhtml write … without --path (placement picks a free path)"],
                )
        else:
            path = claim_free_path(store.root, memory.directory, memory.slug, memory.date_prefix)
        created_directories = create_file_exclusively(store.root, path, memory.file_text)
        try:
            landed = commit_paths(store.root, store.git_dir, [Staged(path)], commit_message)
        except BaseException:
            # An interrupt can arrive after the branch moved; a committed file must never be removed.
            if not path_in_head(store.root, path):
                remove_created(store.root, [path], created_directories)
            raise
        index_synced = sync_real_index(store.root, landed.records)
    return StoredWrite("written", path, landed.sha, index_synced)


@contextlib.contextmanager
def signals_as_interrupts() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into KeyboardInterrupt for the block, so its rollback runs."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    try:
        previous = {number: signal.signal(number, interrupt) for number in (signal.SIGTERM, signal.SIGHUP)}
    except ValueError:  # not the main thread: signals cannot be caught here
        yield
        return
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def claim_free_path(
    root: Path, directory: str, slug: str, date_prefix: str | None, claimed: set[str] | None = None
) -> str:
    """The first free `directory/<name>` by collision ordinal. A path is taken if a file is there, if
    HEAD has it (even when deleted from disk), if an archived copy exists, or if `claimed` holds it."""
    claimed = set() if claimed is None else claimed
    archive_years = _archive_years(root)
    in_head = _head_names(root, f"{directory}/x")
    for ordinal in range(1, MAX_COLLISION_ORDINAL + 1):
        candidate = f"{directory}/{memory_filename(slug, ordinal, date_prefix)}"
        if candidate in claimed or _occupied(root, candidate, archive_years, in_head):
            continue
        claimed.add(candidate)
        return candidate
    raise StorageFailure(f"no free path for `{slug}` in {directory} after {MAX_COLLISION_ORDINAL} tries", [])


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


def _head_names(root: Path, path: str) -> frozenset[str]:
    """Paths HEAD holds in the directory of `path` (one ls-tree of that directory only)."""
    directory = path.rsplit("/", 1)[0] + "/"
    output = run_git(
        root, ["ls-tree", "-z", "--name-only", "--full-tree", "HEAD", "--", directory], ok_statuses=(0, 128)
    ).stdout
    return frozenset(name.decode("utf-8", "surrogateescape") for name in output.split(b"\0") if name)


def _archive_years(root: Path) -> list[str]:
    try:
        return [entry.name for entry in os.scandir(root / "archive") if entry.is_dir() and entry.name.isdigit()]
    except FileNotFoundError:
        return []


def _occupied(root: Path, candidate: str, archive_years: list[str], in_head: frozenset[str]) -> bool:
    if candidate in in_head or os.path.lexists(root / candidate):
        return True
    # A path whose archived copy exists stays reserved, so old hrefs never point at an unrelated memory.
    return any(os.path.lexists(root / "archive" / year / candidate) for year in archive_years)
