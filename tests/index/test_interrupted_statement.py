"""A signal taken while DuckDB runs a statement is an interrupt, not a defect.

DuckDB answers a Python signal handler that raises during a statement by cancelling it and raising
`RuntimeError("Query interrupted")`, with the handler's KeyboardInterrupt dropped: a write signalled
while it caught the index up answered `ERR_UNKNOWN "unexpected failure (RuntimeError)"` instead of
"interrupted, nothing stored".

Each case runs in a process of its own: the signal handlers, timers and DuckDB instance of a test
process are shared with whatever ran before in it, and a statement the signal fails to stop must end
the test with a failure, not hold it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_cli

_PROBE = r"""
import json, signal, sys
from pathlib import Path
from memhtml.index.database import open_database

def interrupt(_signal, _frame):
    raise KeyboardInterrupt

signal.signal(signal.SIGALRM, interrupt)
long_statement = "SELECT count(*) FROM range(200000000000) t(x) WHERE x % 7 = 3"  # cancelled at once
answer = {}
with open_database(Path(sys.argv[1])) as database:
    answer["files_before"] = database.value("SELECT count(*) FROM files")
    # One thread: the calling thread runs every task of the statement itself and asks Python for
    # signals between them, so the alarm is seen however loaded the machine is (with helper threads it
    # may wait for the whole statement).
    database.run("SET threads = 1")
    try:
        if sys.argv[2] == "transaction":
            with database.transaction():
                database.run("DELETE FROM files")
                signal.setitimer(signal.ITIMER_REAL, 0.2)
                database.rows(long_statement)
        else:
            signal.setitimer(signal.ITIMER_REAL, 0.2)
            database.rows(long_statement)
        answer["raised"] = None
    except BaseException as error:
        answer["raised"] = type(error).__name__
    answer["files_after"] = database.value("SELECT count(*) FROM files")
    with database.transaction():  # no transaction is left open
        answer["usable"] = database.value("SELECT 1") == 1
print(json.dumps(answer))
"""


def _probe(store_root: Path, mode: str) -> dict[str, object]:
    completed = subprocess.run(
        [sys.executable, "-c", _PROBE, str(store_root), mode],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    answer = json.loads(completed.stdout)
    assert isinstance(answer, dict)
    return answer


def _store_with_one_memory(store_root: Path) -> None:
    written = run_cli(
        "write", "--repo", str(store_root), "--title", "Kept", "--type", "semantic", "--claim", "Rows stay put."
    )
    assert written.status == 0, written.stdout


def test_a_signal_during_a_statement_raises_keyboard_interrupt(store_root: Path) -> None:
    _store_with_one_memory(store_root)
    answer = _probe(store_root, "plain")
    assert answer["raised"] == "KeyboardInterrupt"
    assert answer["usable"] is True  # the connection still answers after the cancelled statement


def test_a_signal_inside_a_transaction_rolls_it_back_and_raises_keyboard_interrupt(store_root: Path) -> None:
    _store_with_one_memory(store_root)
    answer = _probe(store_root, "transaction")
    assert answer["raised"] == "KeyboardInterrupt"
    assert answer["files_before"] == 1 and answer["files_after"] == 1  # the delete was rolled back
    assert answer["usable"] is True
