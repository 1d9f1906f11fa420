"""Initializing a memory store: the git repository, the PARA scaffold and its first commit.

Convergent: a second `init` of the same directory writes and commits nothing. Kept apart from opening
(`store/repository.py`), which every command does and which so never loads the commit machinery.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from memhtml.contracts.errors import GitFailure, UsageError
from memhtml.store.commit import Staged, commit_message, commit_paths, commit_subject
from memhtml.store.gitcmd import head_sha, run_git
from memhtml.store.lock import write_lock
from memhtml.store.repository import Store, ensure_excluded, git_locations
from memhtml.store.scaffold import GITATTRIBUTES, GITIGNORE, GITKEEP_DIRECTORIES, README_HTML


class InitReport(NamedTuple):
    """What `init` did: whether it created the repository, which scaffold files it wrote, the commit."""

    root: Path
    created: bool
    head_sha: str | None
    wrote: list[str]
    index_synced: bool = True


def init_store(root: Path) -> InitReport:
    """Create or complete a store; convergent, so a second run writes and commits nothing."""
    _refuse_inside_git_dir(root)
    root.mkdir(parents=True, exist_ok=True)
    resolved = root.resolve()
    locations = git_locations(resolved)
    initialized_git = False
    if locations is None or locations[0].resolve() != resolved:
        run_git(resolved, ["init", "-q", "-b", "main", "."])
        initialized_git = True
        locations = git_locations(resolved)
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
            index_synced = landed.index_synced
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
