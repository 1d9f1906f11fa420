"""The on-disk journal of a write transaction, and putting back what a killed writer left.

A transaction's in-memory journal undoes its work on any failure the process survives. A SIGKILL (the
OOM killer, a container stop) leaves no chance to run it, so before touching the working tree the writer
also records its intent in `.git/memhtml-journal-*`: every file it will create (with the blob id and
size of its bytes) up front, and the prior bytes of every committed file just before it rewrites or
moves it. The file is removed once the transaction is over, landed or undone.

Any journal found by the next holder of the write lock belongs to a writer that died (the lock is
released only when its holder and the git children it started are gone). It is replayed path by path
against HEAD: a path whose journaled new bytes HEAD holds landed, and only the user's git index entry is
brought in line (the writer may have died before refreshing it); any other path still holding the dead
writer's bytes (or a truncated prefix of a file it was creating) gets back what was there before. Files
someone changed since are left alone. Every command runs this when it opens the store and the lock is
free, so the first command after a crash sees the tree as it was.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO, Final

from memhtml.contracts.errors import LockTimeout, MemhtmlError
from memhtml.store.gitcmd import ZERO_SHA, blob_id, run_git
from memhtml.store.gitindex import remove_writers_leftover_lock
from memhtml.store.lock import write_lock

JOURNAL_PREFIX: Final[str] = "memhtml-journal-"


class JournalFile:
    """The journal a live transaction appends to; each record reaches the kernel before its change."""

    def __init__(self, path: Path, handle: BinaryIO) -> None:
        self.path = path
        self._handle = handle

    @classmethod
    def begin(cls, git_dir: Path, creates: Iterable[tuple[str, bytes]], directories: Iterable[str]) -> JournalFile:
        """Record the files the transaction will create and the directories it will make, before any."""
        name = f"{JOURNAL_PREFIX}{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}"
        path = git_dir / name
        handle = path.open("xb")
        journal = cls(path, handle)
        lines: list[dict[str, Any]] = [{"directories": sorted(directories)}]
        lines += [{"create": target, "blob": blob_id(data), "size": len(data)} for target, data in creates]
        try:
            journal._write(lines)
        except BaseException:  # nothing was touched yet: a journal that could not be written is dropped
            with contextlib.suppress(OSError):
                handle.close()
            path.unlink(missing_ok=True)
            raise
        return journal

    def rewrite(self, path: str, prior: bytes, new: bytes, temporary: str) -> None:
        """Before `path` (committed, holding `prior`) is replaced by `new` through `temporary`."""
        self._write([{"rewrite": path, "blob": blob_id(new), "prior": _encoded(prior), "temporary": temporary}])

    def remove(self, path: str, prior: bytes) -> None:
        """Before `path` (committed, holding `prior`) leaves the tree (the source of a move)."""
        self._write([{"remove": path, "prior": _encoded(prior)}])

    def finish(self) -> None:
        """The transaction is over (landed, or undone in process): nothing is left to recover."""
        self._handle.close()
        self.path.unlink(missing_ok=True)

    def abandon(self) -> None:
        """Keep the journal for the next lock holder (a commit whose last step was cut short)."""
        self._handle.close()

    def _write(self, records: list[dict[str, Any]]) -> None:
        # Flushed: once this returns the kernel has the bytes, whatever happens to this process.
        self._handle.write("".join(json.dumps(record) + "\n" for record in records).encode("utf-8"))
        self._handle.flush()


def _encoded(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def pending_journals(git_dir: Path) -> list[Path]:
    """Journals of dead writers, newest first (undo runs in reverse order)."""
    return sorted(git_dir.glob(f"{JOURNAL_PREFIX}*"), reverse=True)


def recover_if_idle(root: Path, git_dir: Path) -> None:
    """Recover what a killed writer left, if it left anything and no writer holds the lock now (a live
    writer's journal is its own business); never waits."""
    if not pending_journals(git_dir):
        return
    with contextlib.suppress(LockTimeout), write_lock(git_dir, timeout_seconds=0):
        recover_interrupted_writes(root, git_dir)


def recover_interrupted_writes(root: Path, git_dir: Path) -> int:
    """Replay every journal of a dead writer (the caller holds the write lock); returns how many were
    replayed. Recovery never fails the command that runs it: a journal it cannot replay (an unreadable
    file, git refusing the index) stays for the next command to try again."""
    journals = pending_journals(git_dir)
    if not journals:
        return 0
    remove_writers_leftover_lock(git_dir)  # a writer killed while it held git's index lock
    # Without git's index there are no entries to bring in line: entries of a few paths alone would
    # read as every other memory staged for deletion (`doctor --fix` rebuilds the index from HEAD).
    has_index = (git_dir / "index").is_file()
    try:
        listing = run_git(root, ["ls-tree", "-r", "-z", "--full-tree", "HEAD"], ok_statuses=(0, 128)).stdout
        in_head = _entries(listing)
        in_index = _entries(run_git(root, ["ls-files", "--stage", "-z"]).stdout, staged=True) if has_index else {}
    except MemhtmlError:
        return 0
    replayed = 0
    for journal in journals:
        try:
            fixes = _replay(root, _records(journal), in_head, in_index)
            if fixes and has_index:
                run_git(root, ["update-index", "-z", "--index-info"], stdin="".join(fixes).encode("utf-8"))
        except (OSError, MemhtmlError, ValueError, KeyError, TypeError):
            continue
        journal.unlink(missing_ok=True)
        replayed += 1
    return replayed


def _entries(listing: bytes, *, staged: bool = False) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob id) from `ls-tree -r -z` output, or `ls-files --stage -z` with `staged`
    (merged entries only)."""
    entries: dict[str, tuple[str, str]] = {}
    for record in listing.split(b"\0"):
        meta, _, name = record.decode("utf-8", "surrogateescape").partition("\t")
        fields = meta.split()
        if len(fields) != 3:
            continue
        if staged and fields[2] == "0":  # mode, blob, stage
            entries[name] = (fields[0], fields[1])
        elif not staged and fields[1] == "blob":  # mode, type, object
            entries[name] = (fields[0], fields[2])
    return entries


def _records(journal: Path) -> list[dict[str, Any]]:
    """The journal's complete records; a line cut short by the kill was never acted on."""
    records = []
    for line in journal.read_bytes().split(b"\n"):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def _replay(
    root: Path, records: list[dict[str, Any]], in_head: dict[str, tuple[str, str]], in_index: dict[str, tuple[str, str]]
) -> list[str]:
    """Undo what did not land, in reverse order; return the git index records of what did."""
    fixes: list[str] = []
    directories: list[str] = []
    creates = [record for record in records if "create" in record]
    others = [record for record in records if "rewrite" in record or "remove" in record]
    for record in records:
        directories += record.get("directories", [])
    # New files go first: an in-place correction creates a file where the moved one used to be.
    for record in creates:
        path, blob = str(record["create"]), str(record["blob"])
        if in_head.get(path, ("", ""))[1] == blob:
            if in_index.get(path) != in_head[path]:
                fixes.append(f"{in_head[path][0]} {blob}\t{path}\0")
        else:
            # Bytes committed or staged at that path (a file an in-place move has not yet taken away,
            # or the dead writer's file that the user staged since) are not the dead writer's to take.
            staged = in_index.get(path, ("", ""))[1]
            known = {staged, in_head.get(path, ("", ""))[1]}
            if staged != blob and _holds_our_bytes(root / path, blob, int(record["size"]), known):
                (root / path).unlink()
    for record in reversed(others):
        if "rewrite" in record:
            fixes += _replay_rewrite(root, record, in_head, in_index)
        else:
            fixes += _replay_remove(root, record, in_head, in_index)
    for directory in sorted(directories, key=lambda item: item.count("/"), reverse=True):
        with contextlib.suppress(OSError):  # not empty: it holds something else now
            (root / directory).rmdir()
    return fixes


