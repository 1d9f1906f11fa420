"""Progress of long work (`index rebuild`, `index embed`, `doctor`, `apply`) for a person at a terminal: one
stderr line rewritten in place, cleared when the work ends. A JSON answer (piped, `--json`, `MEMHTML_OUTPUT=json`)
or a stderr that is not a terminal gets none, so machines reading the streams never see it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final, TextIO

from memhtml.cli.responder import Responder

# A person reads a line that changes ten times a second; more only costs the terminal.
REDRAW_SECONDS: Final[float] = 0.1


class TerminalProgress:
    """Writes `<command>: <phase> <done> of <of>` over the previous line; never raises."""

    def __init__(
        self,
        command: str,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        interval: float = REDRAW_SECONDS,
    ) -> None:
        self._command = command
        self._stream = stream
        self._clock = clock
        self._interval = interval
        self._last_drawn: float | None = None
        self._width = 0

    def __call__(self, phase: str, done: int, of: int) -> None:
        now = self._clock()
        finished = done >= of
        if not finished and self._last_drawn is not None and now - self._last_drawn < self._interval:
            return
        self._last_drawn = now
        text = f"{self._command}: {phase} {done:,} of {of:,}"
        self._draw(text + " " * max(0, self._width - len(text)))
        self._width = len(text)

    def finish(self) -> None:
        """Clear the line, so the answer starts on a clean one."""
        if self._width:
            self._draw(" " * self._width)
            self._stream_write("\r")
            self._width = 0

    def _draw(self, text: str) -> None:
        self._stream_write("\r" + text)

    def _stream_write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr must never fail the command
            pass


@contextmanager
def terminal_progress(responder: Responder, command: str) -> Iterator[TerminalProgress | None]:
    """A progress line on stderr while the block runs, when a person is watching; else None."""
    stream = sys.stderr
    if responder.json_mode or stream is None or not _is_terminal(stream):
        yield None
        return
    progress = TerminalProgress(command, stream)
    try:
        yield progress
    finally:
        progress.finish()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False
