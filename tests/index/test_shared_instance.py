"""One DuckDB instance for a long-lived process: each open attaches the store's files and detaches them
when it ends, so other processes can take the files between opens and see everything written."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memhtml.contracts.errors import LockTimeout
from memhtml.index import database as database_module
from memhtml.index.database import open_database
from memhtml.index.indexer import rebuild
from memhtml.store.gitread import GitCorpusReader
from tests.conftest import index_held_by_another_process
from tests.index.test_search import commit_files, memory_file


@pytest.fixture
def instance(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """This process's shared instance, started for the test alone."""
    monkeypatch.setattr(database_module, "_shared_instance", [])
    monkeypatch.setattr(database_module, "_shared_in_use", [False])
    database_module.share_one_instance()
    shared = database_module._shared_instance[0]
    yield shared
    shared.close()


def _in_another_process(store: Path, statement: str, *, read_only: bool = False) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from memhtml.contracts.errors import LockTimeout
        from memhtml.index.database import open_database
        try:
            with open_database(Path({str(store)!r}), read_only={read_only!r}, lock_wait=0) as database:
                print(database.rows({statement!r}))
        except LockTimeout as failure:
            print("refused:", failure.message)
            sys.exit(3)
        """
    )
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60)


def test_opens_reuse_the_instance_and_leave_the_files_to_other_processes(tmp_path: Path, instance: Any) -> None:
    store = tmp_path / "store"
    with open_database(store) as database:  # created and migrated through the shared instance
        assert database._connection is instance
        database.run("UPDATE index_state SET updated_at = 'written in the shared instance' WHERE id = 1")
        database.run("INSERT INTO state.access (path, access_count, updated_at) VALUES ('a.html', 7, 'now')")
    seen = _in_another_process(store, "SELECT updated_at FROM index_state")
    assert seen.returncode == 0, seen.stdout + seen.stderr
    assert "written in the shared instance" in seen.stdout
    counted = _in_another_process(store, "SELECT access_count FROM state.access")
    assert "(7,)" in counted.stdout, counted.stdout + counted.stderr
    with open_database(store, read_only=True) as again:
        assert again._connection is instance and again.read_only
        assert again.value("SELECT updated_at FROM index_state") == "written in the shared instance"


def test_an_open_holds_the_files_until_it_ends(tmp_path: Path, instance: Any) -> None:
    store = tmp_path / "store"
    with open_database(store):
        pass
    with open_database(store, read_only=True):
        held = _in_another_process(store, "SELECT 1")
        assert held.returncode == 3 and "held by another memhtml process" in held.stdout, held.stdout + held.stderr
    released = _in_another_process(store, "SELECT 1")
    assert released.returncode == 0, released.stdout + released.stderr


def test_opens_never_nest(tmp_path: Path, instance: Any) -> None:
    store = tmp_path / "store"
    with open_database(store), pytest.raises(RuntimeError, match="never nest"), open_database(store):
        pass
    with open_database(store, read_only=True) as after:  # the refused open left nothing attached
        assert after.value("SELECT count(*) FROM index_state") == 1


def test_a_file_another_process_holds_is_refused_and_the_instance_stays_usable(tmp_path: Path, instance: Any) -> None:
    store = tmp_path / "store"
    with open_database(store):
        pass
    with (
        index_held_by_another_process(store),
        pytest.raises(LockTimeout, match="held by another memhtml process"),
        open_database(store, lock_wait=0),
    ):
        pass
    with open_database(store, read_only=True) as after:
        assert after._connection is instance


def test_a_rebuild_in_the_shared_instance_re_creates_the_tables_in_the_attached_index(
    store_root: Path, instance: Any
) -> None:
    commit_files(
        store_root,
        {
            "areas/inbox/pool.html": memory_file("Pool", "The connection pool ceiling is 64."),
            "areas/inbox/retry.html": memory_file("Retry", "The retry budget is 3."),
        },
    )
    with open_database(store_root) as database:
        assert database._connection is instance
        first = rebuild(database, GitCorpusReader(store_root), "2026-11-30T00:00:00Z")
        again = rebuild(database, GitCorpusReader(store_root), "2026-11-30T00:00:01Z")  # over full tables
        assert first.files_indexed == again.files_indexed == 2
    # Nothing was created in the instance's own catalog; the attached file holds the rows.
    assert instance.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'memory'").fetchone() == (0,)
    seen = _in_another_process(store_root, "SELECT count(*) FROM files", read_only=True)
    assert seen.returncode == 0 and "(2,)" in seen.stdout, seen.stdout + seen.stderr
