"""Cutting a memory's body text into the chunks the embedding lane embeds.

A chunk is at most `CHUNK_MAX_CHARS` characters with no overlap, and nothing is ever dropped. One fact
per file means the common case is a single chunk; a long body is split after sentence ends, any
sentence longer than the cap is sliced, and the pieces are packed greedily.
"""

from __future__ import annotations

import re
from typing import Final

CHUNK_MAX_CHARS: Final[int] = 1800
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+")


def chunk_text(body_text: str) -> list[str]:
    """The chunks of `body_text` in order; an empty (or blank) body has none."""
    text = body_text.strip()
    if not text:
        return []
    if len(text) <= CHUNK_MAX_CHARS:
        return [text]
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        if not sentence:
            continue
        pieces.extend(sentence[start : start + CHUNK_MAX_CHARS] for start in range(0, len(sentence), CHUNK_MAX_CHARS))
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        if not current:
            current = piece
        elif len(current) + 1 + len(piece) <= CHUNK_MAX_CHARS:
            current = f"{current} {piece}"
        else:
            chunks.append(current)
            current = piece
    if current:
        chunks.append(current)
    return chunks
