"""The user's git index (the staging area): held while one of our commits lands, and brought in line
with it for exactly our paths just before the branch moves.

A plain `git commit` records what the index holds. Were the index still without a memory we just
committed when someone's `git commit` runs, that commit would delete the memory from the branch. So the
writer takes git's own lock on the index (`index.lock`, created exclusively, as every git command that
writes the index does) before it reads the HEAD it commits on, and keeps it until our paths' entries are
written: a `git commit` that starts meanwhile fails at once ("index.lock exists") instead of undoing the
memory, and one already running is waited for. A `git commit` reads HEAD and the index before it takes
the lock, so the entries are in place before the branch moves: one that read HEAD after our commit read
our entries too. They are written into a copy of the index (`GIT_INDEX_FILE`), renamed into place while
the lock is held; the index as it was stays linked aside until the commit has landed, and is put back
when it does not.

The lock file holds `LOCK_MARK` and the writer's pid, so the next holder of the store's write lock can
tell one left by a writer that was killed (only writers create it, and only while holding the write lock)
from one a git process holds, and remove it.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final, NamedTuple

from memhtml.contracts.errors import DamagedFile, GitFailure, LockTimeout, MemhtmlError, StorageFailure
from memhtml.store.gitcmd import blob_id, git_text, run_git

LOCK_NAME: Final[str] = "index.lock"
LOCK_MARK: Final[bytes] = b"memhtml writer "
# Git holds its index lock for the length of one command (a `git commit`, an `add`); a lock held longer
# than this is not going to be let go soon.
INDEX_LOCK_WAIT_SECONDS: Final[float] = 10.0
# The prefix of the private copies of the index; the write lock's holder sweeps leftovers away.
PRIVATE_INDEX_PREFIX: Final[str] = "memhtml-index-"


@contextlib.contextmanager
def index_locked(git_dir: Path, wait_seconds: float | None = None) -> Iterator[None]:
    """Hold git's `index.lock` for the block, waiting (jittered backoff, `INDEX_LOCK_WAIT_SECONDS` unless
    told) while a git process holds it."""
    if wait_seconds is None:
        wait_seconds = INDEX_LOCK_WAIT_SECONDS
    lock = git_dir / LOCK_NAME
    deadline = time.monotonic() + wait_seconds
    delay = 0.005
    while True:
        try:
            descriptor = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            break
        except FileExistsError:
            if time.monotonic() >= deadline:
                raise index_lock_refusal(git_dir, wait_seconds) from None
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.1)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(LOCK_MARK + str(os.getpid()).encode() + b"\n")
        yield
    finally:
        lock.unlink(missing_ok=True)


def index_lock_refusal(git_dir: Path, wait_seconds: float) -> LockTimeout:
    lock = git_dir / LOCK_NAME
    return LockTimeout(
        f"another git process has held the git index (.git/{LOCK_NAME}) for over {wait_seconds:.0f} s; "
        "nothing was written",
        [
            "retry the same command once the other git command has finished",
            f"memhtml doctor --fix --repo {git_dir.parent}  # removes a lock no git process holds",
            f"ls -l {lock}",
        ],
    )


def remove_writers_leftover_lock(git_dir: Path) -> bool:
    """Remove an `index.lock` that a killed memhtml writer left; call only while holding the store's
    write lock (no live writer can own one then). One git holds is never touched."""
    lock = git_dir / LOCK_NAME
    try:
        with lock.open("rb") as handle:
            head = handle.read(len(LOCK_MARK))
    except OSError:
        return False
    if head != LOCK_MARK:
        return False
    lock.unlink(missing_ok=True)
    return True


def sync_index_entries(root: Path, git_dir: Path, records: bytes, *, create: bool = False) -> bool:
    """Give the user's index exactly the committed blobs of our paths, nothing else; the caller holds
    `index_locked`. False when git refused, or when there is no index to bring in line (`create`: a
    store's first commit, whose index is made from these entries alone).

    An index that does not exist is left so: entries for our paths alone would read as every other
    memory staged for deletion, and a later `git commit` would delete them (`doctor --fix` rebuilds
    the index from HEAD)."""
    placed = entries_put_in_place(root, git_dir, records, create=create)
    if placed is None:
        return False
    placed.keep()
    return True


class EntriesInPlace:
    """The user's index with our paths' entries, put in place before the commit that holds them lands;
    `put_back` restores the index as it was when that commit did not land, `keep` once it did."""

    def __init__(self, index: Path, before: Path | None) -> None:
        self.index = index
        self.before = before  # the index as it was, hard-linked aside (None: there was none)

    def keep(self) -> None:
        if self.before is not None:
            self.before.unlink(missing_ok=True)

    def put_back(self) -> None:
        with contextlib.suppress(OSError):
            if self.before is None:
                self.index.unlink(missing_ok=True)
            else:
                os.replace(self.before, self.index)


def entries_put_in_place(root: Path, git_dir: Path, records: bytes, *, create: bool = False) -> EntriesInPlace | None:
    """Write `records` into a copy of the user's index and rename it into place (the caller holds
    `index_locked`); None, with the index untouched, when git refused the entries or there is no index
    to bring in line (see `sync_index_entries`)."""
    index = git_dir / "index"
    private = git_dir / f"{PRIVATE_INDEX_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
    before: Path | None = private.with_name(private.name + ".before")
    try:
        try:
            shutil.copy2(index, private)
        except FileNotFoundError:
            if not create:
                return None
            before = None
        if not _synced(root, records, {"GIT_INDEX_FILE": str(private)}):
            return None
        if before is not None:
            os.link(index, before)
        os.replace(private, index)
    except (OSError, MemhtmlError):
        if before is not None:
            before.unlink(missing_ok=True)
        return None
    finally:
        private.unlink(missing_ok=True)
    return EntriesInPlace(index, before)


def _synced(root: Path, records: bytes, env: dict[str, str]) -> bool:
    """Write `records` into the index `env` names, with each file's stat data whenever that records
    exactly the committed blob (`_synced_from_files`), else the committed blobs as they are (never
    re-hashed from the file, so a clean filter can never make our own path look modified)."""
    with contextlib.suppress(GitFailure):  # whatever git refused there, the records are tried as is
        if _synced_from_files(root, records, env):
            return True
    try:
        run_git(root, ["update-index", "-z", "--index-info"], stdin=records, env=env)
    except GitFailure:
        return False
    return True


def _synced_from_files(root: Path, records: bytes, env: dict[str, str]) -> bool:
    """Write `records` with one `update-index --add --remove --info-only` (and `--replace`, as
    `--index-info` replaces an entry a new path conflicts with), which takes each blob id and the stat
    data from the file, when the ids are sure to be the committed ones: every present path a plain,
    non-executable file whose bytes, cleaned as git cleans them (asked of `hash-object`, which writes
    nothing), are its committed blob, and every removed path gone from the disk. False, with nothing
    written, when one of them is not so. Without the stat data every later `git status` reads and
    hashes the file again, and ours never keep what they learn (optional locks are off)."""
    present: list[tuple[str, str]] = []
    removed: list[str] = []
    for record in records.decode("utf-8", "surrogateescape").split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        mode, sha = meta.split(" ")
        if "\n" in path:
            return False  # `hash-object --stdin-paths` reads one path a line
        if mode == "0":
            removed.append(path)
        elif mode == "100644":
            present.append((path, sha))
        else:
            return False
    if any(os.path.lexists(root / path) for path in removed):
        return False
    for path, _ in present:
        try:
            found = os.lstat(root / path)
        except OSError:
            return False
        if not stat.S_ISREG(found.st_mode) or found.st_mode & 0o111:
            return False
    if present:
        listing = "".join(path + "\n" for path, _ in present).encode("utf-8", "surrogateescape")
        cleaned = git_text(root, ["hash-object", "--stdin-paths"], stdin=listing).split("\n")
        if cleaned != [sha for _, sha in present]:
            return False
    paths = [path for path, _ in present] + removed
    run_git(
        root,
        ["update-index", "-z", "--add", "--remove", "--replace", "--info-only", "--stdin"],
        stdin="".join(path + "\0" for path in paths).encode("utf-8", "surrogateescape"),
        env=env,
    )
    return True


# The buckets whose entries `doctor` holds to HEAD: the memories, not the user's other files.
_MEMORY_BUCKETS: Final[tuple[str, ...]] = ("projects", "areas", "resources", "archive")


class IndexExamination(NamedTuple):
    """How git's index stands against HEAD for the memory paths.

    `state`: "ok", "missing" (no index file: every memory reads as staged for deletion) or "damaged"
    (git cannot read it). `stale`: the records (`update-index --index-info` lines) that give HEAD's
    entry back to each memory path whose entry differs from HEAD while its file on disk is exactly HEAD's
    (or gone with HEAD's path): nobody's staged work, just an entry a write could not bring in line,
    which a plain `git commit` would turn into a deletion or a revert. A staged change of the user's (the
    entry holds what the file on disk holds) is never among them."""

    state: str
    stale: dict[str, bytes]


def examine_index(root: Path) -> IndexExamination:
    """Git's index against HEAD under the memory buckets (one `diff-index`, and the differing files read)."""
    if not (root / ".git" / "index").is_file():
        return IndexExamination("missing", {})
    arguments = ["diff-index", "--cached", "--raw", "-z", "--no-renames", "HEAD", "--", *_MEMORY_BUCKETS]
    try:
        output = run_git(root, arguments).stdout
    except DamagedFile:
        return IndexExamination("damaged", {})
    fields = output.split(b"\0")
    stale: dict[str, bytes] = {}
    for meta, name in zip(fields[0::2], fields[1::2], strict=False):
        head_mode, _, head_blob, _, status = meta.lstrip(b":").decode("ascii").split(" ")
        path = name.decode("utf-8", "surrogateescape")
        if status == "A":  # only the index has it: stale when its file is gone, as it is from HEAD
            if not os.path.lexists(root / path):
                stale[path] = f"0 {'0' * len(head_blob)}\t{path}\0".encode("utf-8", "surrogateescape")
        elif _blob_on_disk(root / path) == head_blob:
            stale[path] = f"{head_mode} {head_blob}\t{path}\0".encode("utf-8", "surrogateescape")
    return IndexExamination("ok", stale)


