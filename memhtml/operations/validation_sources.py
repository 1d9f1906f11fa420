"""Where `validate` finds its files: the paths it was given (directories walked), the buckets of the
working tree, or the blobs staged in the git index; and the repository they belong to, opened read-only.

Staged content comes from the index the caller's git variables name. A git hook is handed one in
GIT_INDEX_FILE, and for `git commit -a` or `git commit <path>` it is a temporary index, not
`.git/index`. The git runner scrubs that variable from every child on purpose, so its
`caller_index_file` asks git once, with the caller's variables and working directory, which index file
they mean (git resolves a relative value exactly as it does for itself), and the reads that follow name
that file explicitly.
Nothing here writes: not the tree, not any index, not `.git` (no recovery, no exclude lines).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final, NamedTuple

from memhtml.contracts.errors import GitFailure, NotAStore, PathNotFound, UsageError
from memhtml.contracts.vocabulary import PARA_BUCKETS
from memhtml.operations.filejudgment import Candidate, CandidateStream, Skipped, skip_reason
from memhtml.store.gitcmd import caller_index_file, head_sha, rev_parse, run_git
from memhtml.store.gitread import GitCorpusReader

_BLOB_SLICE: Final[int] = 500  # staged blobs read per `cat-file --batch`, so memory stays bounded
_SYMLINK_MODE: Final[str] = "120000"
_GITLINK_MODE: Final[str] = "160000"
_NOT_FOLLOWED: Final[str] = "a symbolic link to a directory: not followed"


class Repository(NamedTuple):
    """The git work tree `validate` reads: its resolved top level and git directory."""

    root: Path
    git_dir: Path


def open_repository(root: Path) -> Repository:
    """The git work tree whose top level is `root`, refused (ERR_GIT) otherwise; nothing is written."""
    suggestion = [f"memhtml init --repo {root}"]
    if not root.is_dir():
        raise NotAStore(f"no memory store at {root}: the directory does not exist", suggestion)
    resolved = root.resolve()
    try:
        lines = rev_parse(resolved, ["--show-toplevel", "--absolute-git-dir"])
    except GitFailure:
        raise NotAStore(f"no memory store at {root}: it is not a git work tree", suggestion) from None
    if Path(lines[0]).resolve() != resolved:
        raise NotAStore(
            f"no memory store at {root}: it sits inside another git repository rather than being one", suggestion
        )
    return Repository(resolved, Path(lines[1]).resolve())


# ---------------------------------------------------------------- the working tree


class _OnDisk(NamedTuple):
    path: str  # repo-relative
    location: Path
    symlink: bool


def worktree_sources(repo: Repository, targets: Sequence[str]) -> tuple[CandidateStream, list[Skipped]]:
    """The files under `targets` (repo-relative; "" is the whole tree; none: the four buckets) to judge,
    read one by one as the judging asks for them, and the files skipped as no memory.

    Every target is located first, so a missing one (ERR_PATH_NOT_FOUND) or one that leaves the store
    through a symbolic link (exit 2) is refused before any file is read."""
    chosen = list(targets) or [bucket for bucket in PARA_BUCKETS if os.path.lexists(repo.root / bucket)]
    found: dict[str, _OnDisk] = {}
    skipped: dict[str, Skipped] = {}
    missing: list[str] = []
    for target in chosen:
        location = repo.root / target if target else repo.root
        if not os.path.lexists(location):
            missing.append(target)
            continue
        if targets:  # a bucket that is a link is skipped below, not refused: nobody named it
            _refuse_leaving_store(repo, target, location)
        if location.is_symlink() and location.is_dir():
            skipped[target] = Skipped(target, _NOT_FOLLOWED)
        elif location.is_dir() and not location.is_symlink():
            for entry in _walk(repo, location):
                _sort(entry, found, skipped)
        else:
            _sort(_OnDisk(target, location, location.is_symlink()), found, skipped)
    if missing:
        listed = ", ".join(missing)
        raise PathNotFound(
            f"nothing to validate at {listed}: no such file or directory in the store",
            ["memhtml validate", "memhtml status"],
        )
    ordered = [found[path] for path in sorted(found)]
    files = (_read(entry) for entry in ordered)
    return CandidateStream(files, len(ordered)), [skipped[path] for path in sorted(skipped)]


def _sort(entry: _OnDisk, found: dict[str, _OnDisk], skipped: dict[str, Skipped]) -> None:
    reason = skip_reason(entry.path)
    if reason is None:
        found[entry.path] = entry
    else:
        skipped[entry.path] = Skipped(entry.path, reason)


def _refuse_leaving_store(repo: Repository, target: str, location: Path) -> None:
    """Refuse (exit 2) a target reached through a symbolic link: one that leads out of the store, or
    into `.git` or `.memhtml`, would judge a file that is not the store's under a store path; git never
    tracks a path beyond a linked directory either. A target that is itself a link stays (it is judged,
    or skipped, as a link)."""
    if not target:
        return
    parent = location.parent.resolve()
    lexical_parent = (repo.root / target).parent
    reason: str | None = None
    if parent != lexical_parent:
        reason = "it goes through a symbolic link (git never tracks a path beyond one)"
    elif location.is_symlink():
        real = location.resolve()
        inside = real.is_relative_to(repo.root) and not real.is_relative_to(repo.git_dir)
        if not inside or real.is_relative_to(repo.root / ".memhtml"):
            reason = "it is a symbolic link leading out of the store (or into .git or .memhtml)"
    if reason is not None:
        raise UsageError(
            "ERR_INVALID_FLAG",
            f"validate: `{target}` is refused: {reason}",
            ["memhtml validate", f"memhtml validate {PARA_BUCKETS[2]}/", "memhtml help validate"],
            command="validate",
        )


def _walk(repo: Repository, directory: Path) -> Iterator[_OnDisk]:
    """Every `.html` file (or link so named) under `directory`, in path order, never following a
    linked directory and never entering `.git` or the store's `.memhtml`."""
    for current, directories, files in os.walk(directory):
        here = Path(current)
        kept = []
        for name in directories:
            location = here / name
            if name.lower() == ".git" or (here == repo.root and name == ".memhtml"):
                continue
            if location.is_symlink():
                if name.endswith(".html"):
                    yield _OnDisk(location.relative_to(repo.root).as_posix(), location, True)
                continue
            kept.append(name)
        directories[:] = sorted(kept)
        for name in sorted(files):
            if name.endswith(".html"):
                location = here / name
                yield _OnDisk(location.relative_to(repo.root).as_posix(), location, location.is_symlink())


