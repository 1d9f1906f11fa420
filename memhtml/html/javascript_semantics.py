"""JavaScript string and number semantics that the original's file bytes and parsed values depend on.

The reference is TypeScript: `String.prototype.trim`, `/\\s/`, `Number()`, `toFixed(2)` and UTF-16
lengths leak into titles, gists, confidence stamps and messages, so we reproduce them exactly here.
"""

from __future__ import annotations

import math
import re
from typing import Final

# ECMAScript WhiteSpace + LineTerminator: what `trim()` strips and what `\s` matches.
JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_WHITESPACE_RUN: Final = re.compile(f"[{re.escape(JS_WHITESPACE)}]+")
# HTML's notion of whitespace, the only thing the canonical text collapses (NBSP is content).
_ASCII_WHITESPACE: Final = " \t\n\f\r"
_ASCII_WHITESPACE_RUN: Final = re.compile(r"[ \t\n\f\r]+")
# ASCII characters `str.split()` treats as whitespace beyond JS's \s (the four separator controls), and
# beyond HTML's (those and the vertical tab).
_PYTHON_ONLY_ASCII_SEPARATORS: Final = ("\x1c", "\x1d", "\x1e", "\x1f")
_PYTHON_ONLY_ASCII_SPACE: Final = (*_PYTHON_ONLY_ASCII_SEPARATORS, "\x0b")
_DECIMAL_LITERAL: Final = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_RADIX_LITERAL: Final = re.compile(r"0(?:[xX](?P<hex>[0-9a-fA-F]+)|[oO](?P<oct>[0-7]+)|[bB](?P<bin>[01]+))")


def js_trim(text: str) -> str:
    """`String.prototype.trim`: strips JS whitespace, which includes NBSP and U+3000 but not U+0085."""
    return text.strip(JS_WHITESPACE)


def collapse_ascii_whitespace(text: str) -> str:
    """Every run of ASCII whitespace (space, tab, LF, FF, CR) becomes one space; nothing else changes."""
    # Most text nodes have nothing to collapse, and five substring tests cost less than one regex call.
    if "  " not in text and "\n" not in text and "\t" not in text and "\r" not in text and "\f" not in text:
        return text
    if _splits_like_ascii_whitespace(text):
        # `str.split()` cuts at exactly those runs here, and its C loop is several times cheaper than the regex.
        inner = " ".join(text.split())
        if not inner:
            return " "
        return (" " if text[0] in _ASCII_WHITESPACE else "") + inner + (" " if text[-1] in _ASCII_WHITESPACE else "")
    return _ASCII_WHITESPACE_RUN.sub(" ", text)


def _splits_like_ascii_whitespace(text: str) -> bool:
    """Whether `str.split()` splits `text` only at ASCII whitespace: ASCII text without the four separator
    controls (U+001C–U+001F) or the vertical tab, which Python counts as whitespace and HTML does not."""
    return text.isascii() and not any(control in text for control in _PYTHON_ONLY_ASCII_SPACE)


def collapsed(text: str) -> str:
    """ASCII-collapsed then JS-trimmed: the reference's rule for gist, title, facet and citation text."""
    return js_trim(collapse_ascii_whitespace(text))


def js_flattened(text: str) -> str:
    r"""`text.replace(/\s+/g, " ").trim()`: every JS whitespace run becomes one space, edges trimmed."""
    return js_trim(_JS_WHITESPACE_RUN.sub(" ", text))


def utf16_length(text: str) -> int:
    """`text.length` in JavaScript: astral characters count twice."""
    return sum(2 if ord(char) > 0xFFFF else 1 for char in text)


def js_word_count(text: str) -> int:
    """How many runs `text.split(/\\s+/)` leaves non-empty."""
    if text.isascii() and not any(control in text for control in _PYTHON_ONLY_ASCII_SEPARATORS):
        # In ASCII text JS's \s and `str.split()` agree but for these four; the C split is far cheaper.
        return len(text.split())
    return sum(1 for word in _JS_WHITESPACE_RUN.split(text) if word)


def js_number(text: str) -> float | None:
    """`Number(text)` for a string; None where JS gives NaN. Blank text gives 0, as in JS."""
    body = js_trim(text)
    if not body:
        return 0.0
    if _DECIMAL_LITERAL.fullmatch(body):
        return float(body)
    radix = _RADIX_LITERAL.fullmatch(body)
    if radix:
        if radix.group("hex"):
            return float(int(radix.group("hex"), 16))
        if radix.group("oct"):
            return float(int(radix.group("oct"), 8))
        return float(int(radix.group("bin") or "0", 2))
    if body in ("Infinity", "+Infinity"):
        return math.inf
    if body == "-Infinity":
        return -math.inf
    return None


def finite_number(text: str) -> float | None:
    """The value of a non-blank string that JS `Number()` reads as a finite number, else None."""
    if not js_trim(text):
        return None
    value = js_number(text)
    if value is None or not math.isfinite(value):
        return None
    return value


def js_to_fixed_2(value: float) -> str:
    """`value.toFixed(2)`: the exact binary value rounded half-up (0.125 -> "0.13"; '%.2f' gives "0.12")."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    # The exact binary value in hundredths, a tie rounded away from zero, in integers: `decimal` (what this
    # once used) costs a process that only reads memories an import it needs nowhere else.
    numerator, denominator = abs(value).as_integer_ratio()
    hundredths, remainder = divmod(numerator * 100, denominator)
    if 2 * remainder >= denominator:
        hundredths += 1
    sign = "-" if value < 0 else ""  # -0 is not below zero: JS prints it "0.00", and -0.004 "-0.00"
    whole, cents = divmod(hundredths, 100)
    return f"{sign}{whole}.{cents:02d}"


def utf16_prefix(text: str, units: int) -> str:
    """`text.slice(0, units)` counted in UTF-16 code units; a pair cut in half is dropped, not split."""
    taken = 0
    for index, char in enumerate(text):
        width = 2 if ord(char) > 0xFFFF else 1
        if taken + width > units:
            return text[:index]
        taken += width
    return text


def utf16_sort_key(text: str) -> bytes:
    """A key that orders strings the way JS's default sort does (by UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")
