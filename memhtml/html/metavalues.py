"""Typed readings of head values: numbers, booleans, entities, language tokens and edge hrefs.

Each reader returns None for a value the reference silently drops (out of range, non-numeric, blank),
so callers can tell "absent" from a usable value without re-implementing JS `Number()` rules.
"""

from __future__ import annotations

import re
from typing import Final

from memhtml.html.javascript_semantics import finite_number, js_trim

LANG_TOKEN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+#.-]*$")
UNKNOWN_ENTITY_TYPE: Final = "unknown"
_TRUE_WORDS: Final = frozenset({"true", "1", "yes"})


def read_confidence(content: str) -> float | None:
    """A confidence in [0, 1]; anything else (blank, non-numeric, out of range) is dropped."""
    value = finite_number(content)
    if value is None or not 0.0 <= value <= 1.0:
        return None
    return value + 0.0  # normalizes -0.0


def read_importance(content: str) -> int | None:
    """An integer 1–10 (`7.0` and `1e1` count, as JS `Number()` reads them); anything else is dropped."""
    value = finite_number(content)
    if value is None or not value.is_integer() or not 1 <= value <= 10:
        return None
    return int(value)


def read_reprieves(content: str) -> int | None:
    """A non-negative integer; anything else is dropped."""
    value = finite_number(content)
    if value is None or not value.is_integer() or value < 0:
        return None
    return int(value)


def read_needs_revision(content: str) -> bool:
    """`true`/`1`/`yes` (any case, not trimmed) read as true; every other present value as false."""
    return content.lower() in _TRUE_WORDS


def split_entity(value: str) -> tuple[str, str] | None:
    """`type:name` split at the first colon after trimming; no usable type gives (`unknown`, value).

    None for a blank value. A colon first or last leaves no usable type, so the whole value is the name.
    """
    text = js_trim(value)
    if not text:
        return None
    colon = text.find(":")
    if colon <= 0 or colon == len(text) - 1:
        return (UNKNOWN_ENTITY_TYPE, text)
    return (text[:colon], text[colon + 1 :])


def is_language_token(value: str) -> bool:
    """Whether a `data-lang` value (taken as written, untrimmed) is a language token."""
    return LANG_TOKEN.fullmatch(value) is not None


def language_entity_name(value: str) -> str | None:
    """The `lang:` entity name a `<code data-lang>` yields: trimmed and lowercased, None when blank."""
    name = js_trim(value).lower()
    return name or None


def is_repo_root_href(href: str) -> bool:
    """`/a/b.html` form: starts with one `/`, and no empty, `.` or `..` segment before any `?`/`#`."""
    if not href.startswith("/") or href.startswith("//"):
        return False
    path = re.split(r"[?#]", href, maxsplit=1)[0]
    return all(segment not in ("", ".", "..") for segment in path[1:].split("/"))
