"""The single-memory write transaction: dedupe, claim a free path, write atomically, commit that path.

Everything between the dedupe question and the branch update runs under the store's write lock, so
two writers can neither store the same fact twice nor claim one path. Until the commit lands, any
failure removes what this transaction created, leaving the tree byte-identical.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memhtml.contracts.errors import StorageFailure, WriteConflict
from memhtml.contracts.paths import MAX_COLLISION_ORDINAL, memory_filename
from memhtml.store.commit import Staged, commit_paths, path_in_head, sync_real_index
from memhtml.store.lock import write_lock
from memhtml.store.repository import Store

# Answers "which active, non-task memory has this content hash?"; the index answers it once it exists.
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


def write_memory(
    store: Store, memory: PlacedMemory, lookup: ActiveHashLookup, commit_message: str
) -> StoredWrite:
    """Store `memory` as one commit, or answer the active memory that already says the same thing."""
    with write_lock(store.git_dir):
        if memory.memory_type != "task":
            existing = lookup(store, memory.content_hash)
            if existing is not None:
                return StoredWrite("unchanged", existing, None, True)
        if memory.explicit_path is not None:
            path = memory.explicit_path
            if (store.root / path).exists() or (store.root / path).is_symlink():
                raise WriteConflict(
                    f"write conflict on {path}: a memory already occupies this path; nothing was written",
                    [f"memhtml read {path}", "memhtml write … without --path (placement picks a free path)"],
                )
        else:
            path = claim_free_path(store.root, memory.directory, memory.slug, memory.date_prefix, set())
        created_directories = create_file_exclusively(store.root, path, memory.file_text)
        try:
            sha = commit_paths(store.root, store.git_dir, [Staged(path)], commit_message)
        except BaseException:
            # An interrupt can arrive after the branch moved; a committed file must never be removed.
            if not path_in_head(store.root, path):
                remove_created(store.root, [path], created_directories)
            raise
        index_synced = sync_real_index(store.root, [path])
    return StoredWrite("written", path, sha, index_synced)


def claim_free_path(root: Path, directory: str, slug: str, date_prefix: str | None, claimed: set[str]) -> str:
    """The first free `directory/<name>` by collision ordinal; archived copies of a path also occupy it."""
    archive_years = _archive_years(root)
    for ordinal in range(1, MAX_COLLISION_ORDINAL + 1):
        candidate = f"{directory}/{memory_filename(slug, ordinal, date_prefix)}"
        if candidate in claimed or _occupied(root, candidate, archive_years):
            continue
        claimed.add(candidate)
        return candidate
    raise StorageFailure(f"no free path for `{slug}` in {directory} after {MAX_COLLISION_ORDINAL} tries", [])


def create_file_exclusively(root: Path, path: str, text: str) -> list[Path]:
    """Write `path` atomically without ever replacing an existing file; returns directories it created."""
    target = root / path
    created = _make_parents(root, target.parent)
    temporary = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with temporary.open("wb") as handle:
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


def _make_parents(root: Path, directory: Path) -> list[Path]:
    missing: list[Path] = []
    current = directory
    while current != root and not current.exists():
        missing.append(current)
        current = current.parent
    for item in reversed(missing):
        item.mkdir()
    return missing


def _archive_years(root: Path) -> list[str]:
    try:
        return [
            entry.name for entry in os.scandir(root / "archive") if entry.is_dir() and entry.name.isdigit()
        ]
    except FileNotFoundError:
        return []


def _occupied(root: Path, candidate: str, archive_years: list[str]) -> bool:
    if os.path.lexists(root / candidate):
        return True
    # A path whose archived copy exists stays reserved, so old hrefs never point at an unrelated memory.
    return any(os.path.lexists(root / "archive" / year / candidate) for year in archive_years)
