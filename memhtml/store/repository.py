"""Opening and initializing a memory store: the git repository, its PARA scaffold and its ignore rules.

A store is a git work tree whose top level is the store root and which holds the four PARA buckets.
Opening never creates anything but our own ignore lines in `.git/info/exclude`; it puts back what a
writer killed mid-transaction left in the tree (`store/recovery.py`) when no writer holds the lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memhtml.contracts.errors import GitFailure, NotAStore, UsageError
from memhtml.contracts.vocabulary import PARA_BUCKETS
from memhtml.store.commit import (
    Staged,
    commit_message,
    commit_paths,
    commit_subject,
    head_sha,
    sync_real_index,
)
from memhtml.store.gitcmd import run_git
from memhtml.store.lock import write_lock
from memhtml.store.recovery import recover_if_idle
from memhtml.store.scaffold import GITATTRIBUTES, GITIGNORE, GITKEEP_DIRECTORIES, README_HTML

# Our database files; ignored in every store we open, including stores the original made.
EXCLUDE_LINES: Final[tuple[str, ...]] = (
    ".memhtml/index.duckdb",
    ".memhtml/state.duckdb",
    ".memhtml/index.duckdb.*",
    ".memhtml/state.duckdb.*",
    ".memhtml/*.tmp",
)


@dataclass(frozen=True)
class Store:
    """An opened store: its resolved root and the git directory holding the lock and private indexes."""

    root: Path
    git_dir: Path


@dataclass(frozen=True)
class InitReport:
    root: Path
    created: bool
    head_sha: str | None
    wrote: list[str]
    index_synced: bool = True


def _git_locations(root: Path) -> tuple[Path, Path] | None:
    """(toplevel, git dir) of the repository containing `root`, or None when it is not in one."""
    located = _git_locations_and_head(root, with_head=False)
    return None if located is None else located[:2]


def _git_locations_and_head(root: Path, *, with_head: bool = True) -> tuple[Path, Path, bool] | None:
    """(toplevel, git dir, whether HEAD names a commit) of the repository containing `root`, or None
    when it is not in one. One `git` process answers all three for a store with a first commit (every
    command opens a store, so the second process it used to cost is saved on each)."""
    arguments = ["rev-parse", "--show-toplevel", "--git-dir"]
    try:
        completed = run_git(root, [*arguments, "HEAD^{commit}"] if with_head else arguments)
    except GitFailure:
        if not with_head:
            return None
        # An unborn HEAD fails the combined question; ask again without it.
        located = _git_locations_and_head(root, with_head=False)
        return None if located is None else (located[0], located[1], head_sha(root) is not None)
    lines = completed.stdout.decode("utf-8", "surrogateescape").splitlines()
    toplevel, git_dir = lines[:2]
    git_path = Path(git_dir)
    return Path(toplevel), git_path if git_path.is_absolute() else root / git_path, with_head and len(lines) > 2


def open_store(root: Path) -> Store:
    """Open an initialized store at `root`, refusing anything else without writing a byte."""
    suggestion = [f"memhtml init --repo {root}"]
    if not root.is_dir():
        raise NotAStore(f"no memory store at {root}: the directory does not exist", suggestion)
    resolved = root.resolve()
    located = _git_locations_and_head(resolved)
    if located is None:
        raise NotAStore(f"no memory store at {root}: it is not a git repository", suggestion)
    toplevel, git_dir, has_commit = located
    if toplevel.resolve() != resolved:
        raise NotAStore(
            f"no memory store at {root}: it sits inside another git repository rather than being one",
            suggestion,
        )
    if not all((resolved / bucket).is_dir() for bucket in PARA_BUCKETS):
        raise NotAStore(f"no memory store at {root}: the PARA buckets are missing", suggestion)
    if not has_commit:
        raise NotAStore(f"no memory store at {root}: its first commit is missing (init did not finish)", suggestion)
    store = Store(root=resolved, git_dir=git_dir.resolve())
    ensure_excluded(store)
    recover_if_idle(store.root, store.git_dir)  # a writer killed outright: put its tree back first
    return store


def ensure_excluded(store: Store) -> None:
    """Add our database files to `.git/info/exclude` so they never dirty the tree."""
    exclude = store.git_dir / "info" / "exclude"
    try:
        existing = exclude.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = ""
    present = set(existing.splitlines())
    missing = [line for line in EXCLUDE_LINES if line not in present]
    if not missing:
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    prefix = "" if not existing or existing.endswith("\n") else "\n"
    with exclude.open("a", encoding="utf-8") as handle:
        handle.write(prefix + "# memhtml databases\n" + "".join(line + "\n" for line in missing))


def init_store(root: Path) -> InitReport:
    """Create or complete a store; convergent, so a second run writes and commits nothing."""
    _refuse_inside_git_dir(root)
    root.mkdir(parents=True, exist_ok=True)
    resolved = root.resolve()
    locations = _git_locations(resolved)
    initialized_git = False
    if locations is None or locations[0].resolve() != resolved:
        run_git(resolved, ["init", "-q", "-b", "main", "."])
        initialized_git = True
        locations = _git_locations(resolved)
        if locations is None:
            raise GitFailure("git init did not produce a repository", [])
    store = Store(root=resolved, git_dir=locations[1].resolve())
    run_git(resolved, ["config", "--local", "merge.ours.driver", "true"])
    ensure_excluded(store)
    with write_lock(store.git_dir):
        wrote = _write_missing_scaffold(resolved)
        uncommitted = _scaffold_missing_from_head(resolved)
        index_synced = True
        if uncommitted:
            message = commit_message(commit_subject("init", "scaffold the memory repository"))
            landed = commit_paths(resolved, store.git_dir, [Staged(path) for path in uncommitted], message)
            index_synced = sync_real_index(resolved, landed.records)
    return InitReport(
        root=resolved,
        created=initialized_git,
        head_sha=head_sha(resolved),
        wrote=wrote,
        index_synced=index_synced,
    )


def _refuse_inside_git_dir(root: Path) -> None:
    """A store is a working tree: never inside a `.git` (git's own files) or a repository's `.memhtml`
    (a store's databases; a `~/.memhtml/` of one's own is fine). Judged on the nearest existing
    ancestor, resolved, before anything is created."""
    existing = root.absolute()
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    resolved = existing.resolve() / root.absolute().relative_to(existing)
    parts = resolved.parts
    inside = any(
        part.lower() == ".git" or (part == ".memhtml" and Path(*parts[:index], ".git").exists())
        for index, part in enumerate(parts)
    )
    if not inside and existing.is_dir():
        probe = run_git(existing, ["rev-parse", "--is-inside-git-dir"], ok_statuses=(0, 128))
        inside = probe.returncode == 0 and probe.stdout.strip() == b"true"
    if inside:
        raise UsageError(
            "ERR_INVALID_FLAG",
            f"init: {root} is inside a git directory or a store's .memhtml; a store is a directory of its own",
            ["memhtml init --repo <a new directory>"],
        )


def scaffold_paths() -> list[str]:
    return [f"{directory}/.gitkeep" for directory in GITKEEP_DIRECTORIES] + [
        ".gitignore",
        ".gitattributes",
        "README.html",
    ]


def _write_missing_scaffold(root: Path) -> list[str]:
    contents = {".gitignore": GITIGNORE, ".gitattributes": GITATTRIBUTES, "README.html": README_HTML}
    wrote = []
    for relative in scaffold_paths():
        target = root / relative
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(contents.get(relative, ""), encoding="utf-8")
        wrote.append(relative)
    return wrote


def _scaffold_missing_from_head(root: Path) -> list[str]:
    """Scaffold paths present on disk but absent from HEAD (a first run, or one cut short)."""
    wanted = scaffold_paths()
    if head_sha(root) is None:
        return [path for path in wanted if (root / path).exists()]
    listing = run_git(root, ["ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *wanted]).stdout
    tracked = {name.decode("utf-8") for name in listing.split(b"\0") if name}
    return [path for path in wanted if path not in tracked and (root / path).exists()]
