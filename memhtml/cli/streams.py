"""Reading a command's input stream (the JSONL of `apply`): `--file`, or stdin, refused at exit 2 when
it cannot be read or passes the stream's limits. A terminal on stdin reads as empty rather than waiting
for typed input. The stream is read in blocks and counted as it comes, so one that is too long (in
bytes, lines or the length of one line) is refused once it passes the limit, before memory grows with
the rest of it."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO, Final

from memhtml.contracts.errors import UsageError
from memhtml.contracts.limits import MAX_APPLY_BYTES, MAX_APPLY_LINES, batch_too_large, size_words

_BLOCK: Final[int] = 1 << 20


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
            with Path(file).open("rb") as source:
                return _bounded_text(command, source, f"--file {file}")
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
        return _bounded_text(command, sys.stdin.buffer, "stdin")
    except UnicodeDecodeError:
        raise UsageError("ERR_INVALID_FLAG", f"{command}: stdin is not UTF-8 text", [], command=command) from None


def _bounded_text(command: str, source: BinaryIO, name: str) -> str:
    """All of `source` as text, refused (ERR_INPUT_TOO_LARGE) as soon as it passes a limit. A line past
    `MAX_APPLY_LINE_BYTES` is the decoder's to refuse, by its number; the stream's size bounds it here. A
    regular file (`--file`, or stdin redirected from one) too large is refused by its size, unread."""
    with contextlib.suppress(OSError, ValueError):  # a pipe or a terminal has no size to go by
        found = os.fstat(source.fileno())
        if stat.S_ISREG(found.st_mode) and found.st_size > MAX_APPLY_BYTES:
            raise batch_too_large(command, f"{name} holds more than {size_words(MAX_APPLY_BYTES)}")
    data = bytearray()
    lines = 0
    while block := source.read(_BLOCK):
        data += block
        lines += block.count(b"\n")
        if len(data) > MAX_APPLY_BYTES:
            raise batch_too_large(command, f"{name} holds more than {size_words(MAX_APPLY_BYTES)}")
        if lines > MAX_APPLY_LINES:
            raise batch_too_large(command, f"{name} holds more than {MAX_APPLY_LINES:,} lines")
    return data.decode("utf-8")
