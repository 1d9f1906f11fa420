"""`open_store` opens an initialized store and refuses every other directory without writing a byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from memhtml.contracts.errors import NotAStore
from memhtml.contracts.vocabulary import PARA_BUCKETS
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
