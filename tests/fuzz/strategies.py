"""The settings every fuzz property runs under, junk text and bytes, and the committed corpus.

Owns: the example budgets and `fuzz` decorator, junk text and bytes (every code point including lone
surrogates, invalid UTF-8 decoded the ways the doors decode it) and the corpus reader. Hostile markup
and near-valid files are in `markup_strategies`; paths, secrets and JSONL streams in `input_strategies`.

Budgets: each property names its CI example count; `MEMHTML_FUZZ_EXAMPLES` replaces every count for a
long run. Runs are derandomized (the same examples every time, so a red build reproduces) unless
`MEMHTML_FUZZ_SEED` asks for a seeded random exploration.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

import pytest
from hypothesis import HealthCheck, currently_in_test_context, event, seed, settings
from hypothesis import strategies as st

EXAMPLES_ENV: Final = "MEMHTML_FUZZ_EXAMPLES"
SEED_ENV: Final = "MEMHTML_FUZZ_SEED"

Test = TypeVar("Test", bound=Callable[..., None])


def example_budget(ci_examples: int) -> int:
    """The examples one property runs: its CI count, or the long-run count from the environment."""
    raw = os.environ.get(EXAMPLES_ENV, "").strip()
    return int(raw) if raw else ci_examples


def fuzz(ci_examples: int) -> Callable[[Test], Test]:
    """Settings for one fuzz property (apply above `@given`): no example database (the committed corpus is
    the memory), no deadline (a deep tree legitimately takes a while), and slow or large inputs allowed."""
    chosen_seed = os.environ.get(SEED_ENV, "").strip()
    configured = settings(
        max_examples=example_budget(ci_examples),
        derandomize=not chosen_seed,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )

    def apply(test: Test) -> Test:
        decorated = configured(test)
        return seed(int(chosen_seed))(decorated) if chosen_seed else decorated

    return apply


def note_outcome(label: str) -> None:
    """Count an outcome in the statistics (`--hypothesis-show-statistics`); corpus replays count nothing."""
    if currently_in_test_context():
        event(label)


# ---------------------------------------------------------------- text and bytes

# Every code point, lone surrogates included: a str can hold them (surrogateescape'd argv, JSON `\ud800`).
ANY_CHARACTER: Final = st.characters(codec=None, exclude_categories=())
junk_text = st.text(ANY_CHARACTER, max_size=120)

# The characters the scans, the tokenizers and the path algebra treat specially.
NASTY_CHARACTERS: Final[tuple[str, ...]] = (
    "\x00",
    "\x01",
    "\x1b",
    "\x7f",
    "\x85",
    "\x9f",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x0b",
    "\x0c",
    "\u00a0",
    "\u00ad",
    "\u034f",
    "\u061c",
    "\u180e",
    "\u200b",
    "\u200c",
    "\u200d",
    "\u200e",
    "\u202a",
    "\u202e",
    "\u2028",
    "\u2029",
    "\u2066",
    "\u2069",
    "\u3000",
    "\u3164",
    "\ufe0f\ufe0f",
    "\ufeff",
    "\ufffd",
    "\U000e0041",
    "\U0001f600",
    "\ud800",
    "\udcff",
    "\udfff",
    "e\u0301",
    "\uff47\uff48\uff50\uff3f",  # fullwidth `ghp_`
    "\u2024",
    "\u2215",
    "\uff0f",
    "\uff0e\uff0e",
)
nasty_text = st.lists(
    st.one_of(st.sampled_from(NASTY_CHARACTERS), st.text(ANY_CHARACTER, max_size=6)), max_size=12
).map("".join)

# How a door turns bytes it was given into text: strictly decoded bytes never get this far, but
# `surrogateescape` (POSIX argv, a C-locale stdin) and `replace` do.
DECODINGS: Final[tuple[str, ...]] = ("surrogateescape", "replace", "ignore", "latin-1")


def decode_bytes(raw: bytes, how: str) -> str:
    if how == "latin-1":
        return raw.decode("latin-1")
    return raw.decode("utf-8", how)


INVALID_UTF8: Final[tuple[bytes, ...]] = (
    b"\xff",
    b"\xfe\xff",
    b"\xc0\xaf",  # overlong `/`
    b"\xe0\x80\xaf",
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xf4\x90\x80\x80",  # above U+10FFFF
    b"\xc3",  # truncated sequence
    b"\x80",
    b"\xef\xbb\xbf",  # BOM
)
hostile_bytes = st.lists(
    st.one_of(
        st.binary(max_size=24),
        st.sampled_from(INVALID_UTF8),
        junk_text.map(lambda text: text.encode("utf-8", "surrogatepass")),
    ),
    max_size=8,
).map(b"".join)
decoded_bytes = st.builds(decode_bytes, hostile_bytes, st.sampled_from(DECODINGS))
any_text = st.one_of(junk_text, nasty_text, decoded_bytes)

# ---------------------------------------------------------------- the committed corpus

CORPUS_DIR: Final = Path(__file__).parent / "corpus"


def corpus_value(entry: dict[str, Any]) -> str:
    """An entry's input: `text`, `pieces` ([piece, times] pairs, for inputs too large to store flat),
    or `bytes_b64` decoded as `decoding` says (bytes a door turned into text)."""
    if "text" in entry:
        return str(entry["text"])
    if "pieces" in entry:
        return "".join(str(piece) * int(times) for piece, times in entry["pieces"])
    return decode_bytes(base64.b64decode(entry["bytes_b64"]), str(entry["decoding"]))


def corpus(name: str) -> list[Any]:
    """The entries of `corpus/<name>.json` as pytest params (id, then the entry). An entry with
    `known_bug` is a strict xfail: it documents an unfixed defect and turns red once that is fixed."""
    entries = json.loads((CORPUS_DIR / f"{name}.json").read_text(encoding="utf-8"))
    params = []
    for entry in entries:
        marks = [pytest.mark.xfail(strict=True, reason=entry["known_bug"])] if "known_bug" in entry else []
        params.append(pytest.param(entry, id=entry["id"], marks=marks))
    return params
