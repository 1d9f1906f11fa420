"""A signal taken while DuckDB runs a statement is an interrupt, not a defect.

DuckDB answers a Python signal handler that raises during a statement by cancelling it and raising
`RuntimeError("Query interrupted")`, with the handler's KeyboardInterrupt dropped: a write signalled
while it caught the index up answered `ERR_UNKNOWN "unexpected failure (RuntimeError)"` instead of
"interrupted, nothing stored".
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from memhtml.index.database import open_database
from tests.conftest import run_cli

# Long enough that the alarm always lands inside it (it is cancelled at once).
_LONG_STATEMENT = "SELECT count(*) FROM range(200000000000) t(x) WHERE x % 7 = 3"


@pytest.fixture
def alarm_raises_keyboard_interrupt() -> Iterator[None]:
    def interrupt(_signal: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_signal_during_a_statement_raises_keyboard_interrupt(
    store_root: Path, alarm_raises_keyboard_interrupt: None
) -> None:
    assert run_cli("status", "--repo", str(store_root), "--json").status == 0  # the index exists
    with open_database(store_root) as database:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(KeyboardInterrupt):
            database.rows(_LONG_STATEMENT)
        # The connection is still usable after the cancelled statement.
        assert database.value("SELECT 1") == 1


def test_a_signal_inside_a_transaction_rolls_it_back_and_raises_keyboard_interrupt(
    store_root: Path, alarm_raises_keyboard_interrupt: None
) -> None:
    written = run_cli(
        "write", "--repo", str(store_root), "--title", "Kept", "--type", "semantic", "--claim", "Rows stay put."
    )
    assert written.status == 0, written.stdout
    with open_database(store_root) as database:
        files_before = database.value("SELECT count(*) FROM files")
        assert files_before == 1
        with pytest.raises(KeyboardInterrupt), database.transaction():
            database.run("DELETE FROM files")
            signal.setitimer(signal.ITIMER_REAL, 0.2)
            database.rows(_LONG_STATEMENT)
        assert database.value("SELECT count(*) FROM files") == files_before  # rolled back
        with database.transaction():  # and no transaction is left open
            assert database.value("SELECT 1") == 1