def _blob_on_disk(target: Path) -> str | None:
    """The blob id of the regular file at `target` (never through a link), or None."""
    try:
        if not stat.S_ISREG(os.lstat(target).st_mode):
            return None
        return blob_id(target.read_bytes())
    except OSError:
        return None


def repair_index(root: Path, git_dir: Path, examination: IndexExamination) -> int:
    """Put right what `examine_index` found, under git's index lock; returns the entries repaired. A
    damaged index is moved aside (`index.damaged-<time>`, never deleted) and, like a missing one,
    rebuilt from HEAD with every file's stat data; stale entries get HEAD's."""
    with index_locked(git_dir):
        if examination.state == "ok":
            records = b"".join(examination.stale.values())
            if records and not sync_index_entries(root, git_dir, records):
                raise StorageFailure("git refused the index entries; nothing was changed", [f"git -C {root} status"])
            return len(examination.stale)
        index = git_dir / "index"
        if examination.state == "damaged" and index.exists():
            os.replace(index, git_dir / f"index.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        private = git_dir / f"{PRIVATE_INDEX_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
        try:
            env = {"GIT_INDEX_FILE": str(private)}
            run_git(root, ["read-tree", "HEAD"], env=env)
            run_git(root, ["update-index", "-q", "--refresh"], env=env, ok_statuses=(0, 1))  # 1: files differ
            entries = len(run_git(root, ["ls-files", "-z"], env=env).stdout.split(b"\0")) - 1
            os.replace(private, index)
        finally:
            private.unlink(missing_ok=True)
        return entries
