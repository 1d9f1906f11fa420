"""Read-only git access for the index: trees, blobs, diffs and the dirty working tree, in batches.

Every read is one git process whatever the number of files (one `ls-tree`, one `cat-file --batch`,
one `diff`, one `status`), so the cost of a catch-up grows with what changed, not with the corpus; a
committed blob whose working-tree file holds its exact bytes is read from that file, with no git at all.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Final

from memhtml.contracts.corpus import DirtyEntry, TreeChange
from memhtml.contracts.errors import GitFailure
from memhtml.contracts.instants import format_instant
from memhtml.contracts.paths import is_memory_path
from memhtml.store.files import LinkedPath, blob_id, committed_bytes_on_disk, is_regular_file, read_regular_file
from memhtml.store.gitcmd import head_sha, run_git, start_git

_BUCKETS = ("projects", "areas", "resources", "archive")
SYMLINK_MODE = "120000"
# A large store's scan of its tracked files (the untracked ones are walked apart): the `git status` that
# stats every tracked file, which the index benchmark also times alone.
# Up to this many paths, or bytes of them, `dirty_among` names them to `git status`; past it, the
# buckets' status is asked (Linux allows 2 MiB of arguments).
PATHS_ASKED_LIMIT: Final[int] = 2_000
PATHS_ASKED_BYTES: Final[int] = 256 * 1024
TRACKED_STATUS: Final[tuple[str, ...]] = (
    "status",
    "--porcelain=v1",
    "-z",
    "--untracked-files=no",
    "--no-renames",
    "--",
    *_BUCKETS,
)


def tree_blobs(root: Path, commit: str, pathspec: Sequence[str] = _BUCKETS) -> Iterator[tuple[str, str, str]]:
    """(path, mode, blob id) of every blob under `pathspec` in `commit`, memory-shaped or not."""
    output = run_git(root, ["ls-tree", "-r", "-z", "--full-tree", commit, "--", *pathspec]).stdout
    for record in output.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, kind, sha = meta.decode().split(" ")
        if kind == "blob":
            yield name.decode("utf-8", "surrogateescape"), mode, sha


# Up to this many entries in git's index, one `git status` walks the working tree (both walks in turn,
# the stats on one thread); past it, the two walks run in two processes at once. See `status_records`.
ONE_WALKER_ENTRIES: Final[int] = 30_000


def status_records(root: Path, head: str | None = None, diffs: TreeDiffs | None = None) -> list[tuple[str, str]]:
    """(two-letter code, path) of every working-tree change under the buckets, untracked files listed one
    by one (`??`) after the tracked ones, ignored ones left out: what `git status --untracked-files=all`
    answers.

    The walk runs beside the command's own work (an `index update` starts it before it opens the index),
    so what it costs in CPU is taken from the command on a machine of few cores, and what it costs in
    time matters only once it outlasts that work:
    - up to `ONE_WALKER_ENTRIES` tracked files, one `status` does it all with its stats on one thread
      (`core.preloadIndex=false`): an update after one commit took less time than with two processes
      and git's stat threads, while the walk still ended well before it was needed;
    - past it, the tracked files and the untracked ones are asked of two git processes at once, git
      stats with its threads: one `status` does the two walks one after the other, each about half of
      its cost, and would become the update's last step. The untracked
      walk asks only about the directories that changed since the last one (`UntrackedWalk`).

    `head`: the HEAD the status is taken against, read before it began (read here when not given).
    `diffs`: where the walk asks which paths commits removed since its last walk (made here when not
    given), shared with the indexer that asks for the same two commits' changes.
    """
    if not index_entries_above(root, ONE_WALKER_ENTRIES):
        return _parsed_status(
            run_git(
                root,
                [
                    "-c",
                    "core.preloadIndex=false",
                    "status",
                    "--porcelain=v1",
                    "-z",
                    "--untracked-files=all",
                    "--no-renames",
                    "--",
                    *_BUCKETS,
                ],
            ).stdout
        )
    from memhtml.store.untracked import UntrackedWalk  # only a large store's scan needs it

    walk = UntrackedWalk(
        root, _BUCKETS, head_sha(root) if head is None else head, (diffs or TreeDiffs(root)).paths_moved
    )
    try:
        tracked = run_git(root, TRACKED_STATUS).stdout
    except BaseException:
        walk.finish(None)
        raise
    untracked = walk.finish(tracked)
    return [*_parsed_status(tracked), *(("??", path) for path in untracked)]


def _parsed_status(output: bytes) -> list[tuple[str, str]]:
    """The records of `git status --porcelain=v1 -z` (renames off), ignored files left out."""
    return [
        (record[:2].decode(), record[3:].decode("utf-8", "surrogateescape"))
        for record in output.split(b"\0")
        if len(record) >= 4 and record[:2] != b"!!"
    ]


def index_entries_above(root: Path, limit: int) -> bool:
    """Whether git's index of `root` lists more than `limit` entries; an index this cannot read is taken
    as large, which only chooses the walk that never becomes an update's last step."""
    entries = index_entry_count(root)
    return entries is None or entries > limit


