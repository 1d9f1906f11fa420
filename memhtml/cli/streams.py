"""Reading a command's input stream (the JSONL of `apply`): `--file`, or stdin, refused at exit 2 when
it cannot be read. A terminal on stdin reads as empty rather than waiting for typed input."""

from __future__ import annotations

import sys
from pathlib import Path

from memhtml.contracts.errors import UsageError


def read_ops_stream(command: str, file: str | None, stdin_marker: str | None) -> str:
    """The text of `--file PATH`, or stdin for `--file -`, a positional `-`, or neither."""
    if stdin_marker not in (None, "-"):
        raise UsageError(
            "ERR_UNEXPECTED_ARGUMENT",
            f"unexpected argument: {stdin_marker}. {command} reads ops from --file or stdin (`-`)",
            [f"memhtml {command} --file {stdin_marker}"],
            command=command,
        )
    if file is not None and file != "-":
        if stdin_marker == "-":
            raise UsageError(
                "ERR_INVALID_FLAG",
                f"{command}: give the ops either on stdin (`-`) or in --file, not both",
                [f"memhtml {command} --file {file}", f"memhtml {command} - < {file}"],
                command=command,
            )
        try:
            return Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else (error.strerror or "unreadable")
            raise UsageError(
                "ERR_PATH_NOT_FOUND",
                f"{command}: cannot read --file {file}: {reason}",
                [f"ls -l {file}", f"memhtml {command} --file <path to a JSONL file>"],
                command=command,
            ) from None
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    try:
        return sys.stdin.read()
    except UnicodeDecodeError:
        raise UsageError("ERR_INVALID_FLAG", f"{command}: stdin is not UTF-8 text", [], command=command) from None
