"""What the store holds, read for a health check: every file under the buckets at HEAD and in the
working tree (memory-shaped or not), and what interrupted processes left in `.git`.

The write path never looks at the whole tree; `doctor` must, so these listings stream from one git
call each and leave blob contents to be read in slices.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from memhtml.contracts.vocabulary import PARA_BUCKETS
from memhtml.store.gitcmd import run_git
from memhtml.store.gitread import GitCorpusReader
from memhtml.store.lock import LOCK_FILENAME
from memhtml.store.recovery import pending_journals
from memhtml.store.repository import Store

# git's own lock files are held for milliseconds; one this old belongs to a git that died.
STALE_GIT_LOCK_SECONDS: Final[float] = 300.0
BLOB_SLICE: Final[int] = 2000
_GIT_LOCKS: Final[tuple[str, ...]] = ("index.lock", "HEAD.lock", "packed-refs.lock")
_SYMLINK_MODE: Final[str] = "120000"


@dataclass(frozen=True, slots=True)
class SurveyedFile:
    """One file under a bucket: its blob id (HEAD's, or the working tree's when it differs) and where
    that version lives."""

    path: str
    blob: str
    in_worktree_only: bool  # an uncommitted version (modified or untracked), read from disk
    symlink: bool = False


@dataclass(frozen=True, slots=True)
class LeftoverLock:
    """A lock file in `.git` nobody holds: a killed git (or writer) left it, and it blocks the next one."""

    name: str
    age_seconds: float


@dataclass(frozen=True, slots=True)
class Survey:
    files: list[SurveyedFile]
    deleted: frozenset[str]  # committed paths gone from the working tree

    @property
    def uncommitted(self) -> frozenset[str]:
        """Every path whose working-tree state differs from HEAD (changed, untracked or deleted)."""
        return frozenset(item.path for item in self.files if item.in_worktree_only) | self.deleted


def bucket_files(store: Store) -> Survey:
    """Every file under the buckets as the working tree holds it: HEAD's blob for clean paths, a hash of
    the disk copy for modified or untracked ones; deleted paths are listed apart."""
    listing = run_git(store.root, ["ls-tree", "-r", "-z", "--full-tree", "HEAD", "--", *PARA_BUCKETS]).stdout
    files: dict[str, SurveyedFile] = {}
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, sha = meta.decode().split(" ")
        if kind == "blob":
            path = name.decode("utf-8", "surrogateescape")
            files[path] = SurveyedFile(path, sha, False, symlink=mode == _SYMLINK_MODE)
    changed, deleted = _worktree_changes(store)
    for path in deleted:
        files.pop(path, None)
    on_disk = [path for path in changed if (store.root / path).is_file() or (store.root / path).is_symlink()]
    symlinks = {path for path in on_disk if (store.root / path).is_symlink()}
    regular = [path for path in on_disk if path not in symlinks]
    for path in symlinks:
        files[path] = SurveyedFile(path, "", True, symlink=True)
    if regular:
        stdin = "".join(path + "\n" for path in regular).encode("utf-8", "surrogateescape")
        hashed = run_git(store.root, ["hash-object", "--no-filters", "--stdin-paths"], stdin=stdin).stdout
        for path, object_id in zip(regular, hashed.decode().split(), strict=True):
            files[path] = SurveyedFile(path, object_id, True)
    return Survey(sorted(files.values(), key=lambda item: item.path), frozenset(deleted))


def _worktree_changes(store: Store) -> tuple[list[str], set[str]]:
    output = run_git(
        store.root,
        ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", *PARA_BUCKETS],
    ).stdout
    changed: list[str] = []
    deleted: set[str] = set()
    for record in output.split(b"\0"):
        if len(record) < 4:
            continue
        code = record[:2].decode()
        path = record[3:].decode("utf-8", "surrogateescape")
        if code == "!!":
            continue
        if "D" in code and not (store.root / path).exists():
            deleted.add(path)
        else:
            changed.append(path)
    return changed, deleted


def file_contents(store: Store, files: Iterable[SurveyedFile]) -> Iterator[list[tuple[SurveyedFile, bytes | None]]]:
    """The bytes of `files` in slices of BLOB_SLICE (committed blobs in one `cat-file` per slice, working
    tree copies from disk); None for a file that cannot be read or is a symlink (never followed)."""
    reader = GitCorpusReader(store.root)
    batch: list[SurveyedFile] = []
    for item in files:
        batch.append(item)
        if len(batch) >= BLOB_SLICE:
            yield _read_slice(store, reader, batch)
            batch = []
    if batch:
        yield _read_slice(store, reader, batch)


def _read_slice(
    store: Store, reader: GitCorpusReader, batch: list[SurveyedFile]
) -> list[tuple[SurveyedFile, bytes | None]]:
    committed = reader.blobs(item.blob for item in batch if not item.in_worktree_only and not item.symlink)
    answered: list[tuple[SurveyedFile, bytes | None]] = []
    for item in batch:
        content: bytes | None = None
        if item.symlink:
            content = None
        elif item.in_worktree_only:
            with contextlib.suppress(OSError):
                descriptor = os.open(store.root / item.path, os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(descriptor, "rb") as handle:
                    content = handle.read()
        else:
            content = committed.get(item.blob)
        answered.append((item, content))
    return answered


def interrupted_writes(store: Store) -> list[str]:
    """Journals of memhtml writers that died mid-transaction (the next writer replays them)."""
    return [journal.name for journal in pending_journals(store.git_dir)]


def leftover_git_locks(store: Store, now: float | None = None) -> list[LeftoverLock]:
    """git lock files older than STALE_GIT_LOCK_SECONDS: every later git write refuses while they exist."""
    moment = time.time() if now is None else now
    found: list[LeftoverLock] = []
    for name in (*_GIT_LOCKS, *_branch_lock(store)):
        try:
            age = moment - (store.git_dir / name).stat().st_mtime
        except OSError:
            continue
        if age >= STALE_GIT_LOCK_SECONDS:
            found.append(LeftoverLock(name, round(age, 1)))
    return found


def _branch_lock(store: Store) -> list[str]:
    try:
        head = (store.git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return []
    return [head.removeprefix("ref: ") + ".lock"] if head.startswith("ref: refs/") else []


def remove_git_lock(store: Store, lock: LeftoverLock) -> bool:
    """Remove a leftover git lock, re-checking its age first; False when it changed or went away."""
    target = store.git_dir / lock.name
    try:
        if time.time() - target.stat().st_mtime < STALE_GIT_LOCK_SECONDS:
            return False
        target.unlink()
    except OSError:
        return False
    return True


def write_lock_held(store: Store) -> bool:
    """Whether a memhtml writer holds the store's write lock right now (a flock, so never stale)."""
    try:
        descriptor = os.open(store.git_dir / LOCK_FILENAME, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False
