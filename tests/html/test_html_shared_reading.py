"""Reading and checking a memory share one parse and one pass over its head; the shortcuts taken for
speed must give exactly what the plain definitions give."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhtml.html.document import parse_memory_tree
from memhtml.html.jscompat import collapse_ascii_whitespace
from memhtml.html.parser import parse_document
from memhtml.html.validate import check_memory_tree, inspect_memory
from tests.html.memory_file_examples import FILE_A

ASCII_WHITESPACE_RUN = re.compile(r"[ \t\n\f\r]+")


@given(st.text(alphabet=st.sampled_from(["a", "é", " ", "\t", "\n", "\f", "\r", "\u00a0", "\u3000", "\v"])))
def test_collapsing_equals_the_plain_rule(text: str) -> None:
    assert collapse_ascii_whitespace(text) == ASCII_WHITESPACE_RUN.sub(" ", text)


def test_each_ascii_whitespace_alone_is_collapsed() -> None:
    for whitespace in [" ", "\t", "\n", "\f", "\r"]:
        assert collapse_ascii_whitespace(f"a{whitespace}b") == "a b"
        assert collapse_ascii_whitespace(f"a{whitespace} b") == "a b"
    assert collapse_ascii_whitespace("a\u00a0\u00a0b") == "a\u00a0\u00a0b"  # NBSP is content


def test_one_inspection_reads_and_checks_as_two_separate_passes() -> None:
    # Repeated scalar metas (the first wins when read; the check counts them), a second title and a
    # link: every head part the two passes share.
    text = FILE_A.replace(
        "</head>",
        '<meta name="memhtml-confidence" content="0.2"><meta name="memhtml-type" content="fact">'
        '<title>Second</title><link rel="memhtml-supersedes" href="areas/a/b.html"></head>',
    )
    memory, check = inspect_memory(text)
    assert memory == parse_memory_tree(parse_document(text))
    assert check == check_memory_tree(parse_document(text))
    assert '<meta name="memhtml-confidence"> appears 2 times but is not repeatable' in check.violations
    assert "2 <title> elements: a memory file needs exactly one" in check.violations
    assert (memory.memory_type, memory.confidence, memory.title) == (
        "procedural",
        0.9,
        "Prod rollbacks drain the VIP first",
    )
    assert memory.links == [
        ("relates_to", "/resources/people/sanju-owns-the-checkout-api.html"),
        ("supersedes", "areas/a/b.html"),
    ]


EDGE_CASES = {
    "an empty first content": (
        FILE_A.replace(
            '<meta name="memhtml-type" content="procedural">',
            '<meta name="memhtml-type" content=""><meta name="memhtml-type" content="procedural">',
        ),
        {"memory_type": "", "title": "Prod rollbacks drain the VIP first"},
    ),
    "a second title in the body": (
        FILE_A.replace("<article>", "<title>  Body\ttitle </title><article>"),
        {"memory_type": "procedural", "title": "Prod rollbacks drain the VIP first"},
    ),
    "no title at all": (
        FILE_A.replace("<title>Prod rollbacks drain the VIP first</title>", ""),
        {"memory_type": "procedural", "title": ""},
    ),
    "a whitespace-only title first": (
        FILE_A.replace("<title>Prod rollbacks drain the VIP first</title>", "<title> \n </title><title>Later</title>"),
        {"memory_type": "procedural", "title": ""},
    ),
    "no head": (
        "<article><p><mark>A bare claim.</mark></p></article>",
        {"memory_type": None, "title": ""},
    ),
}


@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_reading_edge_cases_read_as_they_always_did(name: str) -> None:
    """Literal answers (taken from the reading before it shared one pass with the check)."""
    text, expected = EDGE_CASES[name]
    memory, check = inspect_memory(text)
    assert {field: getattr(memory, field) for field in expected} == expected
    assert check == check_memory_tree(parse_document(text))