def index_entry_count(root: Path) -> int | None:
    """How many entries git's index of `root` lists, read from its header (a signature, a version, then
    the entry count); None when there is no such index or it cannot be read."""
    try:
        with (root / ".git" / "index").open("rb") as index:
            header = index.read(12)
    except OSError:
        return None
    if len(header) < 12 or header[:4] != b"DIRC":
        return None
    return int.from_bytes(header[8:12], "big")


def committed_blobs(
    root: Path, entries: Sequence[tuple[str, str]], from_git: Callable[[Iterable[str]], dict[str, bytes]]
) -> dict[str, bytes]:
    """Blob contents of `(path, blob id)` entries: from the working tree where a file holds its blob's
    exact bytes, the rest through `from_git`."""
    contents = committed_bytes_on_disk(root, entries)
    contents.update(from_git(sha for _, sha in entries if sha not in contents))
    return contents


class TreeDiffs:
    """`git diff --raw -M` between two commits under the buckets, run at most once for each pair.

    After an update, the untracked walk's last HEAD and the index's watermark are the same commit, so
    the walk (which paths did commits remove since?) and the indexer (what changed since?) ask for the
    same diff. In a large store each run reads the large directories' trees whole beside the
    `git status` the update waits for, so one run instead of two shortens an update after one commit.
    Whichever asks second waits for the first one's answer.
    """

    def __init__(self, root: Path) -> None:
        self._root = root
        self._lock = threading.Lock()
        self._answers: dict[tuple[str, str], bytes | GitFailure] = {}

    def _raw(self, old: str, new: str) -> bytes:
        with self._lock:
            answer = self._answers.get((old, new))
            if answer is None:
                try:
                    arguments = ["diff", "--raw", "-M", "-z", "--no-color", "--no-abbrev", old, new, "--", *_BUCKETS]
                    answer = run_git(self._root, arguments).stdout
                except GitFailure as failure:  # a commit that is gone: each asker hears it
                    answer = failure
                self._answers[(old, new)] = answer
        if isinstance(answer, GitFailure):
            raise answer
        return answer

    def changes(self, old: str, new: str) -> list[TreeChange]:
        """The memory paths' changes from `old` to `new` (`CorpusReader.changes`). A path that became a
        symbolic link (or a submodule) leaves the corpus as a deleted one does: HEAD's tree, which a
        rebuild reads, holds only the regular files."""
        changes: list[TreeChange] = []
        for status, path, new_sha, source, new_mode in _raw_records(self._raw(old, new)):
            if status != "D" and not new_mode.startswith("100"):
                if source is not None and status == "R" and is_memory_path(source):
                    changes.append(TreeChange("D", source))
                if is_memory_path(path):
                    changes.append(TreeChange("D", path))
                continue
            if status in ("R", "C"):
                assert source is not None
                if status == "C" or not is_memory_path(source):
                    if is_memory_path(path):
                        changes.append(TreeChange("A", path, new_sha))  # a copy's source still lives
                elif not is_memory_path(path):
                    changes.append(TreeChange("D", source))
                else:
                    changes.append(TreeChange("R", path, new_sha, source))
            elif is_memory_path(path):
                kind = {"T": "M"}.get(status, status)
                changes.append(TreeChange(kind, path, None if kind == "D" else new_sha))
        return changes

    def paths_moved(self, old: str, new: str) -> tuple[list[str], list[str]]:
        """Every path under the buckets that `old` holds and `new` does not (deleted, or the source of a
        rename), and every one `new` holds and `old` does not (added, copied, or a rename's
        destination), memory-shaped or not. Raises GitFailure when git cannot tell."""
        removed: list[str] = []
        added: list[str] = []
        for status, path, _, source, _ in _raw_records(self._raw(old, new)):
            if status == "D":
                removed.append(path)
            elif status in ("A", "C"):
                added.append(path)
            elif status == "R" and source is not None:
                removed.append(source)
                added.append(path)
        return removed, added