def _replay_rewrite(
    root: Path, record: dict[str, Any], in_head: dict[str, tuple[str, str]], in_index: dict[str, tuple[str, str]]
) -> list[str]:
    path, blob = str(record["rewrite"]), str(record["blob"])
    (root / path).with_name(str(record["temporary"])).unlink(missing_ok=True)
    if in_head.get(path, ("", ""))[1] == blob:
        return [f"{in_head[path][0]} {blob}\t{path}\0"] if in_index.get(path) != in_head[path] else []
    target = root / path
    if not target.is_symlink() and _blob_of(target) == blob:
        _put_back(target, base64.b64decode(record["prior"]))
    return []


def _replay_remove(
    root: Path, record: dict[str, Any], in_head: dict[str, tuple[str, str]], in_index: dict[str, tuple[str, str]]
) -> list[str]:
    path = str(record["remove"])
    if path not in in_head:  # the move landed
        return [f"0 {ZERO_SHA}\t{path}\0"] if path in in_index else []
    target = root / path
    if not os.path.lexists(target):
        _put_back(target, base64.b64decode(record["prior"]))
    return []


def _holds_our_bytes(target: Path, blob: str, size: int, known: set[str]) -> bool:
    """Whether `target` is the dead writer's file: exactly its bytes, or a prefix cut short by the kill,
    and not bytes git knows at that path."""
    try:
        if target.is_symlink() or not target.is_file():
            return False
        data = target.read_bytes()
    except OSError:
        return False
    found = blob_id(data)
    return found not in known and (found == blob or len(data) < size)


def _blob_of(target: Path) -> str | None:
    try:
        return blob_id(target.read_bytes())
    except OSError:
        return None


def _put_back(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
    try:
        with temporary.open("xb") as handle:
            handle.write(data)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
