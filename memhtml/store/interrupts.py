"""When a signal may stop this process: before a write's commit lands, at once; after it, never.

SIGINT, SIGTERM and SIGHUP become `KeyboardInterrupt`, so whatever the process is doing unwinds through
its rollbacks and the door still answers one envelope. Two kinds of stretch hold a signal back instead:

- a step that must not be cut in two (`held`): a file created and noted in the journal, an undo, the
  compare-and-swap that publishes a commit; the signal interrupts as soon as the step is over;
- everything after a commit of this process landed (`commit_landed`): the only true answer is then
  success, so the signal is only noted (`interrupt_requested`). Work that follows a commit and may be
  left to the next command (the index pass) asks for it and stops early; the answer is never cut.

The state is the process's, like its signal handlers: only the main thread takes signals, so a step held
by another thread holds nothing back (that thread is never interrupted anyway). The handlers are
installed for the length of `signals_taken` (the executable's whole command, or a store transaction
run by a library caller) and put back after it.
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Final

TAKEN_SIGNALS: Final[tuple[signal.Signals, ...]] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
RETRY_SECONDS: Final[float] = 0.001  # how soon a signal that landed inside an import is delivered again


class _State:
    installed = False
    depth = 0  # how many held steps the main thread is inside
    pending: int | None = None  # the signal held back, if any
    landed = False  # a commit of this process landed: nothing may interrupt the answer now


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _State.landed or _State.depth:
        _State.pending = signum
        return
    if frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        # Raised in the import machinery's lock callbacks, an exception is printed and lost while the
        # import goes on. The signal is delivered again a moment later, from a thread (tripped from
        # here, it would come back at once, still inside the machinery), until it lands outside.
        retry = threading.Timer(RETRY_SECONDS, _thread.interrupt_main, (signum,))
        retry.daemon = True
        retry.start()
        return
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def signals_taken() -> Iterator[None]:
    """Take SIGINT, SIGTERM and SIGHUP for the block (see the module's docstring); nested blocks and
    threads other than the main one leave the handlers as they are."""
    if _State.installed or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, _on_signal) for number in TAKEN_SIGNALS}
    _State.installed, _State.depth, _State.pending, _State.landed = True, 0, None, False
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        _State.installed, _State.depth, _State.pending, _State.landed = False, 0, None, False


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Hold signals back for a step that must not be cut in two; one that arrived meanwhile interrupts
    when the step ends, unless a commit landed in it (or the step failed on its own)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _State.depth += 1
    try:
        yield
    finally:
        _State.depth -= 1
    if _State.depth == 0 and _State.pending is not None and not _State.landed:
        _State.pending = None
        raise KeyboardInterrupt("signal during a step that had to finish first")


def commit_landed() -> None:
    """A commit of this process is on its branch: from now on a signal is only noted, never raised."""
    if _State.installed:
        _State.landed = True


def interrupt_requested() -> bool:
    """Whether a signal arrived after this process's commit landed (work that may wait should stop)."""
    return _State.pending is not None