def _raw_records(output: bytes) -> Iterator[tuple[str, str, str, str | None, str]]:
    """(status letter, path, new blob id, source path of a rename or copy, new mode) of `git diff --raw -z`."""
    fields = [field.decode("utf-8", "surrogateescape") for field in output.split(b"\0")]
    index = 0
    while index < len(fields) and fields[index].startswith(":"):
        _, new_mode, _, new_sha, status_field = fields[index][1:].split(" ")
        status = status_field[0]
        if status in ("R", "C"):
            yield status, fields[index + 2], new_sha, fields[index + 1], new_mode
            index += 3
        else:
            yield status, fields[index + 1], new_sha, None, new_mode
            index += 2


class _StatusScan:
    """`status_records` of one store, run on a thread from the moment it is made, with the HEAD it was
    taken against (read first: a status compares the working tree with the HEAD of its own moment)."""

    def __init__(self, root: Path, diffs: TreeDiffs) -> None:
        self._records: list[tuple[str, str]] = []
        self._head: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._scan, args=(root, diffs), name="memhtml-git-status", daemon=True)
        self._thread.start()

    def _scan(self, root: Path, diffs: TreeDiffs) -> None:
        try:
            self._head = head_sha(root)
            self._records = status_records(root, self._head, diffs)
        except BaseException as error:  # handed to the caller of `records`, in its thread
            self._error = error

    def records(self) -> tuple[str | None, list[tuple[str, str]]]:
        """The HEAD the scan began at and what it found."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._head, self._records


class GitCorpusReader:
    """The `CorpusReader` port over one store's repository."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._diffs = TreeDiffs(root)
        self._status_scan: _StatusScan | None = None
        self._head_read: tuple[str | None] | None = None  # the HEAD `head()` last answered, once asked

    def prefetch_dirty(self) -> None:
        """Start the working-tree scan `dirty()` answers from now, in the background: `git status` stats
        every tracked file and reads every bucket directory in its own process (most of `index update`'s
        cost at 100k files), so it overlaps the index work done before the answer is needed."""
        if self._status_scan is None:
            self._status_scan = _StatusScan(self.root, self._diffs)

    def head(self) -> str | None:
        self._head_read = (head_sha(self.root),)
        return self._head_read[0]

    def tracked_files_above(self, count: int) -> bool:
        return index_entries_above(self.root, count)

    def tree(self, commit: str, paths: Sequence[str] | None = None) -> dict[str, str]:
        if paths is not None and not paths:
            return {}  # an empty pathspec would list the whole tree
        # A short explicit list is cheaper as a pathspec; a long one would overflow the argument list.
        pathspec = list(paths) if paths is not None and len(paths) <= 256 else list(_BUCKETS)
        entries = {
            path: sha
            for path, mode, sha in tree_blobs(self.root, commit, pathspec)
            if mode != SYMLINK_MODE and is_memory_path(path)
        }
        if paths is not None:
            wanted = set(paths)
            entries = {path: sha for path, sha in entries.items() if path in wanted}
        return entries

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Blob contents by object name (a sha, or `<commit>:<path>`); names that are missing are left out."""
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        request = "".join(sha + "\n" for sha in wanted).encode()
        output = run_git(self.root, ["cat-file", "--batch"], stdin=request).stdout
        contents: dict[str, bytes] = {}
        offset = 0
        for sha in wanted:
            header_end = output.index(b"\n", offset)
            size = _blob_size(output[offset:header_end])
            if size is None:
                offset = header_end + 1
                continue
            start = header_end + 1
            contents[sha] = output[start : start + size]
            offset = start + size + 1
        return contents

    def committed_blobs(self, entries: Sequence[tuple[str, str]]) -> dict[str, bytes]:
        # No git process at all when every file is clean (an update after a commit made in this tree).
        return committed_blobs(self.root, entries, self.blobs)

    def blob_source(self) -> GitBlobSource:
        return GitBlobSource(self.root)

    def changes(self, old: str, new: str) -> list[TreeChange]:
        # --raw carries the new blob sha, so no tree walk is needed to read the changed files.
        return self._diffs.changes(old, new)

    def dirty(self) -> list[DirtyEntry]:
        scan, self._status_scan = self._status_scan, None
        records: list[tuple[str, str]] | None = None
        if scan is not None:
            scanned_at, scanned = scan.records()
            # HEAD moved since the scan began (a commit, `reset --soft`): what is dirty against the HEAD
            # the caller indexes (the one it read last) is asked again.
            indexed = self._head_read[0] if self._head_read is not None else head_sha(self.root)
            records = scanned if scanned_at == indexed else None
        if records is None:
            records = status_records(self.root)
        return self._entries(records)

    def _entries(self, records: Iterable[tuple[str, str]]) -> list[DirtyEntry]:
        """The memory paths of `git status` records, unmerged ones left out (a conflict is not an edit)."""
        return [
            DirtyEntry(path, deleted="D" in code or not is_regular_file(self.root, path))
            for code, path in records
            if "U" not in code and is_memory_path(path)
        ]

    def worktree_blobs(self, paths: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        # Never through a symbolic link, the file's own or a directory's: what it leads to is not the corpus.
        # `--stdin-paths` reads one path a line: a name holding a line break cannot be named to it.
        present = [path for path in paths if "\n" not in path and is_regular_file(self.root, path)]
        if not present:
            return {}
        listing = "".join(path + "\n" for path in present).encode("utf-8", "surrogateescape")
        shas = run_git(self.root, ["hash-object", "--no-filters", "--stdin-paths"], stdin=listing).stdout
        blobs: dict[str, tuple[str, bytes]] = {}
        for path, sha in zip(present, shas.decode().split(), strict=True):
            try:
                data = read_regular_file(self.root, path)
            except (OSError, LinkedPath):
                continue
            if data is not None:
                blobs[path] = (sha, data)
        return blobs

    def worktree_blob_ids(self, paths: Sequence[str]) -> dict[str, str]:
        # What `git hash-object --no-filters` answers, computed here: a read command checking a few
        # files it projected from disk should not pay for a git process.
        ids: dict[str, str] = {}
        for path in paths:
            if not is_regular_file(self.root, path):
                continue
            try:
                data = read_regular_file(self.root, path)
            except (OSError, LinkedPath):
                continue
            if data is not None:
                ids[path] = blob_id(data)
        return ids

    def dirty_among(self, paths: Sequence[str]) -> list[DirtyEntry]:
        if not paths:
            return []
        if len(paths) > PATHS_ASKED_LIMIT or sum(len(path) + 1 for path in paths) > PATHS_ASKED_BYTES:
            asked = set(paths)  # past a command line's room: the buckets' status, kept to these paths
            return [entry for entry in self._entries(status_records(self.root)) if entry.path in asked]
        arguments = ["--literal-pathspecs", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]
        return self._entries(_parsed_status(run_git(self.root, [*arguments, "--", *paths]).stdout))

    def moved_from(self, path: str, since: str | None = None) -> tuple[str, str | None] | None:
        literal = ":(literal)" + path  # a path is a name, never a pattern (`[x].html`)
        if since is None:
            head = self.head()
            if head is None or self.tree(head, [path]):
                return None  # still (or again) in the tree: an older move is not where it is now
            arguments = ["log", "-1", "--format=%H %P", "--diff-filter=D", "--no-renames", "--", literal]
        else:
            arguments = ["log", "--reverse", "--format=%H %P", "--diff-filter=D", "--no-renames", f"{since}..HEAD"]
            arguments += ["--", literal]
        # The commit that took the path away, then that commit's own diff with rename detection: limited
        # to one path, git sees a deletion, never the file arriving elsewhere.
        removing = run_git(self.root, arguments).stdout.decode().split("\n", 1)[0]
        commit, _, parents = removing.strip().partition(" ")
        if not commit or not parents:
            return None
        for change in self.changes(parents.split()[0], commit):
            if change.status == "R" and change.old_path == path:
                return commit, change.path
        return commit, None

    def resolve_commit(self, reference: str) -> tuple[str, str] | None:
        try:
            output = run_git(
                self.root, ["log", "-1", "--format=%H %ct", f"{reference}^{{commit}}", "--"], ok_statuses=(0,)
            ).stdout.decode()
        except GitFailure:
            return None
        sha, _, seconds = output.strip().partition(" ")
        if not sha or not seconds.isdigit():
            return None
        # The corpus's own instant form, so it compares as a string with the metas.
        return sha, format_instant(dt.datetime.fromtimestamp(int(seconds), dt.UTC))


def _blob_size(header: bytes) -> int | None:
    """The size in a `cat-file --batch` header (`<name> blob <size>`); None for `<name> missing` or a
    non-blob."""
    parts = header.decode("utf-8", "surrogateescape").rsplit(" ", 2)
    if len(parts) != 3 or parts[1] != "blob" or not parts[2].isdigit():
        return None
    return int(parts[2])


# Requests written to a `cat-file --batch` before its answers are read: their bytes stay well under a
# pipe's buffer, so git never waits on a full answer pipe while this process still writes requests.
_BATCH_REQUESTS: Final[int] = 500
# This process's open `cat-file --batch` of each repository (a worker's, or the parent's until `close`).
_OPEN_CAT_FILES: dict[Path, subprocess.Popen[bytes]] = {}


class GitBlobSource:
    """The `BlobSource` port over one store's repository: blobs read through a `git cat-file --batch` the
    reading process keeps open, so a worker projecting a rebuild's chunks reads its own blobs (handing
    every blob from the parent to the workers through pipes cost the parent a noticeable share of a
    rebuild)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(shas))
        contents: dict[str, bytes] = {}
        for start in range(0, len(wanted), _BATCH_REQUESTS):
            contents.update(self._read(wanted[start : start + _BATCH_REQUESTS]))
        return contents

    def committed_blobs(self, entries: Sequence[tuple[str, str]]) -> dict[str, bytes]:
        return committed_blobs(self.root, entries, self.blobs)

    def close(self) -> None:
        process = _OPEN_CAT_FILES.pop(self.root, None)
        if process is not None:
            _end(process)

    def _read(self, shas: Sequence[str]) -> dict[str, bytes]:
        process = _OPEN_CAT_FILES.get(self.root)
        if process is None or process.poll() is not None:
            process = _OPEN_CAT_FILES[self.root] = _start_cat_file(self.root)
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write("".join(sha + "\n" for sha in shas).encode())
            process.stdin.flush()
            contents: dict[str, bytes] = {}
            for sha in shas:
                header = process.stdout.readline()
                if not header.endswith(b"\n"):
                    raise OSError("git cat-file ended before it answered")
                size = _blob_size(header[:-1])
                if size is not None:
                    data = process.stdout.read(size + 1)
                    if len(data) != size + 1:
                        raise OSError("git cat-file ended inside a blob")
                    contents[sha] = data[:size]
        except OSError as error:
            _OPEN_CAT_FILES.pop(self.root, None)
            _end(process)
            raise GitFailure("git cat-file failed (its process ended)", [], retryable=True) from error
        return contents


def _start_cat_file(root: Path) -> subprocess.Popen[bytes]:
    return start_git(root, ["cat-file", "--batch"])


def _end(process: subprocess.Popen[bytes]) -> None:
    """Close a `cat-file --batch`'s input (it exits at once) and reap it."""
    with contextlib.suppress(OSError):
        if process.stdin is not None:
            process.stdin.close()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
