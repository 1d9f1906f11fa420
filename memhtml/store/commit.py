"""Committing exactly our own paths, without touching the user's staging area.

The tree is built in a private index seeded from HEAD (or spliced, `store/treesplice.py`), committed
with `commit-tree`, and published with `update-ref HEAD <new> <old>` as a compare-and-swap, while git's
index lock is held (`store/gitindex.py`); under it the real index entries of just our paths are brought
in line first, and put back if the commit does not land. The compare-and-swap is the write's one
commit boundary: before it nothing is stored and a signal interrupts; once it returns the commit has
landed, and nothing undoes it (`store/interrupts.py`). A branch moved by someone else meanwhile is
followed (the commit is rebuilt on the new HEAD, with jittered backoff) unless that move touched our
paths, which is a write conflict. Paths and objects travel on stdin, never as arguments, so a batch of
any size fits.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final, NamedTuple

from memhtml.contracts.errors import GitFailure, LockTimeout, WriteConflict
from memhtml.html.javascript_semantics import js_flattened, js_trim, utf16_length, utf16_prefix
from memhtml.store import interrupts
from memhtml.store.gitcmd import ZERO_SHA, blob_id, git_text, head_sha, missing_object, run_git, stream_to_git
from memhtml.store.gitindex import PRIVATE_INDEX_PREFIX, EntriesInPlace, entries_put_in_place, index_locked
from memhtml.store.treesplice import spliced_tree

# How often a compare-and-swap lost to someone else's move of the branch is tried again, and the longest
# pause between two tries (jittered, doubling from `CAS_FIRST_PAUSE_SECONDS`).
CAS_ATTEMPTS: Final[int] = 8
CAS_FIRST_PAUSE_SECONDS: Final[float] = 0.01
CAS_LONGEST_PAUSE_SECONDS: Final[float] = 0.25
# Objects a transaction streams into one pack are kept reachable from a ref of this prefix until its
# commit is on the branch: a `git repack -ad` in between would otherwise delete them as unreachable.
TRANSACTION_REF_PREFIX: Final[str] = "refs/memhtml/transactions/"
SUBJECT_LIMIT: Final[int] = 72


class Staged(NamedTuple):
    """One path of a commit: `present=True` takes `data` (or, without it, the working-tree file's bytes),
    False removes the path."""

    path: str
    present: bool = True
    data: bytes | None = None


# From this many blobs on, objects go into one pack through `git fast-import` instead of one loose
# object file each: ten thousand loose objects cost seconds, one pack a fraction of that.
PACK_THRESHOLD: Final[int] = 64


def commit_subject(op: str, text: str) -> str:
    """`memhtml(<op>): <text>`: whitespace flattened, capped at 72 UTF-16 units with `…`, never empty."""
    flattened = js_flattened(text)
    if not flattened:
        flattened = "(untitled)"
    if utf16_length(flattened) > SUBJECT_LIMIT:
        flattened = js_trim(utf16_prefix(flattened, SUBJECT_LIMIT - 1)) + "…"
    return f"memhtml({op}): {flattened}"


def commit_message(subject: str, trailers: Sequence[tuple[str, str | None]] = ()) -> str:
    """The message bytes `git commit -m <subject> --trailer ...` would produce; empty values are omitted."""
    flat = [(key, js_flattened(value)) for key, value in trailers if value]
    lines = [f"{key}: {value}" for key, value in flat if value]
    if not lines:
        return subject + "\n"
    return subject + "\n\n" + "\n".join(lines) + "\n"


class Landed(NamedTuple):
    """A commit on the branch, the index records of its paths, and whether the user's index now shows
    those paths as committed."""

    sha: str
    records: bytes
    created: bool = True  # False: HEAD already held exactly these contents, nothing was committed
    index_synced: bool = True


def head_commit_and_tree(root: Path) -> tuple[str | None, str | None]:
    """HEAD's commit and the tree it names; (None, None) on an unborn branch. A HEAD whose commit git
    cannot read is a corrupt repository, never an empty one (a missing tree is found where it is read:
    `spliced_tree`, `read-tree`)."""
    completed = run_git(root, ["log", "-1", "--format=%H %T", "HEAD", "--"], ok_statuses=(0, 128))
    fields = completed.stdout.decode().split()
    if completed.returncode == 0 and len(fields) == 2:
        return fields[0], fields[1]
    head = head_sha(root)
    if head is not None:
        raise missing_object(root, f"HEAD's commit {head}")
    return None, None


def sweep_private_indexes(git_dir: Path) -> None:
    """Remove private index files left by a killed writer; call only while holding the write lock."""
    for leftover in git_dir.glob(f"{PRIVATE_INDEX_PREFIX}*"):
        leftover.unlink(missing_ok=True)


def leftover_transaction_refs(git_dir: Path) -> list[str]:
    """Refs of transactions whose writer died before removing them (loose or packed); call only while
    holding the write lock, when no live transaction has one."""
    found: list[str] = []
    loose = git_dir / TRANSACTION_REF_PREFIX
    if loose.is_dir():
        found += [TRANSACTION_REF_PREFIX + entry.name for entry in loose.iterdir() if entry.is_file()]
    try:
        packed = (git_dir / "packed-refs").read_text("utf-8", "replace")
    except OSError:
        packed = ""
    if TRANSACTION_REF_PREFIX in packed:
        for line in packed.splitlines():
            name = line.partition(" ")[2]
            if name.startswith(TRANSACTION_REF_PREFIX) and name not in found:
                found.append(name)
    return found


def drop_transaction_ref(root: Path, ref: str) -> None:
    """Let go of a transaction's objects: its commit is on the branch, or it stored nothing."""
    run_git(root, ["update-ref", "-d", ref], ok_statuses=(0, 1))


def commit_paths(
    root: Path,
    git_dir: Path,
    staged: Sequence[Staged],
    message: str,
    records: bytes | None = None,
    *,
    planned_on: str | None = None,
) -> Landed:
    """Commit `staged` on top of HEAD as one commit and bring the user's index in line with it.

    Every failure precedes the compare-and-swap. `planned_on` is the HEAD the caller decided its
    changes against: a branch moved since (by anyone) is committed on only if none of our paths changed
    on the way, else the write conflicts. If HEAD already holds exactly these contents, nothing is
    committed and HEAD is answered. Once this returns, the commit is on the branch.
    """
    if records is None:
        records = index_records(root, staged)
    subject = message.split("\n", 1)[0]
    pause = CAS_FIRST_PAUSE_SECONDS
    # Git's index lock is taken just before the first compare-and-swap, so someone else's `git commit`
    # waits only for the swap; once taken it is kept, so a swap lost to such a commit is tried again on
    # a HEAD that no `git commit` can move meanwhile. Our entries go into the user's index before the
    # branch moves, not after: a `git commit` reads HEAD before it reads the index, so one that finds
    # our commit on the branch finds our entries too (else it could commit the index from before them,
    # on top of our commit, and so delete the memory), and one that read HEAD before cannot move it.
    lost_to = LostSwap(ref_locked=False)
    placed: EntriesInPlace | None = None
    landed = False
    with contextlib.ExitStack() as index_held:
        try:
            for attempt in range(1, CAS_ATTEMPTS + 1):
                parent, commit = _commit_on_head(root, git_dir, records, message, planned_on)
                if attempt == 1:
                    index_held.enter_context(index_locked(git_dir))
                    placed = _entries_placed(root, git_dir, records, create=parent is None)
                    if head_sha(root) != parent:
                        continue  # moved while the lock was awaited: built again on a HEAD that holds still
                if commit is None:  # HEAD already holds exactly these contents
                    assert parent is not None
                    landed = True
                    return Landed(parent, records, created=False, index_synced=placed is not None)
                lost = _swapped(root, subject, commit, parent)
                if lost is None:
                    landed = True
                    return Landed(commit, records, index_synced=placed is not None)
                lost_to = lost
                time.sleep(pause * (0.5 + random.random()))
                pause = min(pause * 2, CAS_LONGEST_PAUSE_SECONDS)
        finally:
            if placed is not None:
                placed.keep() if landed else placed.put_back()
    if lost_to.ref_locked:
        raise LockTimeout(
            f"another git process held the branch's ref lock through {CAS_ATTEMPTS} tries; nothing was written",
            ["retry the same command", f"memhtml doctor --fix --repo {root}  # removes a ref lock no git holds"],
        )
    raise WriteConflict(
        f"write conflict: the branch kept moving under this write ({CAS_ATTEMPTS} tries); nothing was written",
        ["retry the same command", f"git -C {root} log -3 --format='%h %s'"],
        retryable=True,
    )


def _commit_on_head(
    root: Path, git_dir: Path, records: bytes, message: str, planned_on: str | None
) -> tuple[str | None, str | None]:
    """HEAD, and the commit of `records` on top of it (None when HEAD already holds exactly them)."""
    parent, parent_tree = head_commit_and_tree(root)
    if planned_on is not None and parent != planned_on:
        _refuse_moved_paths(root, planned_on, parent, records)
    tree = spliced_tree(root, parent_tree, records) if parent_tree is not None else None
    if tree is None:
        tree = _tree_with(root, git_dir, parent, records)
    if parent is not None and tree == parent_tree:
        return parent, None
    parents = ["-p", parent] if parent else []
    return parent, git_text(root, ["commit-tree", tree, *parents, "-F", "-"], stdin=message.encode("utf-8"))


class LostSwap(NamedTuple):
    """Why a compare-and-swap did not move the branch: another process moved it first, or held its ref lock."""

    ref_locked: bool


def _swapped(root: Path, subject: str, commit: str, parent: str | None) -> LostSwap | None:
    """Move the branch from `parent` to `commit`, the commit boundary: signals wait until git answers,
    so git is never killed halfway. None once the branch holds `commit` (even when git died after moving
    it); why it does not otherwise, when trying again can help. Any other failure of git is raised."""
    with interrupts.held():
        try:
            run_git(root, ["update-ref", "-m", subject, "HEAD", commit, parent or ZERO_SHA])
        except GitFailure as failure:
            if head_sha(root) == commit:  # git died after the move (a Ctrl-C reaches it too)
                interrupts.commit_landed()
                return None
            if not failure.retryable:
                raise
            return LostSwap(ref_locked=failure.lock_held)
        interrupts.commit_landed()
    return None


def _entries_placed(root: Path, git_dir: Path, records: bytes, *, create: bool) -> EntriesInPlace | None:
    """Our entries in the user's index, or None when they could not be put there; never raises, since an
    index git refuses must not stop the commit (the answer says the index is not in line)."""
    try:
        return entries_put_in_place(root, git_dir, records, create=create)
    except Exception:
        return None


def _refuse_moved_paths(root: Path, planned_on: str, head: str | None, records: bytes) -> None:
    """The branch moved since the caller planned on `planned_on`: a conflict if the move touched a path
    of ours (our plan read those paths there), nothing otherwise."""
    ours = {record.partition(b"\t")[2] for record in records.split(b"\0") if record}
    moved = b""
    if head is not None:
        moved = run_git(root, ["diff-tree", "-r", "-z", "--name-only", "--no-renames", planned_on, head]).stdout
    touched = sorted(path.decode("utf-8", "surrogateescape") for path in moved.split(b"\0") if path in ours)
    if head is None or touched:
        shown = ", ".join(touched[:3]) if touched else "the branch"
        raise WriteConflict(
            f"write conflict on {shown}: another commit changed it while this write was made; nothing was written",
            ["retry the same command (it plans again on the new HEAD)", f"git -C {root} log -3 --stat"],
            retryable=True,
        )


def _tree_with(root: Path, git_dir: Path, parent: str | None, records: bytes) -> str:
    """The tree of `parent` with `records` applied, built in a private index (the user's is untouched)."""
    private_index = git_dir / f"{PRIVATE_INDEX_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
    env = {"GIT_INDEX_FILE": str(private_index)}
    try:
        try:
            run_git(root, ["read-tree", parent] if parent else ["read-tree", "--empty"], env=env)
        except GitFailure as failure:
            # Reading a commit's trees into an index of our own fails only on an object git cannot read.
            if type(failure) is GitFailure:
                raise missing_object(root, f"a tree of HEAD ({parent})") from failure
            raise
        run_git(root, ["update-index", "-z", "--index-info"], stdin=records, env=env)
        return git_text(root, ["write-tree"], env=env)
    finally:
        private_index.unlink(missing_ok=True)


def write_blobs(root: Path, blobs: Sequence[bytes], paths: Sequence[str], *, keep_as: str | None = None) -> list[str]:
    """Store `blobs` (just written to `paths` in the working tree) as git objects; return their ids.

    The ids are computed here as git does (`blob_id`). A few blobs are hashed from their files as loose
    objects, and a file that no longer holds its bytes is refused rather than committed; many go into
    one pack straight from memory, with a commit holding them all on the ref `keep_as` (made by the same
    `fast-import`, which keeps its pack from removal until that ref is written), so no repack can delete
    them before the branch refers to them. Loose objects need no such ref: a repack never removes a
    loose object that no pack holds.
    """
    shas = [blob_id(data) for data in blobs]
    if len(blobs) < PACK_THRESHOLD:
        listing = "".join(path + "\n" for path in paths).encode("utf-8")
        stored = git_text(root, ["hash-object", "-w", "--no-filters", "--stdin-paths"], stdin=listing).split("\n")
        if stored != shas:
            raise GitFailure("a file changed on disk while it was being committed; nothing was committed", [])
        return shas

    def stream() -> Iterator[bytes]:
        yield b"feature done\n"
        for number, data in enumerate(blobs, 1):
            yield b"blob\nmark :%d\ndata %d\n" % (number, len(data)) + data + b"\n"
        if keep_as is not None:
            yield b"commit %s\ncommitter memhtml <memhtml> 0 +0000\ndata 0\n" % keep_as.encode()
            yield b"".join(b"M 100644 :%d %d\n" % (number, number) for number in range(1, len(blobs) + 1))
        yield b"done\n"

    stream_to_git(root, ["fast-import", "--quiet", "--done"], stream())
    return shas


def index_records(root: Path, staged: Sequence[Staged], *, keep_as: str | None = None) -> bytes:
    """`update-index --index-info` records, with every blob written first (one streamed git call);
    `keep_as` as `write_blobs` takes it."""
    from_disk = [entry.path for entry in staged if entry.present and entry.data is None]
    blob_for: dict[str, str] = {}
    if from_disk:
        listing = "".join(path + "\n" for path in from_disk).encode("utf-8")
        output = git_text(root, ["hash-object", "-w", "--no-filters", "--stdin-paths"], stdin=listing)
        blob_for.update(zip(from_disk, output.split("\n"), strict=True))
    in_memory = [(entry.path, entry.data) for entry in staged if entry.present and entry.data is not None]
    if in_memory:
        paths = [path for path, _ in in_memory]
        written = write_blobs(root, [data for _, data in in_memory], paths, keep_as=keep_as)
        blob_for.update(zip(paths, written, strict=True))
    records = []
    for entry in staged:
        if entry.present:
            records.append(f"100644 {blob_for[entry.path]}\t{entry.path}")
        else:
            records.append(f"0 {ZERO_SHA}\t{entry.path}")
    return "".join(record + "\0" for record in records).encode("utf-8")
