"""Freshness of the index against HEAD, with a HEAD the caller has already read (real git, real DuckDB)."""

from __future__ import annotations

from pathlib import Path

from memhtml.index.database import open_database
from memhtml.index.watermark import is_fresh, watermark
from memhtml.operations.indexing import fresh_index
from memhtml.store.gitread import GitCorpusReader
from memhtml.store.repository import open_store
from tests.conftest import git, run_cli


class CountingReader(GitCorpusReader):
    """The real reader, counting how often it asks git for HEAD."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.head_reads = 0

    def head(self) -> str | None:
        self.head_reads += 1
        return super().head()


def write(root: Path, title: str) -> None:
    answer = run_cli("write", "--repo", str(root), "--title", title, "--type", "semantic", "--claim", f"{title}.")
    assert answer.status == 0, answer.stdout + answer.stderr


def test_an_index_at_the_head_just_seen_is_fresh_without_asking_git(store_root: Path) -> None:
    write(store_root, "The pool ceiling is 64")
    head = git(store_root, "rev-parse", "HEAD").strip()
    reader = CountingReader(store_root)
    with open_database(store_root, read_only=True) as database:
        assert watermark(database)[0] == head
        assert is_fresh(database, reader, head_seen=head)
        assert reader.head_reads == 0
        assert is_fresh(database, reader)
        assert reader.head_reads == 1


def test_a_head_seen_that_the_index_has_moved_past_is_checked_against_git(store_root: Path) -> None:
    write(store_root, "The pool ceiling is 64")
    older = git(store_root, "rev-parse", "HEAD").strip()
    write(store_root, "The retry budget is 3")
    reader = CountingReader(store_root)
    with open_database(store_root, read_only=True) as database:
        assert watermark(database)[0] != older
        assert is_fresh(database, reader, head_seen=older)  # the index holds HEAD as it is now
        assert reader.head_reads == 1


def titles(database_rows: list[tuple[object, ...]]) -> set[object]:
    return {row[0] for row in database_rows}


def test_a_command_that_committed_since_opening_reads_the_new_commit(store_root: Path) -> None:
    write(store_root, "The pool ceiling is 64")
    write(store_root, "The retry budget is 3")
    store = open_store(store_root)
    # A commit the index has not seen lands after this command opened the store.
    retired = next(path for path in git(store_root, "ls-files").split() if path.endswith(".html") and "retry" in path)
    git(store_root, "rm", "-q", retired)
    git(store_root, "commit", "-q", "-m", "retire the retry budget")
    # Claiming to have committed nothing answers as of the commit the store was opened on ...
    with fresh_index(store, committed_nothing=True) as database:
        assert "The retry budget is 3" in titles(database.rows("SELECT title FROM files"))
    # ... and a command that committed (the default) reads HEAD as it is now.
    with fresh_index(store) as database:
        assert titles(database.rows("SELECT title FROM files")) == {"The pool ceiling is 64"}


def test_open_store_records_the_head_it_opened_on(store_root: Path) -> None:
    write(store_root, "The pool ceiling is 64")
    assert open_store(store_root).opened_at == git(store_root, "rev-parse", "HEAD").strip()