def _read(entry: _OnDisk) -> Candidate:
    if entry.symlink:
        return Candidate(entry.path, None, symlink=True)
    try:
        return Candidate(entry.path, entry.location.read_bytes())
    except OSError:
        return Candidate(entry.path, None)


# ---------------------------------------------------------------- the git index


class _StagedEntry(NamedTuple):
    path: str
    mode: str
    blob: str


def staged_sources(repo: Repository, targets: Sequence[str]) -> tuple[CandidateStream, list[Skipped]]:
    """The staged versions (added, copied, modified, renamed or retyped against HEAD; deletions have
    nothing to judge) of the files under `targets` (none: all), from the index the caller's git
    variables name, and the staged files skipped as no memory."""
    index = caller_index_file(repo.git_dir)
    env = {"GIT_INDEX_FILE": str(index)} if index is not None else None
    base = head_sha(repo.root) or _empty_tree(repo.root)
    # --no-renames: a rename or copy is its new path, added; the old path's deletion is not judged.
    output = run_git(
        repo.root, ["diff-index", "--cached", "--no-renames", "-z", "--diff-filter=AMT", base], env=env
    ).stdout
    judged: list[_StagedEntry] = []
    skipped: list[Skipped] = []
    for entry in _staged_entries(output):
        if not _under(entry.path, targets):
            continue
        reason = skip_reason(entry.path)
        if reason is None and entry.mode == _GITLINK_MODE:
            reason = "a submodule: not a memory"
        if reason is None:
            judged.append(entry)
        else:
            skipped.append(Skipped(entry.path, reason))
    judged.sort(key=lambda entry: entry.path)
    files = _staged_candidates(repo, judged)
    return CandidateStream(files, len(judged)), sorted(skipped, key=lambda item: item.path)


def _empty_tree(root: Path) -> str:
    """The empty tree's id in this repository's hash (HEAD is unborn: everything staged is added)."""
    return run_git(root, ["hash-object", "-t", "tree", "--stdin"], stdin=b"").stdout.decode().strip()


def _staged_entries(output: bytes) -> Iterator[_StagedEntry]:
    """Entries of `diff-index -z` raw output: `:<old mode> <new mode> <old id> <new id> <status>\\0<path>\\0`."""
    fields = output.split(b"\0")
    position = 0
    while position + 1 < len(fields) and fields[position].startswith(b":"):
        _old_mode, new_mode, _old_id, new_id, _status = fields[position][1:].decode().split(" ")
        path = fields[position + 1].decode("utf-8", "surrogateescape")
        position += 2
        yield _StagedEntry(path, new_mode, new_id)


def _under(path: str, targets: Sequence[str]) -> bool:
    if not targets:
        return True
    return any(not target or path == target or path.startswith(target + "/") for target in targets)


def _staged_candidates(repo: Repository, entries: Sequence[_StagedEntry]) -> Iterator[Candidate]:
    reader = GitCorpusReader(repo.root)
    for start in range(0, len(entries), _BLOB_SLICE):
        chunk = entries[start : start + _BLOB_SLICE]
        contents = reader.blobs(entry.blob for entry in chunk if entry.mode != _SYMLINK_MODE)
        for entry in chunk:
            if entry.mode == _SYMLINK_MODE:
                yield Candidate(entry.path, None, symlink=True)
            else:
                yield Candidate(entry.path, contents.get(entry.blob))
