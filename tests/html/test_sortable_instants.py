"""`is_sortable_instant` reads the two instant forms a character at a time: it must answer exactly what
the forms' pattern answers under Python's `re` (any Unicode decimal digit for `\\d`, `$` before one final
newline too), with a real calendar date."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.contracts.instants import SORTABLE_INSTANT_PATTERN, is_sortable_instant

_PATTERN = re.compile(SORTABLE_INSTANT_PATTERN)


def by_the_pattern(value: str) -> bool:
    """The reference: the pattern's match, then the date it names built by `datetime`."""
    match = _PATTERN.match(value)
    if match is None:
        return False
    try:
        dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return False
    return True


EDGES = [
    "2026-03-04",
    "2026-03-04T10:20:30Z",
    "2026-03-04T23:59:60Z",
    "2026-03-04T24:00:00Z",
    "2026-03-04T19:60:00Z",
    "2026-03-04T20:00:61Z",
    "2026-03-04T20:00:59z",
    "2026-03-04 20:00:59Z",
    "2024-02-29",
    "2023-02-29",
    "2000-02-29",
    "1600-02-29",
    "1900-02-29",
    "2100-02-29",
    "2026-02-28",
    "2026-12-31",
    "2026-11-31",
    "2026-04-31",
    "2026-00-10",
    "2026-13-10",
    "2026-01-00",
    "0000-01-01",
    "0001-01-01",
    "9999-12-31T23:59:59Z",
    "2026-03-04\n",
    "2026-03-04T10:20:30Z\n",
    "2026-03-04\n\n",
    "\n2026-03-04",
    "2026-03-04\r",
    "2026-03-04 ",
    " 2026-03-04",
    "٢٠٢٦-٠٣-٠٤",  # Arabic-Indic digits: decimal digits to Python's `\d`
    "2026-03-04T١٠:20:30Z",
    "2026-03-04T1٠:2٠:3٠Z",
    "２０２６-０３-０４",  # fullwidth digits
    "²⁰²⁶-03-04",  # superscripts are digits, not decimal digits
    "2026-3-04",
    "2026-03-4",
    "20260304",
    "2026/03/04",
    "2026-03-04T10:20Z",
    "2026-03-04T10:20:30+00:00",
    "2026-03-04T10:20:30.5Z",
    "",
    "\n",
    "-",
]


@pytest.mark.parametrize("value", EDGES)
def test_each_edge_is_answered_as_the_pattern_answers(value: str) -> None:
    assert is_sortable_instant(value) == by_the_pattern(value)


def test_the_edges_hold_both_answers() -> None:
    answers = [by_the_pattern(value) for value in EDGES]
    assert answers.count(True) >= 8 and answers.count(False) >= 20


# Values near the forms: valid instants with characters replaced, inserted or removed, drawn from the
# characters that matter to the pattern and a few that only look like them.
_NEAR = "0123456789-:TZtz \n\r٠١٢٣٤٥٦٧٨٩０１２３⁰¹²³"


@st.composite
def near_instants(draw: st.DrawFn) -> str:
    moment = draw(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59)))
    text = moment.strftime("%Y-%m-%dT%H:%M:%SZ") if draw(st.booleans()) else moment.strftime("%Y-%m-%d")
    characters = list(f"{moment.year:04d}" + text[4:])
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        position = draw(st.integers(min_value=0, max_value=len(characters)))
        edit = draw(st.sampled_from(["replace", "insert", "delete"]))
        character = draw(st.sampled_from(_NEAR))
        if edit == "insert" or not characters:
            characters.insert(position, character)
        elif position < len(characters):
            if edit == "replace":
                characters[position] = character
            else:
                del characters[position]
    return "".join(characters)


@settings(max_examples=3000, deadline=None)
@given(near_instants())
def test_values_near_the_forms_are_answered_as_the_pattern_answers(value: str) -> None:
    assert is_sortable_instant(value) == by_the_pattern(value)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=24))
def test_any_text_is_answered_as_the_pattern_answers(value: str) -> None:
    assert is_sortable_instant(value) == by_the_pattern(value)
