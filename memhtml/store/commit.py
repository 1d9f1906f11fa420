"""Committing exactly our own paths, without touching the user's staging area.

The tree is built in a private index seeded from HEAD, committed with `commit-tree`, and published
with `update-ref HEAD <new> <old>` as a compare-and-swap. Only afterwards are the real index entries
of our paths brought in line. Paths and objects travel on stdin, never as arguments, so a batch of
any size fits.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final, NamedTuple

from memhtml.contracts.errors import GitFailure
from memhtml.html.jscompat import js_flattened, js_trim, utf16_length, utf16_prefix
from memhtml.store.gitcmd import ZERO_SHA, blob_id, git_text, run_git, stream_to_git
from memhtml.store.treesplice import spliced_tree

PRIVATE_INDEX_PREFIX: Final[str] = "memhtml-index-"
CAS_ATTEMPTS: Final[int] = 3
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


def path_in_head(root: Path, path: str) -> bool:
    """Whether HEAD's tree holds `path` (used to tell a landed commit from one that never happened)."""
    completed = run_git(root, ["cat-file", "-e", f"HEAD:{path}"], ok_statuses=(0, 1, 128))
    return completed.returncode == 0


class Landed(NamedTuple):
    """A commit on the branch, and the index records of its paths (for the user's index)."""

    sha: str
    records: bytes
    created: bool = True  # False: HEAD already held exactly these contents, nothing was committed


def head_commit_and_tree(root: Path) -> tuple[str | None, str | None]:
    completed = run_git(root, ["log", "-1", "--format=%H %T", "HEAD", "--"], ok_statuses=(0, 128))
    fields = completed.stdout.decode().split()
    return (fields[0], fields[1]) if completed.returncode == 0 and len(fields) == 2 else (None, None)


def sweep_private_indexes(git_dir: Path) -> None:
    """Remove private index files left by a killed writer; call only while holding the write lock."""
    for leftover in git_dir.glob(f"{PRIVATE_INDEX_PREFIX}*"):
        leftover.unlink(missing_ok=True)


def commit_paths(
    root: Path, git_dir: Path, staged: Sequence[Staged], message: str, records: bytes | None = None
) -> Landed:
    """Commit `staged` on top of HEAD as one commit; every failure precedes the compare-and-swap.

    If another process moves the branch between our read of HEAD and our update, the commit is
    rebuilt on the new HEAD (a few times). If HEAD already holds exactly these contents, nothing is
    committed and HEAD is answered. The caller then runs `sync_real_index` outside its rollback
    scope: once the branch moved, the working-tree files belong to history.
    """
    if records is None:
        records = index_records(root, staged)
    subject = message.split("\n", 1)[0]
    for attempt in range(1, CAS_ATTEMPTS + 1):
        parent, parent_tree = head_commit_and_tree(root)
        tree = spliced_tree(root, parent_tree, records) if parent_tree is not None else None
        if tree is None:
            tree = _tree_with(root, git_dir, parent, records)
        if parent is not None and tree == parent_tree:
            return Landed(parent, records, created=False)
        parents = ["-p", parent] if parent else []
        commit = git_text(root, ["commit-tree", tree, *parents, "-F", "-"], stdin=message.encode("utf-8"))
        try:
            run_git(root, ["update-ref", "-m", subject, "HEAD", commit, parent or ZERO_SHA])
        except GitFailure as failure:
            if not failure.retryable or attempt == CAS_ATTEMPTS:
                raise
            continue
        return Landed(commit, records)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _tree_with(root: Path, git_dir: Path, parent: str | None, records: bytes) -> str:
    """The tree of `parent` with `records` applied, built in a private index (the user's is untouched)."""
    private_index = git_dir / f"{PRIVATE_INDEX_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
    env = {"GIT_INDEX_FILE": str(private_index)}
    try:
        run_git(root, ["read-tree", parent] if parent else ["read-tree", "--empty"], env=env)
        run_git(root, ["update-index", "-z", "--index-info"], stdin=records, env=env)
        return git_text(root, ["write-tree"], env=env)
    finally:
        private_index.unlink(missing_ok=True)


def write_blobs(root: Path, blobs: Sequence[bytes], paths: Sequence[str]) -> list[str]:
    """Store `blobs` (just written to `paths` in the working tree) as git objects; return their ids.

    The ids are computed here as git does (`blob_id`). A few
    blobs are hashed from their files as loose objects, and a file that no longer holds its bytes is
    refused rather than committed; many go into one pack straight from memory.
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
        for data in blobs:
            yield b"blob\ndata %d\n" % len(data) + data + b"\n"
        yield b"done\n"

    stream_to_git(root, ["fast-import", "--quiet", "--done"], stream())
    return shas


def sync_real_index(root: Path, records: bytes) -> bool:
    """Give the user's index exactly the committed blobs of our paths, nothing else; False if git refused.

    An entry must also carry its file's stat data: without it (what `update-index --index-info`
    records) every later `git status` reads and hashes the file again, and ours never keep what they
    learn (optional locks are off). So the entries are written from the files themselves whenever that
    records exactly the committed blobs (`_synced_from_files`). Otherwise the committed blob is recorded
    as is (not re-hashed from the file), so a clean filter can never make our own path look modified.
    """
    with contextlib.suppress(GitFailure):  # whatever git refused there, the records are tried as is
        if _synced_from_files(root, records):
            return True
    try:
        run_git(root, ["update-index", "-z", "--index-info"], stdin=records)
    except GitFailure:
        return False
    return True


def _synced_from_files(root: Path, records: bytes) -> bool:
    """Write `records` into the user's index with one `update-index --add --remove --info-only` (and
    `--replace`, as `--index-info` replaces an entry a new path conflicts with), which
    takes each blob id and the stat data from the file, when the ids are sure to be the committed ones:
    every present path a plain, non-executable file whose bytes, cleaned as git cleans them (asked of
    `hash-object`, which writes nothing and leaves the index alone), are its committed blob, and every
    removed path gone from the disk. False, with nothing written, when one of them is not so.

    One index write: a second one (`git add --refresh` after `--index-info`) cost a write ≈110 ms at
    100k files, where each write of git's index is ≈70–90 ms."""
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
    )
    return True


def index_records(root: Path, staged: Sequence[Staged]) -> bytes:
    """`update-index --index-info` records, with every blob written first (one streamed git call)."""
    from_disk = [entry.path for entry in staged if entry.present and entry.data is None]
    blob_for: dict[str, str] = {}
    if from_disk:
        listing = "".join(path + "\n" for path in from_disk).encode("utf-8")
        output = git_text(root, ["hash-object", "-w", "--no-filters", "--stdin-paths"], stdin=listing)
        blob_for.update(zip(from_disk, output.split("\n"), strict=True))
    in_memory = [(entry.path, entry.data) for entry in staged if entry.present and entry.data is not None]
    if in_memory:
        paths = [path for path, _ in in_memory]
        blob_for.update(zip(paths, write_blobs(root, [data for _, data in in_memory], paths), strict=True))
    records = []
    for entry in staged:
        if entry.present:
            records.append(f"100644 {blob_for[entry.path]}\t{entry.path}")
        else:
            records.append(f"0 {ZERO_SHA}\t{entry.path}")
    return "".join(record + "\0" for record in records).encode("utf-8")
