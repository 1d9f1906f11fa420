"""How one invocation answers: JSON envelope or rich rendering, exit status, and stderr for logs.

A `Door` is built once per process from the parsed command line and the configuration; commands hand
it a result or an error and it writes exactly one answer.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from memhtml.cli.envelope import EXIT_OK, encode, exit_status, failure, success, unexpected_failure
from memhtml.contracts.errors import MemhtmlError

WRITE_COMMANDS = frozenset({"write", "apply", "batch", "correct", "archive", "link", "task add", "task status"})


class Door:
    """How one command answers: JSON or rendered text, the exit status, and whether it has answered.

    The entry point sets `root` once it has resolved the store the command works on.
    """

    __slots__ = ("answered", "command", "dense", "json_mode", "root", "status")

    def __init__(self, command: str, json_mode: bool, dense: bool) -> None:
        self.command = command
        self.json_mode = json_mode
        self.dense = dense
        self.root: Path | None = None
        self.status = EXIT_OK
        self.answered = False

    def answer(self, response_type: str, data: dict[str, Any], status: int = EXIT_OK) -> None:
        """Answer a result; `status` 3 says some of it was stored and some refused (partial)."""
        self.status = status
        self.answered = True
        envelope = success(response_type, data)
        if self.json_mode:
            _write(encode(envelope, dense=self.dense))
        else:
            from memhtml.cli.render import render_success

            render_success(response_type, data)

    def refuse(self, error: MemhtmlError) -> None:
        self.answered = True
        envelope = failure(error, write_command=self.command in WRITE_COMMANDS)
        self._emit_failure(envelope)
        self.status = exit_status(error)

    def crash(self, error: BaseException) -> None:
        self.answered = True
        envelope = unexpected_failure(error, write_command=self.command in WRITE_COMMANDS)
        self._emit_failure(envelope)
        self.status = 1

    def _emit_failure(self, envelope: dict[str, Any]) -> None:
        if self.json_mode:
            _write(encode(envelope, dense=self.dense))
        else:
            from memhtml.cli.render import render_failure

            render_failure(envelope)


def _write(text: str) -> None:
    """Write the answer; a reader that went away must not turn a landed write into a failure."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python would complain again while flushing at exit; point stdout at nothing instead.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
