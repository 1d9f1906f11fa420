"""Our entries are in the user's git index before the branch moves, and the index as it was comes back
when the commit does not land.

A `git commit` reads HEAD, then the index, then takes the index lock. Were our entries written only
after the branch moved, one that read HEAD just after our commit and the index just before our entries
would commit the old index on top of our commit, deleting the memory from the branch.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memhtml.contracts.errors import GitFailure
from memhtml.operations.write import WriteRequest, write
from memhtml.store import commit as commit_module
from tests.conftest import git

REQUEST = WriteRequest(title="Pool ceiling", memory_type="semantic", claim="The connection pool ceiling is 64.")


def _staged_blob(root: Path, path: str) -> str | None:
    """The blob the user's index holds for `path`, read by git itself (None when it holds none)."""
    listed = git(root, "ls-files", "--stage", "--", path).split()
    return listed[1] if listed else None


def test_the_index_holds_our_entries_when_the_branch_moves(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen_at_the_swap: list[tuple[str | None, str]] = []
    real_swap = commit_module._swapped

    def watched(root: Path, subject: str, commit: str, parent: str | None) -> commit_module.LostSwap | None:
        [path] = git(root, "diff-tree", "-r", "--name-only", str(parent), commit).split()
        seen_at_the_swap.append((_staged_blob(root, path), git(root, "rev-parse", f"{commit}:{path}").strip()))
        return real_swap(root, subject, commit, parent)

    monkeypatch.setattr(commit_module, "_swapped", watched)
    report = write(store_root, REQUEST)
    assert report.stored
    [(staged, committed)] = seen_at_the_swap
    assert staged == committed  # in the index before HEAD named the commit
    assert git(store_root, "status", "--porcelain", "--untracked-files=all") == ""


def test_the_index_as_it_was_comes_back_when_the_commit_does_not_land(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = store_root / ".git" / "index"
    before = index.read_bytes()
    head = git(store_root, "rev-parse", "HEAD")

    def refused(*_: object) -> None:
        raise GitFailure("git update-ref failed: refused for the test")

    monkeypatch.setattr(commit_module, "_swapped", refused)
    with pytest.raises(GitFailure):
        write(store_root, REQUEST)
    assert index.read_bytes() == before
    assert git(store_root, "rev-parse", "HEAD") == head
    assert git(store_root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not [name for name in (store_root / ".git").iterdir() if name.name.startswith("memhtml-index-")]
