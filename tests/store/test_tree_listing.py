"""`GitCorpusReader.tree`: the memory paths of a commit, all of them or only those asked for."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memhtml.store import gitread
from memhtml.store.gitread import GitCorpusReader
from tests.conftest import run_cli


def test_asking_for_no_paths_lists_none_without_reading_the_tree(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = run_cli("write", "--repo", str(store_root), "--title", "T", "--type", "semantic", "--claim", "A fact.")
    assert written.status == 0, written.stdout + written.stderr
    reader = GitCorpusReader(store_root)
    head = reader.head()
    assert head is not None
    assert list(reader.tree(head)) == [written.data["path"]]
    assert reader.tree(head, [written.data["path"]]) == reader.tree(head)
    listings: list[tuple[str, ...]] = []
    real = gitread.tree_blobs

    def counted(root: Path, commit: str, pathspec: tuple[str, ...] = ()) -> Iterator[tuple[str, str, str]]:
        listings.append(tuple(pathspec))
        return real(root, commit, pathspec)

    monkeypatch.setattr(gitread, "tree_blobs", counted)
    assert reader.tree(head, []) == {}
    assert listings == []  # an empty pathspec would have listed every file of the commit
