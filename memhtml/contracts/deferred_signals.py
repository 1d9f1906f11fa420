"""Holding SIGINT, SIGTERM and SIGHUP back across a stretch no Python exception may land in: the import of
a native module that builds its Python types as it loads.

DuckDB's binding aborts the whole process (SIGABRT, "Critical nanobind error") when a signal handler
raises while it creates its enums, so a Ctrl-C at the wrong moment of a command's start-up killed it
without an answer. Blocking the signal in the importing thread is not enough: the kernel may hand it to
another thread, and Python runs its handler in the main thread whichever thread received it. So the
handlers themselves are swapped for ones that only note the signal, and the signal is raised again once
the stretch is over, reaching whatever handler was there before (the command's own, or Python's).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Final

DEFERRED_SIGNALS: Final[tuple[signal.Signals, ...]] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Note the signals that arrive during the block and raise the first of them after it. Off the main
    thread the block runs as it is: Python runs signal handlers only in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        arrived.append(signum)

    previous = {number: signal.signal(number, note) for number in DEFERRED_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if arrived:
            signal.raise_signal(arrived[0])
