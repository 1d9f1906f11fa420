"""Reading and checking a memory share one parse and one pass over its head; the shortcuts taken for
speed must give exactly what the plain definitions give."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhtml.html.document import ParsedMemory, parse_memory_tree
from memhtml.html.javascript_semantics import JS_WHITESPACE, collapse_ascii_whitespace, js_word_count
from memhtml.html.parser import parse_document
from memhtml.html.validate import check_memory_tree, inspect_memory
from tests.html.memory_file_examples import FILE_A

ASCII_WHITESPACE_RUN = re.compile(r"[ \t\n\f\r]+")


# Text as the shortcuts see it: all ASCII (the `str.split` path) or not, with every character on which
# Python's idea of whitespace and HTML's or JavaScript's differ.
SPLIT_EDGES = ["a", "1", " ", "\t", "\n", "\f", "\r", "\v", "\x1c", "\x1d", "\x1e", "\x1f", "\x85"]
ASCII_EDGES = [character for character in SPLIT_EDGES if character.isascii()]
EDGE_TEXT = st.one_of(
    st.text(alphabet=st.sampled_from(ASCII_EDGES)),
    st.text(alphabet=st.sampled_from([*SPLIT_EDGES, "é", "\u00a0", "\u3000", "\u2028", "\ufeff"])),
)
JS_WHITESPACE_RUN = re.compile(f"[{re.escape(JS_WHITESPACE)}]+")


@given(EDGE_TEXT)
def test_collapsing_equals_the_plain_rule(text: str) -> None:
    assert collapse_ascii_whitespace(text) == ASCII_WHITESPACE_RUN.sub(" ", text)


@given(EDGE_TEXT)
def test_counting_words_equals_splitting_at_js_whitespace(text: str) -> None:
    assert js_word_count(text) == sum(1 for word in JS_WHITESPACE_RUN.split(text) if word)


def same_reading(first: ParsedMemory, second: ParsedMemory) -> bool:
    """Two reads of one file agree: every field, and the article's markup (its element is another object)."""
    return (
        first._replace(article=None) == second._replace(article=None)
        and first.article_inner_html == second.article_inner_html
    )


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
    assert same_reading(memory, parse_memory_tree(parse_document(text)))
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


def test_a_memory_read_and_checked_leaves_no_reference_cycle_for_the_collector() -> None:
    """Parent links would make each element of the tree part of a cycle that only the cycle collector
    frees; the tree must go as soon as the caller drops what it was given."""
    import gc

    expected = inspect_memory(FILE_A)[0].article_inner_html
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            memory, check = inspect_memory(FILE_A)
            assert memory.article_inner_html == expected and not check.violations
            del memory, check
        assert gc.collect() == 0
    finally:
        gc.enable()
