"""`open_store` opens an initialized store and refuses every other directory without writing a byte."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memhtml.contracts.errors import NotAStore
from memhtml.contracts.vocabulary import PARA_BUCKETS
from memhtml.store import repository
from memhtml.store.repository import open_store
from tests.conftest import git


def _files_under(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


def test_an_initialized_store_opens_with_its_git_directory(store_root: Path) -> None:
    store = open_store(store_root)
    assert store.root == store_root.resolve()
    assert store.git_dir == (store_root / ".git").resolve()


def test_a_store_reached_through_a_relative_path_opens(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(store_root.parent)
    assert open_store(Path(store_root.name)).root == store_root.resolve()


@pytest.mark.parametrize(
    ("shape", "reason"),
    [
        ("missing", "the directory does not exist"),
        ("plain directory", "it is not a git repository"),
        ("unborn", "its first commit is missing"),
        ("no buckets", "the PARA buckets are missing"),
    ],
)
def test_anything_but_a_store_is_refused_untouched(tmp_path: Path, shape: str, reason: str) -> None:
    root = tmp_path / "candidate"
    if shape != "missing":
        root.mkdir()
    if shape in ("unborn", "no buckets"):
        git(root, "init", "-q")
    if shape == "unborn":
        for bucket in PARA_BUCKETS:
            (root / bucket).mkdir()
    if shape == "no buckets":
        (root / "note.txt").write_text("x\n", encoding="utf-8")
        git(root, "add", "note.txt")
        git(root, "commit", "-qm", "first")
    before = _files_under(root) if root.exists() else None
    with pytest.raises(NotAStore, match=reason):
        open_store(root)
    assert (_files_under(root) if root.exists() else None) == before


def test_a_directory_inside_a_store_is_not_a_store(store_root: Path) -> None:
    inner = store_root / "areas"
    with pytest.raises(NotAStore, match="sits inside another git repository"):
        open_store(inner)


def _git_answer(root: Path) -> tuple[Path, Path, str]:
    toplevel, git_dir, head = git(root, "rev-parse", "--show-toplevel", "--git-dir", "HEAD^{commit}").splitlines()
    located = Path(git_dir)
    return Path(toplevel), located if located.is_absolute() else root / located, head


def test_a_plainly_kept_repository_is_located_without_git_as_git_locates_it(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = store_root.resolve()
    expected = _git_answer(root)
    assert repository._plain_repository(root) == expected
    git(root, "pack-refs", "--all")  # the branch now a line of packed-refs, no loose file
    assert repository._plain_repository(root) == expected

    def no_git(*_: object, **__: object) -> None:
        raise AssertionError("a plainly kept store is opened without a git process")

    monkeypatch.setattr(repository, "rev_parse", no_git)
    monkeypatch.setattr(repository, "head_sha", no_git)
    store = open_store(store_root)
    assert (store.root, store.git_dir, store.opened_at) == (expected[0], expected[1].resolve(), expected[2])


@pytest.mark.parametrize("config_line", ["worktree = /elsewhere", "bare = true", "BARE=yes"])
def test_a_config_that_relocates_the_tree_is_left_to_git(store_root: Path, config_line: str) -> None:
    root = store_root.resolve()
    with (root / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write(f"[core]\n\t{config_line}\n")
    assert repository._plain_repository(root) is None


def test_a_config_that_includes_other_files_is_left_to_git(store_root: Path) -> None:
    root = store_root.resolve()
    git(root, "config", "include.path", str(root.parent / "more.gitconfig"))
    assert repository._plain_repository(root) is None
    assert open_store(store_root).opened_at == _git_answer(root)[2]


def test_a_repository_of_another_owner_is_left_to_git(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(repository.os, "geteuid", lambda: os.stat(store_root / ".git").st_uid + 1)
    assert repository._plain_repository(store_root.resolve()) is None


def test_a_linked_worktree_and_a_detached_head_are_located_as_git_does(store_root: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    git(store_root, "worktree", "add", "-q", "--detach", str(linked))
    assert repository._plain_repository(linked.resolve()) is None  # `.git` is a file there: git answers
    assert open_store(linked).opened_at == _git_answer(linked.resolve())[2]
    root = store_root.resolve()
    git(root, "checkout", "-q", "--detach")
    assert repository._plain_repository(root) == _git_answer(root)


def test_an_unborn_branch_is_left_to_git(tmp_path: Path) -> None:
    root = tmp_path / "unborn"
    root.mkdir()
    git(root, "init", "-q")
    assert repository._plain_repository(root.resolve()) is None
