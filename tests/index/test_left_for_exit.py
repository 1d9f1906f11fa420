"""A process that ends with `os._exit` (the `memhtml` executable: `lifetime.end_by_exit`) leaves its last
DuckDB connection for the exit instead of tearing the instance down: nothing it committed is lost, a
later open in the same process never meets it, and a process that ends the ordinary way closes it.
Real DuckDB files with the shipped migrations and real second processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import _duckdb as duckdb
import pytest

from memhtml.contracts import lifetime
from memhtml.index import database as database_module
from memhtml.index.database import open_database
from memhtml.index.setaside import index_identity, set_aside_index
from tests.conftest import another_process_takes_the_index


@pytest.fixture
def ends_by_exit(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This test process behaves as the executable does; whatever it left open is closed afterwards."""
    monkeypatch.setattr(lifetime, "_ends_by_exit", [True])
    monkeypatch.setattr(lifetime, "_deferred", [])
    yield
    database_module.close_left_connections()


def test_a_process_that_ends_by_exit_loses_nothing_it_committed(tmp_path: Path) -> None:
    root = tmp_path / "store"
    script = textwrap.dedent(
        f"""
        import os
        from pathlib import Path
        from memhtml.contracts import lifetime
        from memhtml.index import database
        lifetime.end_by_exit()
        with database.open_database(Path({str(root)!r})) as opened:
            opened.run("UPDATE index_state SET updated_at = 'written before the exit' WHERE id = 1")
            opened.run("INSERT INTO state.access (path, access_count, updated_at) VALUES ('a.html', 7, 'now')")
        print(len(database._left_for_exit), flush=True)
        os._exit(0)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "1"  # the connection was still open when the process ended
    with open_database(root, read_only=True) as database:
        assert database.value("SELECT updated_at FROM index_state") == "written before the exit"
        assert database.value("SELECT access_count FROM state.access WHERE path = 'a.html'") == 7


def test_closing_leaves_the_connection_open_until_the_next_open_or_the_release(
    tmp_path: Path, ends_by_exit: None
) -> None:
    with open_database(tmp_path) as database:
        database.run("UPDATE index_state SET updated_at = 'first' WHERE id = 1")
    assert len(database_module._left_for_exit) == 1
    assert not another_process_takes_the_index(tmp_path)  # still held: the exit releases it
    # Another open in the same process, in another mode: the connection left open is closed first (DuckDB
    # would otherwise hand it the instance still open, or refuse the other mode).
    with open_database(tmp_path, read_only=True) as database:
        assert database.value("SELECT updated_at FROM index_state") == "first"
    assert len(database_module._left_for_exit) == 1
    with open_database(tmp_path) as database:
        database.run("UPDATE index_state SET updated_at = 'second' WHERE id = 1")
    lifetime.release_deferred()  # the process ends the ordinary way after all
    assert database_module._left_for_exit == []
    assert another_process_takes_the_index(tmp_path)
    with open_database(tmp_path, read_only=True) as database:
        assert database.value("SELECT updated_at FROM index_state") == "second"


def test_a_process_that_lives_on_closes_at_once(tmp_path: Path) -> None:
    assert not lifetime.ends_by_exit()  # the test process never said it ends by exit
    with open_database(tmp_path) as database:
        database.run("UPDATE index_state SET updated_at = 'closed' WHERE id = 1")
    assert database_module._left_for_exit == []
    assert another_process_takes_the_index(tmp_path)


def test_a_damaged_file_is_let_go_before_it_is_set_aside(tmp_path: Path, ends_by_exit: None) -> None:
    with open_database(tmp_path, read_only=False):
        pass
    opened = index_identity(tmp_path)
    assert database_module._left_for_exit
    aside = set_aside_index(tmp_path, "2026-12-03T10:00:00Z", opened)
    assert aside is not None and aside.exists()
    assert database_module._left_for_exit == []


@pytest.mark.parametrize("shared", [False, True], ids=["own instance", "shared instance"])
def test_the_main_catalog_named_by_the_open_is_the_one_duckdb_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: bool
) -> None:
    if shared:
        monkeypatch.setattr(database_module, "_shared_instance", [])
        monkeypatch.setattr(database_module, "_shared_in_use", [False])
        database_module.share_one_instance()
    try:
        with open_database(tmp_path) as database:
            assert database.main_catalog == database.value("SELECT current_database()")
            database.run("USE state")
            database.run(f'USE "{database.main_catalog}"')  # where statements switch back to
            assert database.value("SELECT count(*) FROM index_state") == 1
    finally:
        if shared:
            database_module._shared_instance[0].close()


def test_duckdb_names_a_files_catalog_up_to_its_first_dot(tmp_path: Path) -> None:
    for name in ("index.duckdb", "index.duckdb.12-ab.tmp", "plain"):
        connection = duckdb.connect(str(tmp_path / name))
        try:
            expected = database_module._catalog_of(tmp_path / name, shared=False)
            assert connection.execute("SELECT current_database()").fetchall() == [(expected,)]
        finally:
            connection.close()


def test_a_connection_left_for_the_exit_is_let_go_before_the_writers_turnstile_is_waited_for(
    tmp_path: Path, ends_by_exit: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search that finds the index stale has closed its read-only open (left for the exit) and opens it
    again to catch it up. Waiting at the turnstile with that connection still open, it kept the writer
    already past the turnstile out of the file: four searches and a write started on a stale index waited
    ≈20 s for each other, and one failed with the index "held by another memhtml process"."""
    with open_database(tmp_path):
        pass
    with open_database(tmp_path, read_only=True):
        pass
    assert len(database_module._left_for_exit) == 1
    free_at_the_turnstile: list[bool] = []
    passing = database_module.writers_first

    @contextmanager
    def observed(index_file: Path, *, writer: bool, wait_seconds: float) -> Iterator[None]:
        free_at_the_turnstile.append(another_process_takes_the_index(tmp_path))
        with passing(index_file, writer=writer, wait_seconds=wait_seconds):
            yield

    monkeypatch.setattr(database_module, "writers_first", observed)
    with open_database(tmp_path) as database:
        assert not database.read_only
    assert free_at_the_turnstile == [True]
