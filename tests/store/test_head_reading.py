"""HEAD is read from the ref files when the repository keeps them plainly, and asked of git otherwise;
either way the answer is the commit `git rev-parse HEAD^{commit}` names (None on an unborn branch)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memhtml.store import gitcmd
from memhtml.store.gitcmd import head_sha
from tests.conftest import git


def rev_parse_head(root: Path) -> str | None:
    completed = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "-q", "--verify", "HEAD^{commit}"], capture_output=True, check=False
    )
    return completed.stdout.decode().strip() or None


def commit(root: Path, name: str) -> None:
    (root / name).write_text(f"{name}\n")
    git(root, "add", name)
    git(root, "commit", "-q", "-m", f"add {name}")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(root, "one.txt")
    commit(root, "two.txt")
    return root


@pytest.fixture
def without_git(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any git process started from here on fails the test: the answer must come from the files."""

    def no_git(*_: object, **__: object) -> None:
        raise AssertionError("git was asked although the ref files answer")

    monkeypatch.setattr(gitcmd, "run_git", no_git)
    yield


def test_a_loose_branch_ref_is_read_without_git(repository: Path, without_git: None) -> None:
    assert (repository / ".git/refs/heads/main").is_file()
    assert head_sha(repository) == rev_parse_head(repository)


def test_a_packed_branch_ref_is_read_without_git(repository: Path, without_git: None) -> None:
    git(repository, "tag", "-a", "-m", "a peeled line follows this tag's", "v1")
    git(repository, "pack-refs", "--all")
    assert not (repository / ".git/refs/heads/main").exists()
    assert "^" in (repository / ".git/packed-refs").read_text()
    assert head_sha(repository) == rev_parse_head(repository)


def test_a_loose_ref_wins_over_its_stale_packed_line(repository: Path, without_git: None) -> None:
    git(repository, "pack-refs", "--all")
    commit(repository, "three.txt")
    assert (repository / ".git/refs/heads/main").is_file()  # the new value, beside the packed old one
    assert head_sha(repository) == rev_parse_head(repository)


def test_a_detached_head_is_read_without_git(repository: Path, without_git: None) -> None:
    first = git(repository, "rev-parse", "HEAD~1").strip()
    git(repository, "checkout", "-q", "--detach", first)
    assert head_sha(repository) == first


def test_an_unborn_branch_is_none(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    assert head_sha(root) is None


def test_a_linked_worktree_a_symbolic_branch_and_a_damaged_ref_are_asked_of_git(
    repository: Path, tmp_path: Path
) -> None:
    linked = tmp_path / "linked"
    git(repository, "worktree", "add", "-q", "-b", "side", str(linked))
    commit(linked, "three.txt")
    assert (linked / ".git").is_file()
    assert head_sha(linked) == rev_parse_head(linked) != rev_parse_head(repository)

    git(repository, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    git(repository, "symbolic-ref", "HEAD", "refs/heads/alias")
    assert head_sha(repository) == rev_parse_head(repository) is not None

    git(repository, "symbolic-ref", "HEAD", "refs/heads/main")
    (repository / ".git/refs/heads/main").write_text("not an object id\n")
    assert head_sha(repository) == rev_parse_head(repository)


@pytest.mark.parametrize("head", ["ref: refs/heads/../../planted", "ref: refs/heads//main", "ref: refs/tags/v1"])
def test_a_head_outside_plain_branches_is_asked_of_git(repository: Path, head: str) -> None:
    # A file holding an id where a ref name that climbs out of refs/heads would lead.
    (repository / ".git/planted").write_text(rev_parse_head(repository) or "")
    git(repository, "tag", "v1")
    (repository / ".git/HEAD").write_text(head + "\n")
    assert head_sha(repository) == rev_parse_head(repository)
