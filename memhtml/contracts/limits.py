"""The size limits every write door enforces, before anything is parsed, hashed or stored.

A memory is one fact: its rendered file holds at most `MAX_MEMORY_BYTES`. A command line carries at
most that many bytes of values (more cannot fit in one memory), and one `apply` line at most
`MAX_APPLY_LINE_BYTES` (a JSON line may escape every character of its memory several times over).
"""

from __future__ import annotations

from typing import Final

MAX_MEMORY_BYTES: Final[int] = 256 * 1024
MAX_APPLY_LINE_BYTES: Final[int] = 1024 * 1024


def size_words(size: int) -> str:
    """`256 KiB`, `1 MiB`: how a limit reads in a message."""
    if size % (1024 * 1024) == 0:
        return f"{size // (1024 * 1024)} MiB"
    return f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} bytes"
