"""The size limits every write door enforces, before anything is parsed, hashed or stored.

A memory is one fact: its rendered file holds at most `MAX_MEMORY_BYTES`. A command line carries at
most that many bytes of values (more cannot fit in one memory), and one `apply` line at most
`MAX_APPLY_LINE_BYTES` (a JSON line may escape every character of its memory several times over). A
whole `apply` stream holds at most `MAX_APPLY_LINES` lines and `MAX_APPLY_BYTES` bytes: a batch is
decoded, rendered and planned in memory as a whole (it is one commit), so what it may cost must be
bounded before it is read, not found out when the machine runs out.
"""

from __future__ import annotations

from typing import Final

from memhtml.contracts.errors import UsageError

MAX_MEMORY_BYTES: Final[int] = 256 * 1024
MAX_APPLY_LINE_BYTES: Final[int] = 1024 * 1024
MAX_APPLY_LINES: Final[int] = 100_000
MAX_APPLY_BYTES: Final[int] = 256 * 1024 * 1024


def size_words(size: int) -> str:
    """`256 KiB`, `1 MiB`: how a limit reads in a message."""
    if size % (1024 * 1024) == 0:
        return f"{size // (1024 * 1024)} MiB"
    return f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} bytes"


def batch_too_large(command: str, problem: str) -> UsageError:
    """The refusal (exit 2, nothing written) of a batch past `MAX_APPLY_LINES` or `MAX_APPLY_BYTES`,
    with the commands that split it into batches that fit."""
    return UsageError(
        "ERR_INPUT_TOO_LARGE",
        f"{command}: {problem}; one batch takes at most {MAX_APPLY_LINES:,} lines and "
        f"{size_words(MAX_APPLY_BYTES)}. Nothing was written",
        [f"split -l {MAX_APPLY_LINES // 2} ops.jsonl part-", f"memhtml {command} --file part-aa"],
        command=command,
    )
