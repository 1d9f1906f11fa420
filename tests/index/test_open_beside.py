"""Opening the index while the command prepares (`open_database(meanwhile=...)`): DuckDB starts its
instance on a thread of its own, the preparation runs in the caller's thread, and whichever fails,
nothing is left open (real DuckDB with the shipped migrations, a real second process holding the file)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memhtml.contracts.errors import LockTimeout
from memhtml.index.database import database_paths, open_database
from memhtml.index.writer_preference import TURNSTILE_SUFFIX
from tests.conftest import another_process_takes_the_index, index_held_by_another_process


class Preparation:
    """A stand-in for a command's preparation: records the thread it ran in, optionally fails."""

    def __init__(self, failure: BaseException | None = None) -> None:
        self.threads: list[threading.Thread] = []
        self.failure = failure

    def __call__(self) -> None:
        self.threads.append(threading.current_thread())
        if self.failure is not None:
            raise self.failure


def test_the_preparation_runs_once_in_the_callers_thread_and_the_index_opens(tmp_path: Path) -> None:
    preparation = Preparation()
    with open_database(tmp_path, meanwhile=preparation) as database:
        assert database.rows("SELECT id FROM index_state") == [(1,)]
        assert database.value('SELECT count(*) FROM "state".schema_migrations') >= 1
        assert not another_process_takes_the_index(tmp_path)  # the open really holds the file
    assert preparation.threads == [threading.current_thread()]
    assert another_process_takes_the_index(tmp_path)


def test_a_failed_preparation_is_raised_and_leaves_the_index_closed(tmp_path: Path) -> None:
    with open_database(tmp_path):
        pass  # the files exist, so the open below starts DuckDB on its thread
    with (
        pytest.raises(LookupError, match="no such model"),
        open_database(tmp_path, meanwhile=Preparation(LookupError("no such model"))),
    ):
        pytest.fail("the block must not run when the preparation failed")
    assert another_process_takes_the_index(tmp_path)


def test_an_open_that_fails_is_raised_after_the_preparation_ran(store_root: Path) -> None:
    with open_database(store_root):
        pass
    preparation = Preparation()
    with (
        index_held_by_another_process(store_root),
        pytest.raises(LockTimeout, match="index"),
        open_database(store_root, lock_wait=0, meanwhile=preparation),
    ):
        pytest.fail("the block must not run when the index could not be opened")
    assert preparation.threads == [threading.current_thread()]
    assert another_process_takes_the_index(store_root)


def test_a_lock_let_go_while_the_command_prepares_is_waited_for(store_root: Path) -> None:
    with open_database(store_root):
        pass
    holder = holding_the_index(store_root)

    def prepare_then_let_go() -> None:
        # The open is retrying on its thread by now; the holder lets go while the command prepares.
        time.sleep(0.3)
        holder.communicate("")

    try:
        with open_database(store_root, lock_wait=10, meanwhile=prepare_then_let_go) as database:
            assert database.value("SELECT count(*) FROM index_state") == 1
    finally:
        if holder.poll() is None:
            holder.kill()
    assert holder.returncode == 0


HOLD_UNTIL_STDIN_CLOSES = (
    "import sys, _duckdb; c = _duckdb.connect(sys.argv[1]); print('held', flush=True); sys.stdin.read()"
)


def holding_the_index(root: Path) -> subprocess.Popen[str]:
    """A second process that holds the index file open read-write until its standard input closes."""
    index_file, _ = database_paths(root)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_UNTIL_STDIN_CLOSES, str(index_file)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_store_opened_for_the_first_time_gets_both_files_whole(tmp_path: Path) -> None:
    preparation = Preparation()
    with open_database(tmp_path / "store", meanwhile=preparation) as database:
        assert database.value("SELECT count(*) FROM schema_migrations") >= 3
    index_file, state_file = database_paths(tmp_path / "store")
    turnstile = index_file.name + TURNSTILE_SUFFIX  # the writers' turnstile, made by the open
    made = sorted(path.name for path in index_file.parent.iterdir() if path.name != turnstile)
    assert made == [index_file.name, state_file.name]
    assert len(preparation.threads) == 1
