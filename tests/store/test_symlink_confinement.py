"""The store's file-system half of path confinement: a memory is a regular file reached through real
directories, and nothing is read, created, rewritten or moved through a symbolic link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memhtml.contracts.errors import InvalidMemory
from memhtml.store.files import (
    LinkedPath,
    create_file_exclusively,
    is_regular_file,
    linked_component,
    read_regular_file,
)
from memhtml.store.gitread import GitCorpusReader
from memhtml.store.repository import open_store
from memhtml.store.transaction import ModificationGuard
from tests.conftest import git, run_cli

SECRET = b"outside secret bytes"


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A root with a real file, a file link and a directory link to an outside directory, a FIFO and
    a directory named like a memory."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "areas" / "inbox").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.html").write_bytes(SECRET)
    (root / "areas" / "inbox" / "real.html").write_bytes(b"inside")
    (root / "areas" / "escape.html").symlink_to(outside / "secret.html")
    (root / "areas" / "linked").symlink_to(outside, target_is_directory=True)
    (root / "areas" / "folder.html").mkdir()
    os.mkfifo(root / "areas" / "pipe.html")
    return root, outside


def test_only_a_regular_file_reached_through_real_directories_is_read(tree: tuple[Path, Path]) -> None:
    root, _ = tree
    assert read_regular_file(root, "areas/inbox/real.html") == b"inside"
    assert is_regular_file(root, "areas/inbox/real.html")
    for linked, component in (("areas/escape.html", "areas/escape.html"), ("areas/linked/secret.html", "areas/linked")):
        with pytest.raises(LinkedPath) as refused:
            read_regular_file(root, linked)
        assert refused.value.component == component
        assert linked_component(root, linked) == component
        assert not is_regular_file(root, linked)
    # Missing, a directory, a FIFO (never opened for a blocking read), a path through a file.
    for absent in ("areas/inbox/nope.html", "areas/folder.html", "areas/pipe.html", "areas/inbox/real.html/x.html"):
        assert read_regular_file(root, absent) is None, absent
        assert not is_regular_file(root, absent), absent
        assert linked_component(root, absent) is None, absent


def test_a_new_file_is_never_created_under_a_directory_link(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    before = sorted(outside.iterdir())
    with pytest.raises(InvalidMemory) as refused:
        create_file_exclusively(root, "areas/linked/new/fresh.html", "text")
    assert "areas/linked is a symbolic link" in refused.value.message and refused.value.suggestions
    assert sorted(outside.iterdir()) == before


def test_the_modification_guard_refuses_a_committed_path_behind_a_link(store_root: Path, tmp_path: Path) -> None:
    written = run_cli(
        "write", "--repo", str(store_root), "--title", "Shared", "--type", "semantic", "--claim", "Shared.",
        "--workspace", "shared",
    ).data  # fmt: skip
    text = (store_root / written["path"]).read_text()
    copy = tmp_path / "copy"
    (store_root / "projects" / "shared").rename(copy)
    (store_root / "projects" / "shared").symlink_to(copy, target_is_directory=True)
    store = open_store(store_root)
    with pytest.raises(InvalidMemory) as refused:
        ModificationGuard(store).check(written["path"], text)  # identical bytes behind the link
    assert "projects/shared is a symbolic link" in refused.value.message
    # The index never projects what sits behind the link either.
    reader = GitCorpusReader(store.root)
    assert reader.worktree_blobs([written["path"]]) == {}
    assert [entry.deleted for entry in reader.dirty() if entry.path == written["path"]] == [True]
    assert git(store_root, "status", "--porcelain").splitlines() == [
        f" D {written['path']}",
        "?? projects/shared",
    ]
