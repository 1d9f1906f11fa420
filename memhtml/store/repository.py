"""Opening a memory store: finding its git repository, checking its PARA scaffold, keeping its ignore rules.

A store is a git work tree whose top level is the store root and which holds the four PARA buckets.
Opening never creates anything but our own ignore lines in `.git/info/exclude`; it puts back what a
writer killed mid-transaction left in the tree (`store/recovery.py`) when no writer holds the lock.
Creating a store is `store/initialize.py`'s.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final, NamedTuple

from memhtml.contracts.errors import GitFailure, NotAStore
from memhtml.contracts.vocabulary import PARA_BUCKETS
from memhtml.store.gitcmd import head_from_ref_files, head_sha, rev_parse
from memhtml.store.recovery import recover_if_idle
from memhtml.store.supportdir import SET_ASIDE_PREFIX, refuse_damaged_support_directory

# Our database files; ignored in every store we open, including stores the original made.
EXCLUDE_LINES: Final[tuple[str, ...]] = (
    ".memhtml/index.duckdb",
    ".memhtml/state.duckdb",
    ".memhtml/index.duckdb.*",
    ".memhtml/state.duckdb.*",
    ".memhtml/*.tmp",
    f"/{SET_ASIDE_PREFIX}*",
)
# Settings of a repository's own config that move its working tree or git directory away from where a
# plain `.git` directory says they are, or bring in other files that might: such a repository is
# located by git itself.
_RELOCATING_CONFIG: Final = re.compile(r"^\s*(?:worktree|bare\s*=\s*(?:true|yes|on|1)\b|\[\s*include)", re.I | re.M)


class Store(NamedTuple):
    """An opened store: its resolved root and the git directory holding the lock and private indexes.

    `opened_at` is the commit HEAD named when the store was opened (None for a store being created). A
    command that has committed nothing since may take it as HEAD instead of asking git again.
    """

    root: Path
    git_dir: Path
    opened_at: str | None = None


def git_locations(root: Path) -> tuple[Path, Path] | None:
    """(toplevel, git dir) of the repository containing `root`, or None when it is not in one."""
    located = _git_locations_and_head(root, with_head=False)
    return None if located is None else located[:2]


def _git_locations_and_head(root: Path, *, with_head: bool = True) -> tuple[Path, Path, str | None] | None:
    """(toplevel, git dir, the commit HEAD names or None) of the repository containing `root`, or None
    when it is not in one. One `git` process answers all three for a store with a first commit (every
    command opens a store, so the second process it used to cost is saved on each)."""
    if with_head:
        plain = _plain_repository(root)
        if plain is not None:
            return plain
    questions = ["--show-toplevel", "--git-dir"]
    try:
        answers = rev_parse(root, [*questions, "HEAD^{commit}"] if with_head else questions)
    except GitFailure:
        if not with_head:
            return None
        # An unborn HEAD fails the combined question; ask again without it.
        located = _git_locations_and_head(root, with_head=False)
        return None if located is None else (located[0], located[1], head_sha(root))
    toplevel, git_dir = answers[:2]
    git_path = Path(git_dir)
    head = answers[2] if with_head else None
    return Path(toplevel), git_path if git_path.is_absolute() else root / git_path, head


def _plain_repository(root: Path) -> tuple[Path, Path, str] | None:
    """(root, its `.git`, HEAD's commit) when `root` keeps its repository where git looks first and in the
    plainest way, so that `git rev-parse --show-toplevel --git-dir HEAD` would answer the same; None for
    anything else, which git answers (every command opens a store, and would pay for that `git` process
    each time). Plain means: `.git` is a directory this user owns (whether another user's is safe is
    git's to judge) holding `objects`, `refs` and a config that neither relocates the working tree nor
    includes other files, and HEAD names its commit through the ref files (`head_from_ref_files`)."""
    git_dir = root / ".git"
    try:
        if git_dir.stat().st_uid != os.geteuid():
            return None
        config = (git_dir / "config").read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if _RELOCATING_CONFIG.search(config) or not ((git_dir / "objects").is_dir() and (git_dir / "refs").is_dir()):
        return None
    head = head_from_ref_files(git_dir)
    return None if head is None else (root, git_dir, head)


def open_store(root: Path, *, support_directory_checked: bool = True) -> Store:
    """Open an initialized store at `root`, refusing anything else without writing a byte; a store whose
    `.memhtml` is not a directory is refused too, unless the caller (`doctor`) repairs it."""
    suggestion = [f"memhtml init --repo {root}"]
    if not root.is_dir():
        raise NotAStore(f"no memory store at {root}: the directory does not exist", suggestion)
    resolved = root.resolve()
    located = _git_locations_and_head(resolved)
    if located is None:
        raise NotAStore(f"no memory store at {root}: it is not a git repository", suggestion)
    toplevel, git_dir, head = located
    if toplevel.resolve() != resolved:
        raise NotAStore(
            f"no memory store at {root}: it sits inside another git repository rather than being one",
            suggestion,
        )
    if not all((resolved / bucket).is_dir() for bucket in PARA_BUCKETS):
        raise NotAStore(f"no memory store at {root}: the PARA buckets are missing", suggestion)
    if head is None:
        raise NotAStore(f"no memory store at {root}: its first commit is missing (init did not finish)", suggestion)
    if support_directory_checked:
        refuse_damaged_support_directory(resolved)
    store = Store(root=resolved, git_dir=git_dir.resolve(), opened_at=head)
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
