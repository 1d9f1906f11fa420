"""Frame keys: the lexical rule that gives "X of Y is 64." the key "x of y is", so facts on one frame meet.

Ported exactly from the original (validated on a conflict-resolution benchmark there), so the
regex and both token limits must not change. Frame keys only report conflicts; they never merge.
"""

from __future__ import annotations

import re
from typing import Final

MIN_FRAME_TOKENS: Final = 3
MAX_VALUE_TOKENS: Final = 6

# Greedy frame, so the key ends at the last linking word; lazy value with one final period absorbed.
# re.ASCII makes \b and \s mean what they mean in the original's JavaScript regex; the match is
# case-sensitive, so only lowercase linking words split.
FRAME_PATTERN: Final = re.compile(r"^(.*\b(?:of|is|in|to|by|as)\b)\s+(.+?)\.?$", re.ASCII)

# JavaScript's `\s` (WhiteSpace + LineTerminator), which the original collapses before matching.
_JS_WHITESPACE_RUN: Final = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")


def frame_key(gist: str) -> str | None:
    """The lowercased frame of `gist`, or None unless its frame has 3+ tokens and its value 1 to 6."""
    if gist.isascii() and gist.isprintable() and "  " not in gist:
        # Printable ASCII has no whitespace but the space, and no run of spaces here: nothing to collapse
        # (most gists; the substitution alone was most of the key's cost).
        return key_of_collapsed(gist.strip(" "))
    return key_of_collapsed(collapsed_whitespace(gist))


def collapsed_whitespace(gist: str) -> str:
    """`gist` with every run of JavaScript whitespace made one space, and no space at either end."""
    return _JS_WHITESPACE_RUN.sub(" ", gist).strip(" ")


def key_of_collapsed(collapsed: str) -> str | None:
    """`frame_key` of a gist whose whitespace is collapsed already."""
    match = FRAME_PATTERN.match(collapsed)
    if match is None:
        return None
    frame, value = match.group(1), match.group(2)
    if len(frame.split(" ")) < MIN_FRAME_TOKENS or not 1 <= len(value.split(" ")) <= MAX_VALUE_TOKENS:
        return None
    return frame.lower()
