"""Fuzz properties of the memory-file reader: parse, validate, extract, hash and head edits never raise,
whatever the file holds, and a file that validates cleanly round-trips.

What `tests/html/test_html_properties.py` proves on rendered files (head round trip, canonical fixed
point on generated markup, head edits on rendered heads) is not repeated; here the inputs are junk,
hostile markup and near-valid files mutated from the reference examples.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from collections.abc import Callable
from typing import Any, Final

import pytest
from hypothesis import given

from memhtml.contracts.errors import InvalidMemory, MemhtmlError, envelope_code
from memhtml.html.document import ParsedMemory, parse_memory
from memhtml.html.hashing import canonical_text_of, content_hash
from memhtml.html.headedit import add_link, add_meta, remove_link, remove_meta, scan_head, set_meta
from memhtml.html.identity import set_event_time
from memhtml.html.javascript_semantics import js_trim
from memhtml.html.serialize import canonical_article, canonical_article_tree
from memhtml.html.validate import MemoryCheck, check_article_fragment, check_memory, inspect_memory
from memhtml.operations.screening import markup_problems
from memhtml.operations.write import WriteRequest, render_checked
from tests.fuzz.markup_strategies import hostile_fragment, memory_file_inputs, near_valid_articles, near_valid_files
from tests.fuzz.strategies import corpus, corpus_value, fuzz, note_outcome
from tests.html.test_html_shared_reading import same_reading

HASH: Final = re.compile(r"sha256:[0-9a-f]{64}")
NOW: Final = dt.datetime(2026, 11, 30, 5, 53, 51, tzinfo=dt.UTC)
EDITED_UPDATED: Final = "2027-03-04T05:06:07Z"
EDITED_TAG: Final = "fuzz-edited-tag"
EDITED_EVENT: Final = "2025-06-07"
EDITED_LINK: Final = ("memhtml-relates-to", "/resources/fuzz/edited-link.html")
REFUSED_EDIT: Final = re.compile(r"invalid memory: the (head cannot be edited|event time cannot be set) in place")


def assert_reads_whole_file(text: str) -> MemoryCheck:
    """Every reader of a whole file answers (never raises), and one parse reads the same as two."""
    parsed = parse_memory(text)
    check = check_memory(text)
    inspected, inspected_check = inspect_memory(text)
    assert same_reading(inspected, parsed)
    assert inspected_check == check
    assert all(isinstance(item, str) and item for item in [*check.violations, *check.warnings])
    assert HASH.fullmatch(parsed.content_hash)
    assert HASH.fullmatch(content_hash(text))
    layout = scan_head(text)
    assert 0 <= layout.head_end <= len(text)
    assert all(0 <= tag.start < tag.end <= len(text) for tag in layout.tags)
    assert parsed.confidence is None or 0.0 <= parsed.confidence <= 1.0
    assert parsed.importance is None or 1 <= parsed.importance <= 10
    assert parsed.reprieves is None or parsed.reprieves >= 0
    assert all(value is None or math.isfinite(value) for _, _, value in parsed.facets)
    assert parsed.word_count >= 0 and parsed.gist == js_trim(parsed.gist)
    note_outcome("validates" if check.ok else "refused by the format check")
    if check.ok:
        assert_valid_file_round_trips(text)
    else:
        for what, edit, _ in IN_PLACE_EDITS:
            try:
                assert isinstance(edit(text), str)
            except InvalidMemory as refusal:
                assert REFUSED_EDIT.match(refusal.message), refusal.message
                note_outcome(f"{what} refused on an invalid file")
    return check


def assert_valid_file_round_trips(text: str) -> None:
    """A cleanly validating file: both hash routes agree, its article re-serializes to the same hashed text
    (canonically, as a fixed point), and head edits land where the parser reads them without moving the hash."""
    parsed = parse_memory(text)
    assert content_hash(text) == parsed.content_hash, "the hashing module and the reader hash different articles"
    inner = parsed.article_inner_html
    canonical, root = canonical_article_tree(inner)
    if "<plaintext" in inner:
        # No serialization of <plaintext> re-parses the same: it swallows the rest of the file, and its
        # own and its ancestors' end tags come back as text (reported, tolerated here).
        note_outcome("round trip skipped: <plaintext>")
    else:
        # The article's inner HTML is JS-trimmed, so edge text such as U+3000 may go; nothing else may change.
        assert js_trim(canonical_text_of(root)) == js_trim(parsed.facts.canonical_text)
        assert canonical_article(canonical) == canonical
    assert_in_place_edits_land(text, parsed.content_hash)


# The in-place edits the store splices into committed files (restatements, archiving, links).
IN_PLACE_EDITS: Final[tuple[tuple[str, Callable[[str], str], Callable[[ParsedMemory], bool]], ...]] = (
    (
        "set updated",
        lambda source: set_meta(source, "memhtml-updated", EDITED_UPDATED),
        lambda memory: memory.updated == EDITED_UPDATED,
    ),
    (
        "add a tag",
        lambda source: add_meta(source, "memhtml-tag", EDITED_TAG),
        lambda memory: EDITED_TAG in memory.tags,
    ),
    ("remove every tag", lambda source: remove_meta(source, "memhtml-tag"), lambda memory: memory.tags == []),
    (
        "add a link",
        lambda source: add_link(source, *EDITED_LINK),
        lambda memory: ("relates_to", EDITED_LINK[1]) in memory.links,
    ),
    (
        "remove links",
        lambda source: remove_link(source, EDITED_LINK[0]),
        lambda memory: all(rel != "relates_to" for rel, _ in memory.links),
    ),
    (
        "set the event time",
        lambda source: set_event_time(source, EDITED_EVENT),
        lambda memory: memory.event_at == EDITED_EVENT,
    ),
)


def assert_in_place_edits_land(text: str, digest: str) -> None:
    """Each edit lands where the parser reads it, or is refused as a whole (markup the scanner and the
    parser read differently); a refusal is typed and leaves nothing half-done, since edits return new text."""
    for what, edit, landed in IN_PLACE_EDITS:
        try:
            edited = edit(text)
        except InvalidMemory as refusal:
            assert REFUSED_EDIT.match(refusal.message), refusal.message
            note_outcome(f"{what} refused: the scanner and the parser disagree")
            continue
        memory = parse_memory(edited)
        assert landed(memory), f"{what}: the parser does not read the edit"
        assert memory.content_hash == digest, f"{what}: the head edit moved the content hash"
        assert check_memory(edited).violations == [], f"{what}: the head edit made a valid file invalid"


def assert_reads_fragment(markup: str) -> None:
    """Bare article markup: the article-scoped check and the canonical writer answer, and canonical
    output is a fixed point that keeps the hashed text."""
    check = check_article_fragment(markup)
    assert all(isinstance(item, str) and item for item in [*check.violations, *check.warnings])
    canonical, root = canonical_article_tree(markup)
    again, again_root = canonical_article_tree(canonical)
    assert again == canonical
    assert canonical_text_of(again_root) == canonical_text_of(root)


@fuzz(ci_examples=400)
@given(memory_file_inputs)
def test_any_file_is_read_and_checked_without_raising(text: str) -> None:
    assert_reads_whole_file(text)


@fuzz(ci_examples=400)
@given(near_valid_files())
def test_near_valid_files_are_read_and_valid_ones_round_trip(text: str) -> None:
    assert_reads_whole_file(text)


@fuzz(ci_examples=300)
@given(hostile_fragment)
def test_hostile_article_markup_is_checked_and_canonicalized(markup: str) -> None:
    assert_reads_fragment(markup)


def assert_write_door_renders_or_refuses(markup: str) -> None:
    """Article HTML through the write door's pure render path: a typed refusal, or a file that validates,
    holds its own hash, stores a canonical article free of executable markup, and round-trips."""
    request = WriteRequest(title="Fuzzed article", memory_type="semantic", article_html=markup)
    try:
        placed, parsed = render_checked(request, NOW)
    except MemhtmlError as refusal:
        assert not refusal.usage and refusal.message
        note_outcome(f"write refused: {envelope_code(refusal)}")
        return
    reparsed, check = inspect_memory(placed.file_text)
    assert check.violations == []
    assert reparsed.content_hash == placed.content_hash == reparsed.stated_content_hash == parsed.content_hash
    assert canonical_article(reparsed.article_inner_html) == reparsed.article_inner_html
    assert markup_problems(reparsed.article_inner_html) == []
    assert_valid_file_round_trips(placed.file_text)
    note_outcome("written")


@fuzz(ci_examples=300)
@given(near_valid_articles())
def test_hostile_article_html_is_written_valid_or_refused(markup: str) -> None:
    assert_write_door_renders_or_refuses(markup)


@pytest.mark.parametrize("entry", corpus("html"))
def test_html_corpus_replays(entry: dict[str, Any]) -> None:
    value = corpus_value(entry)
    if "cpu_budget_seconds" in entry:
        # A file read in quadratic time once: CPU time (not wall time, whatever the load) of one read and
        # check stays a fraction of what that took. The full round trip would re-read it a dozen times.
        started = time.process_time()
        _, check = inspect_memory(value)
        assert time.process_time() - started < entry["cpu_budget_seconds"]
        assert check.ok is entry["valid"], check.violations
    elif entry.get("kind") == "fragment":
        assert_reads_fragment(value)
    elif entry.get("kind") == "article_html":
        assert_write_door_renders_or_refuses(value)
    else:
        check = assert_reads_whole_file(value)
        if "valid" in entry:
            assert check.ok is entry["valid"], check.violations
