"""What the store holds, read for a health check: every file under the buckets at HEAD and in the
working tree (memory-shaped or not), and what interrupted processes left in `.git`.

The write path never looks at the whole tree; `doctor` must, so these listings stream from one git
call each and leave blob contents to be read in slices.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterable, Iterator
from typing import Final, NamedTuple

from memhtml.store.gitcmd import head_from_ref_files, run_git
from memhtml.store.gitread import SYMLINK_MODE, GitCorpusReader, status_records, tree_blobs
from memhtml.store.lock import LOCK_FILENAME
from memhtml.store.recovery import pending_journals
from memhtml.store.repository import Store

# git's own lock files are held for milliseconds; one this old belongs to a git that died.
STALE_GIT_LOCK_SECONDS: Final[float] = 300.0
BLOB_SLICE: Final[int] = 2000
_GIT_LOCKS: Final[tuple[str, ...]] = ("index.lock", "HEAD.lock", "packed-refs.lock")


class BucketFile(NamedTuple):
    """One file under a bucket: its blob id (HEAD's, or the working tree's when it differs) and where
    that version lives."""

    path: str
    blob: str
    in_worktree_only: bool  # an uncommitted version (modified or untracked), read from disk
    symlink: bool = False


class LeftoverLock(NamedTuple):
    """A lock file in `.git` nobody holds: a killed git (or writer) left it, and it blocks the next one."""

    name: str
    age_seconds: float


class BucketListing(NamedTuple):
    files: list[BucketFile]
    deleted: frozenset[str]  # committed paths gone from the working tree

    @property
    def uncommitted(self) -> frozenset[str]:
        """Every path whose working-tree state differs from HEAD (changed, untracked or deleted)."""
        return frozenset(item.path for item in self.files if item.in_worktree_only) | self.deleted


def bucket_files(store: Store) -> BucketListing:
    """Every file under the buckets as the working tree holds it: HEAD's blob for clean paths, the disk
    copy for modified or untracked ones (its blob id is known once it is read); deleted paths apart."""
    files = {
        path: BucketFile(path, sha, False, symlink=mode == SYMLINK_MODE)
        for path, mode, sha in tree_blobs(store.root, "HEAD")
    }
    deleted: set[str] = set()
    for code, path in status_records(store.root):
        target = store.root / path
        if "D" in code and not os.path.lexists(target):
            deleted.add(path)
            files.pop(path, None)
        elif os.path.lexists(target):
            files[path] = BucketFile(path, "", True, symlink=target.is_symlink())
    return BucketListing(sorted(files.values(), key=lambda item: item.path), frozenset(deleted))


def file_contents(store: Store, files: Iterable[BucketFile]) -> Iterator[list[tuple[BucketFile, bytes | None]]]:
    """The bytes of `files` in slices of BLOB_SLICE (committed blobs in one `cat-file` per slice, working
    tree copies hashed and read without following a link); None for a file that cannot be read or is a
    symlink. A working-tree copy comes back with its blob id."""
    reader = GitCorpusReader(store.root)
    batch: list[BucketFile] = []
    for item in files:
        batch.append(item)
        if len(batch) >= BLOB_SLICE:
            yield _read_slice(reader, batch)
            batch = []
    if batch:
        yield _read_slice(reader, batch)


def _read_slice(reader: GitCorpusReader, batch: list[BucketFile]) -> list[tuple[BucketFile, bytes | None]]:
    committed = reader.blobs(item.blob for item in batch if not item.in_worktree_only and not item.symlink)
    on_disk = reader.worktree_blobs([item.path for item in batch if item.in_worktree_only and not item.symlink])
    answered: list[tuple[BucketFile, bytes | None]] = []
    for item in batch:
        if item.symlink:
            answered.append((item, None))
        elif item.in_worktree_only:
            blob, content = on_disk.get(item.path, ("", None))
            answered.append((item._replace(blob=blob), content))
        else:
            answered.append((item, committed.get(item.blob)))
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


class MissingObject(NamedTuple):
    """An object the repository's history refers to and does not have (or cannot read)."""

    kind: str  # blob, tree, commit, tag, or "object" when git does not say
    object_id: str


def missing_objects(store: Store) -> list[MissingObject]:
    """Every object reachable from the refs (and git's index) that the repository lacks, as
    `git fsck --connectivity-only` finds them: the objects are followed, not checked byte by byte."""
    # Git's index is judged on its own (`store.gitindex`); an unreadable one must not stop the walk.
    no_index = {"GIT_INDEX_FILE": str(store.git_dir / "memhtml-no-index")}
    arguments = ["fsck", "--connectivity-only", "--no-dangling", "--no-progress"]
    completed = run_git(store.root, arguments, env=no_index, ok_statuses=tuple(range(256)))
    found: dict[str, MissingObject] = {}
    for line in (completed.stdout + completed.stderr).decode("utf-8", "replace").splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "missing":
            found.setdefault(words[2], MissingObject(words[1], words[2]))
    if completed.returncode != 0 and not found:
        # git could not walk the history at all (HEAD's own commit unreadable): one finding says so.
        head = head_from_ref_files(store.git_dir) or "HEAD"
        found[head] = MissingObject("commit", head)
    return sorted(found.values())
