"""How one invocation answers: JSON envelope or rich rendering, exit status, and stderr for logs.

A `Responder` is built once per process from the parsed command line and the configuration; commands hand
it a result or an error and it writes exactly one answer.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from memhtml.cli.envelope import EXIT_FAILURE, EXIT_OK, encode, exit_status, failure, success, unexpected_failure
from memhtml.contracts.errors import MemhtmlError
from memhtml.surface.commands import command_named


class Responder:
    """How one command answers: JSON or rendered text, the exit status, and whether it has answered.

    The entry point sets `root` once it has resolved the store the command works on.
    """

    __slots__ = ("answered", "changes_store", "command", "dense", "json_mode", "root", "status", "writes_memories")

    def __init__(self, command: str, json_mode: bool, dense: bool) -> None:
        self.command = command
        spec = command_named(command)
        # A write's failure says it stored nothing; a change's exit status says what landed (the table says which).
        self.writes_memories = spec is not None and spec.writes_memories
        self.changes_store = spec is not None and spec.changes_store
        self.json_mode = json_mode
        self.dense = dense
        self.root: Path | None = None
        self.status = EXIT_OK
        self.answered = False

    def answer(self, response_type: str, data: Mapping[str, Any], status: int = EXIT_OK) -> None:
        """Answer a result; `status` 3 says some of it was stored and some refused (partial)."""
        self.status = status
        self.answered = True
        envelope = success(response_type, data)
        if self.json_mode:
            delivered = _write(encode(envelope, dense=self.dense))
        else:
            from memhtml.cli.render import render_success

            delivered = _delivered(lambda: render_success(response_type, data))
        if not delivered and not self.changes_store:
            # The answer was the whole result; a write's status still says what it stored.
            self.status = EXIT_FAILURE

    def answer_beside_protocol(self, response_type: str, data: Mapping[str, Any]) -> None:
        """Answer on stderr: stdout carried a protocol (the MCP session) whose client reads every line
        of it as a message, so nothing may follow the stream there."""
        self.status = EXIT_OK
        self.answered = True
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(encode(success(response_type, data), dense=self.dense))
            sys.stderr.flush()

    def show(self, emit: Callable[[], object]) -> None:
        """Render something that is not an envelope (help on a terminal); a lost rendering fails the command."""
        self.answered = True
        if not _delivered(emit):
            self.status = EXIT_FAILURE

    def refuse(self, error: MemhtmlError) -> None:
        self.answered = True
        envelope = failure(error, write_command=self.writes_memories)
        self._emit_failure(envelope)
        self.status = exit_status(error)

    def crash(self, error: BaseException) -> None:
        self.answered = True
        envelope = unexpected_failure(error, write_command=self.writes_memories)
        self._emit_failure(envelope)
        self.status = 1

    def _emit_failure(self, envelope: dict[str, Any]) -> None:
        if self.json_mode:
            _write(encode(envelope, dense=self.dense))
        else:
            from memhtml.cli.render import render_failure

            _delivered(lambda: render_failure(envelope))


def _write(text: str) -> bool:
    """Write the answer; False when stdout failed to take it."""
    return _delivered(lambda: (sys.stdout.write(text), sys.stdout.flush()))


def _delivered(emit: Callable[[], object]) -> bool:
    """Run `emit`; stdout failing under it (a full disk, a closed stream) never turns into a traceback,
    nor a landed write into a failure. False when the answer was lost that way; a reader that went away
    (a broken pipe, `| head`) took what it wanted, which counts as delivered."""
    try:
        emit()
        return True
    except OSError as error:
        # Python would fail again flushing at exit; stdout points at nothing from here on.
        devnull = os.open(os.devnull, os.O_WRONLY)
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, sys.stdout.fileno())
        if isinstance(error, BrokenPipeError):
            return True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.stderr.write(f"memhtml: the answer could not be written to stdout ({error.strerror or error})\n")
        return False
