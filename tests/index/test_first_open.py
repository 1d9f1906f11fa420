"""The first open of a store's databases: the files appear whole, however many processes create them at
once (real processes, real DuckDB with the shipped migrations)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from memhtml.index.database import database_paths, open_database
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
    leftovers = sorted(path.name for path in store_root.joinpath(".memhtml").iterdir() if path.is_file())
    assert leftovers == ["index.duckdb", "state.duckdb"]


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
    assert sorted(path.name for path in index_file.parent.iterdir()) == [index_file.name, state_file.name]
