"""A file the index projected from the working tree that then changes there (deleted, reverted, edited
again) stops answering at the next read command, not only at the next `index update`; the pass that
puts a reverted file back says it changed something."""

from __future__ import annotations

from pathlib import Path

from memhtml.index.database import open_database
from memhtml.index.indexer import update
from memhtml.store.gitread import GitCorpusReader
from tests.conftest import git, run_cli
from tests.index.test_indexer import NOW, write


def _paths(root: Path, command: str, query: str) -> list[str]:
    answer = run_cli(command, "--repo", str(root), query)
    assert answer.status == 0, answer.stdout + answer.stderr
    if command == "search":
        return [hit["path"] for hit in answer.data["hits"]]
    return [item["path"] for item in answer.data["memories"]["disclosed"]] + [
        line["path"] for line in answer.data["memories"]["indexLines"]
    ]


def _replace_in(file: Path, old: str, new: str) -> None:
    text = file.read_text(encoding="utf-8")
    assert old in text
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_deleted_untracked_memory_stops_answering_at_the_next_search(store_root: Path) -> None:
    source = store_root / write(store_root, "Tea", "The user prefers green tea in the morning.")
    copy = source.with_name("darjeeling.html")
    copy.write_text(source.read_text(encoding="utf-8").replace("green", "darjeeling"), encoding="utf-8")
    assert run_cli("index", "update", "--repo", str(store_root)).status == 0
    assert _paths(store_root, "search", "darjeeling") == ["areas/inbox/darjeeling.html"]
    copy.unlink()
    assert _paths(store_root, "search", "darjeeling") == []
    listed = run_cli("list", "--repo", str(store_root))
    assert "areas/inbox/darjeeling.html" not in [item["path"] for item in listed.data["files"]]


def test_a_reverted_dirty_edit_stops_answering_at_the_next_search_and_recall(store_root: Path) -> None:
    path = write(store_root, "Pool", "The connection pool size is 40.")
    _replace_in(store_root / path, "size is 40", "size is 40 zebrafish")
    assert run_cli("index", "update", "--repo", str(store_root)).status == 0
    assert _paths(store_root, "search", "zebrafish") == [path]
    git(store_root, "checkout", "--", path)
    assert _paths(store_root, "search", "zebrafish") == []
    assert _paths(store_root, "recall", "zebrafish") == []
    assert _paths(store_root, "search", "connection pool") == [path]  # the committed text answers again


def test_a_dirty_file_edited_again_answers_with_its_new_text(store_root: Path) -> None:
    path = write(store_root, "Pool", "The connection pool size is 40.")
    _replace_in(store_root / path, "size is 40", "size is 40 zebrafish")
    assert run_cli("index", "update", "--repo", str(store_root)).status == 0
    _replace_in(store_root / path, "zebrafish", "okapi")
    assert _paths(store_root, "search", "zebrafish") == []
    assert _paths(store_root, "search", "okapi") == [path]


def test_the_pass_that_puts_a_reverted_file_back_reports_a_change(store_root: Path) -> None:
    path = write(store_root, "Pool", "The connection pool size is 40.")
    _replace_in(store_root / path, "size is 40", "size is 40 zebrafish")
    with open_database(store_root) as database:
        assert update(database, GitCorpusReader(store_root), NOW).dirty == 1
    git(store_root, "checkout", "--", path)
    with open_database(store_root) as database:
        report = update(database, GitCorpusReader(store_root), NOW)
    assert report.modified == 1 and not report.unchanged


def test_reverting_an_edit_that_broke_a_memory_brings_it_back_at_the_next_search(store_root: Path) -> None:
    path = write(store_root, "Pool", "The connection pool size is 40.")
    file = store_root / path
    file.write_text(
        file.read_text(encoding="utf-8").replace("<mark>", "<b>").replace("</mark>", "</b>"), encoding="utf-8"
    )
    assert run_cli("index", "update", "--repo", str(store_root)).status == 0
    assert _paths(store_root, "search", "connection pool") == []  # the broken file has no row
    git(store_root, "checkout", "--", path)
    assert _paths(store_root, "search", "connection pool") == [path]


def test_a_dirty_edit_committed_since_is_counted_once(store_root: Path) -> None:
    path = write(store_root, "Pool", "The connection pool size is 40.")
    _replace_in(store_root / path, "size is 40", "size is 40 zebrafish")
    with open_database(store_root) as database:
        assert update(database, GitCorpusReader(store_root), NOW).dirty == 1
    git(store_root, "commit", "-q", "-am", "commit the edit")
    with open_database(store_root) as database:
        report = update(database, GitCorpusReader(store_root), NOW)
    assert (report.modified, report.added, report.removed, report.dirty) == (1, 0, 0, 0)
