"""A command's catch-up without a working-tree scan (every read and write) still takes the paths the
commits changed as the working tree has them, and leaves the index as a rebuild would."""

from __future__ import annotations

from pathlib import Path

import pytest

from memhtml.contracts.corpus import DirtyEntry
from memhtml.index.database import open_database
from tests.conftest import git, run_cli
from tests.index.test_indexer import rebuilt_snapshot, snapshot
from tests.index.test_search import commit_files, memory_file


def listed(root: Path) -> list[str]:
    """The memories `list` answers with: a read, whose catch-up runs without a working-tree scan."""
    answer = run_cli("list", "--repo", str(root), "--limit", "100")
    assert answer.status == 0, answer.stdout + answer.stderr
    return sorted(item["path"] for item in answer.data["files"])


def found(root: Path, query: str) -> list[str]:
    answer = run_cli("search", "--repo", str(root), query)
    assert answer.status == 0, answer.stdout + answer.stderr
    return [hit["path"] for hit in answer.data["hits"]]


def index_update(root: Path) -> None:
    answer = run_cli("index", "update", "--repo", str(root))
    assert answer.status == 0, answer.stdout + answer.stderr


def test_a_reset_that_keeps_the_changes_keeps_them_searchable(store_root: Path, tmp_path: Path) -> None:
    commit_files(store_root, {"areas/a/p.html": memory_file("P", "The pelican wades.")})
    commit_files(
        store_root,
        {
            "areas/a/p.html": memory_file("P", "The pelican wades and the egret waits."),
            "areas/a/n.html": memory_file("N", "The narwhal dives."),
        },
    )
    assert found(store_root, "egret") == ["areas/a/p.html"]
    git(store_root, "reset", "-q", "HEAD~1")  # both changes stay on disk, no longer committed
    assert found(store_root, "egret") == ["areas/a/p.html"]
    assert found(store_root, "narwhal") == ["areas/a/n.html"]
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


def test_a_file_taken_out_of_git_stays_indexed_while_it_is_on_disk(store_root: Path, tmp_path: Path) -> None:
    commit_files(store_root, {"areas/a/p.html": memory_file("P", "The pelican wades.")})
    index_update(store_root)
    git(store_root, "rm", "-q", "--cached", "areas/a/p.html")
    git(store_root, "commit", "-q", "-m", "untrack")
    assert listed(store_root) == ["areas/a/p.html"]
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


def test_an_ignored_file_taken_out_of_git_is_not_indexed(store_root: Path, tmp_path: Path) -> None:
    commit_files(store_root, {"areas/a/p.html": memory_file("P", "The pelican wades.")})
    index_update(store_root)
    (store_root / "areas" / "a" / ".gitignore").write_text("p.html\n")
    git(store_root, "rm", "-q", "--cached", "areas/a/p.html")
    git(store_root, "add", "areas/a/.gitignore")
    git(store_root, "commit", "-q", "-m", "untrack and ignore")
    assert listed(store_root) == []
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


def test_a_partial_commit_leaves_the_text_on_disk_searchable(store_root: Path, tmp_path: Path) -> None:
    path = store_root / "areas" / "a" / "p.html"
    commit_files(store_root, {"areas/a/p.html": memory_file("P", "The pelican wades.")})
    path.write_text(memory_file("P", "The pelican wades past the dunlin."))
    index_update(store_root)
    staged = memory_file("P", "The pelican wades past the egret.")
    on_disk = path.read_text()
    path.write_text(staged)
    git(store_root, "add", "areas/a/p.html")
    path.write_text(on_disk)  # the dirty edit back on disk, another version committed
    git(store_root, "commit", "-q", "-m", "partial")
    assert found(store_root, "dunlin") == ["areas/a/p.html"]
    assert found(store_root, "egret") == []
    assert found(store_root, "dunlin") == ["areas/a/p.html"]
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


