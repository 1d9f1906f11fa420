"""The first open of a store's databases: the files appear whole, however many processes create them at
once (real processes, real DuckDB with the shipped migrations)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memhtml.contracts.errors import StorageFailure
from memhtml.index.database import database_paths, open_database
from memhtml.index.writer_preference import TURNSTILE_SUFFIX
from tests.conftest import run_cli


def test_processes_opening_a_store_with_no_index_at_once_never_fail(store_root: Path) -> None:
    answer = run_cli("write", "--repo", str(store_root), "--title", "Pool", "--type", "semantic", "--claim", "64.")
    assert answer.status == 0, answer.stdout
    for _ in range(8):
        for file in store_root.joinpath(".memhtml").glob("*.duckdb*"):
            file.unlink()
        racers = [
            subprocess.Popen(
                [sys.executable, "-m", "memhtml", "search", "--repo", str(store_root), "pool"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(8)
        ]
        for racer in racers:
            out, err = racer.communicate(timeout=120)
            assert racer.returncode == 0, out + err
    leftovers = {path.name for path in store_root.joinpath(".memhtml").iterdir() if path.is_file()}
    # The two files and, at most, the write-ahead logs their last commits left for the next open and the
    # writers' turnstile: no private copy of a publish, and no log set aside as another file's.
    assert (
        {"index.duckdb", "state.duckdb"}
        <= leftovers
        <= {
            "index.duckdb",
            "state.duckdb",
            "index.duckdb.wal",
            "state.duckdb.wal",
            "index.duckdb" + TURNSTILE_SUFFIX,
        }
    )


def test_files_created_by_many_threads_at_once_are_one_migrated_pair(tmp_path: Path) -> None:
    failures: list[BaseException] = []

    def first_open() -> None:
        try:
            with open_database(tmp_path, read_only=True):
                pass
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=first_open) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Readers of a file being published by another thread may meet its lock; never a half-made file.
    assert all("could not be opened" not in str(error) for error in failures), failures
    index_file, state_file = database_paths(tmp_path)
    with open_database(tmp_path, read_only=True) as database:
        assert database.rows("SELECT id FROM index_state") == [(1,)]
        assert database.value('SELECT count(*) FROM "state".schema_migrations') >= 1
    turnstile = index_file.name + TURNSTILE_SUFFIX  # the writers' turnstile, made by the first open
    made = sorted(path.name for path in index_file.parent.iterdir() if path.name != turnstile)
    assert made == [index_file.name, state_file.name]


@pytest.mark.parametrize("plane", ["index", "state"])
def test_a_migration_naming_its_plane_runs_when_the_file_is_created(tmp_path: Path, shipped: Path, plane: str) -> None:
    # Migrations may name their plane's catalog: a file being created runs them as an existing one does.
    qualified = "main.probe" if plane == "index" else "state.probe"
    (shipped / plane / "0099_probe.sql").write_text(f"CREATE TABLE {qualified} (id INTEGER);\n", encoding="utf-8")
    with open_database(tmp_path / "store") as database:
        assert database.value(f"SELECT count(*) FROM {'main' if plane == 'index' else 'state'}.probe") == 0


@pytest.mark.parametrize("plane", ["index", "state"])
def test_a_file_that_cannot_be_created_leaves_nothing_behind(tmp_path: Path, shipped: Path, plane: str) -> None:
    (shipped / plane / "0099_broken.sql").write_text("CREATE TABLE broken (;\n", encoding="utf-8")
    store = tmp_path / "store"
    with pytest.raises(StorageFailure), open_database(store):
        pass
    index_file, state_file = database_paths(store)
    left = sorted(path.name for path in index_file.parent.iterdir())
    # The other plane may have been created whole; the broken one is not there, half-made or otherwise.
    assert (index_file if plane == "index" else state_file).name not in left
    assert all(name in (index_file.name, state_file.name) for name in left), left
