"""Character escaping for text nodes and attribute values, byte-compatible with the reference writer.

Attribute values also escape CR and LF so that every head `<meta>`/`<link>` stays on one physical
line, which the line-oriented head editors rely on.
"""

from __future__ import annotations

from typing import Final

_TEXT_ESCAPES: Final = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\u00a0": "&nbsp;"})
_ATTRIBUTE_ESCAPES: Final = str.maketrans(
    {"&": "&amp;", '"': "&quot;", "\u00a0": "&nbsp;", "\r": "&#13;", "\n": "&#10;"}
)


def escape_text(text: str) -> str:
    """Escape a text node: `&`, `<`, `>` and NBSP only, so quotes stay literal."""
    return text.translate(_TEXT_ESCAPES)


def escape_attribute(value: str) -> str:
    """Escape a double-quoted attribute value: `&`, `"`, NBSP, CR and LF."""
    return value.translate(_ATTRIBUTE_ESCAPES)