def test_a_copy_committed_since_it_was_indexed_from_disk_is_held_as_a_rebuild_holds_it(
    store_root: Path, tmp_path: Path
) -> None:
    claim = "The dunlin feeds at dusk."
    commit_files(
        store_root,
        {"areas/a/x11.html": memory_file("Dunlin", claim), "areas/b/other.html": memory_file("O", "Otters play.")},
    )
    (store_root / "areas" / "a" / "f7.html").write_text(memory_file("Dunlin", claim))
    index_update(store_root)  # f7, untracked, is the second copy: listed as a duplicate
    commit_files(store_root, {"areas/a/f7.html": memory_file("Dunlin", claim)}, message="commit the copy")
    listed(store_root)
    with open_database(store_root, read_only=True) as database:
        assert database.rows("SELECT dirty_paths FROM index_state") == [([],)]
    commit_files(store_root, {"areas/b/other.html": memory_file("O", "Otters play all day.")}, message="edit")
    assert found(store_root, "dunlin") == ["areas/a/f7.html"]  # the smaller committed path holds it
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


def test_a_rename_with_an_edit_leaves_no_vector_of_the_old_text(store_root: Path) -> None:
    commit_files(store_root, {"areas/a/old.html": memory_file("Old", "The avocet sweeps the mud for food.")})
    index_update(store_root)
    git(store_root, "mv", "areas/a/old.html", "areas/a/new.html")
    (store_root / "areas" / "a" / "new.html").write_text(memory_file("Old", "The avocet sweeps the mud for worms."))
    git(store_root, "commit", "-q", "-a", "-m", "move and edit")
    index_update(store_root)
    with open_database(store_root, read_only=True) as database:
        hashes = database.rows("SELECT content_hash FROM files")
        assert database.rows("SELECT DISTINCT content_hash FROM chunk_vectors") == hashes


def test_a_committed_file_a_sparse_checkout_leaves_off_the_disk_stays_indexed(store_root: Path, tmp_path: Path) -> None:
    index_update(store_root)
    commit_files(
        store_root,
        {
            "areas/kept/p.html": memory_file("P", "The pelican wades."),
            "areas/away/q.html": memory_file("Q", "The quail."),
        },
    )
    git(store_root, "sparse-checkout", "set", "--no-cone", "/*", "!/areas/away/")
    assert not (store_root / "areas" / "away" / "q.html").exists()
    assert listed(store_root) == ["areas/away/q.html", "areas/kept/p.html"]
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


@pytest.mark.parametrize("limit", [2_000, 1], ids=["paths named", "past the limit: the buckets' status"])
def test_dirty_among_answers_as_the_whole_status_would(
    store_root: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    from memhtml.store import gitread

    commit_files(
        store_root,
        {"areas/a/p.html": memory_file("P", "The pelican."), "areas/a/q.html": memory_file("Q", "The quail.")},
    )
    (store_root / "areas" / "a" / "p.html").write_text(memory_file("P", "The pelican wades."))
    (store_root / "areas" / "a" / "q.html").unlink()
    (store_root / "areas" / "a" / "n.html").write_text(memory_file("N", "The narwhal."))
    (store_root / "areas" / "a" / ".gitignore").write_text("i.html\n")
    (store_root / "areas" / "a" / "i.html").write_text(memory_file("I", "The ibis."))
    monkeypatch.setattr(gitread, "PATHS_ASKED_LIMIT", limit)
    reader = gitread.GitCorpusReader(store_root)
    asked = ["areas/a/p.html", "areas/a/q.html", "areas/a/n.html", "areas/a/i.html", "areas/a/clean.html"]
    assert sorted(reader.dirty_among(asked)) == [
        DirtyEntry("areas/a/n.html", deleted=False),
        DirtyEntry("areas/a/p.html", deleted=False),
        DirtyEntry("areas/a/q.html", deleted=True),
    ]
    assert reader.dirty_among(["areas/a/p.html"]) == [DirtyEntry("areas/a/p.html", deleted=False)]
