"""Two-level identity: the semantic head of a memory and how a restatement changes it.

The article hash says *which sentence*; the semantic head (type, confidence, importance, event time,
entities, tags) says how it is known and what it is about. A restatement of the same article
changes a scalar only when it gives one, and only adds to the sets, so restating a fact with less
metadata changes nothing. Event time lives in the article as its first `<time datetime>` (where the
original reads it); an empty `<time>` carries it without changing the content hash, which covers text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple, TypeVar

from memhtml.contracts.errors import InvalidMemory
from memhtml.html.document import parse_memory
from memhtml.html.escaping import escape_attribute
from memhtml.html.hashing import canonical_text_of, locate_article
from memhtml.html.headedit import SpliceScanner, add_meta, set_meta
from memhtml.html.template import format_confidence
from memhtml.html.tree import iter_elements

# The semantic head's fields, in the order `changed` reports them.
SEMANTIC_FIELDS: Final[tuple[str, ...]] = ("type", "confidence", "importance", "eventAt", "entities", "tags")


class Restatement(NamedTuple):
    """What one write says about a memory's head; None (or empty) means "not stated", never "clear it"."""

    memory_type: str
    confidence: float | None = None
    importance: int | None = None
    event_at: str | None = None
    entities: Sequence[str] = ()
    tags: Sequence[str] = ()


class SemanticHead(NamedTuple):
    """A stored memory's semantic head as the index knows it, to answer "would this restatement change
    anything?" without reading the file. `covers` is conservative: when unsure it says no, and the
    file itself is then compared."""

    memory_type: str
    confidence: float | None
    importance: int | None
    event_at: str | None
    entities: frozenset[str]
    tags: frozenset[str]

    def covers(self, statement: Restatement) -> bool:
        if statement.memory_type != self.memory_type:
            return False
        if statement.confidence is not None and (
            self.confidence is None or format_confidence(statement.confidence) != format_confidence(self.confidence)
        ):
            return False
        if statement.importance is not None and statement.importance != self.importance:
            return False
        if statement.event_at is not None and statement.event_at != self.event_at:
            return False
        # Entities the parser also derives from the article (`concept:`, `lang:`) may be indexed
        # without a meta in the head, so only the file can say whether one is missing.
        if any(
            entity not in self.entities or entity.startswith(("concept:", "lang:")) for entity in statement.entities
        ):
            return False
        return all(tag in self.tags for tag in statement.tags if tag.strip())


class Restated(NamedTuple):
    changed: tuple[str, ...]  # SEMANTIC_FIELDS that moved; empty means the memory already said all of it
    text: str  # the file with those changes applied (the input itself when nothing changed)


def restate(text: str, statement: Restatement, instant: str) -> Restated:
    """Apply `statement` to the memory file `text`: set the scalars it gives that differ, add the entities
    and tags it lacks, and stamp `memhtml-updated` when anything moved. Byte splices only."""
    parsed = parse_memory(text)
    changed: list[str] = []
    if statement.memory_type != parsed.memory_type:
        text = set_meta(text, "memhtml-type", statement.memory_type)
        changed.append("type")
    # Values compare as the parser reads them (a hand-written "0.9" already says 0.90), so this
    # agrees with `SemanticHead.covers`, which sees the indexed numbers.
    if statement.confidence is not None:
        wanted = format_confidence(statement.confidence)
        if parsed.confidence is None or format_confidence(parsed.confidence) != wanted:
            text = set_meta(text, "memhtml-confidence", wanted)
            changed.append("confidence")
    if statement.importance is not None and parsed.importance != statement.importance:
        text = set_meta(text, "memhtml-importance", str(statement.importance))
        changed.append("importance")
    if statement.event_at is not None and statement.event_at != parsed.event_at:
        text = set_event_time(text, statement.event_at)
        changed.append("eventAt")
    for name, field_name, stated, present in (
        ("memhtml-entity", "entities", statement.entities, parsed.entities),
        ("memhtml-tag", "tags", statement.tags, parsed.tags),
    ):
        missing = [value for value in dict.fromkeys(stated) if value.strip() and value not in present]
        for value in missing:
            text = add_meta(text, name, value)
        if missing:
            changed.append(field_name)
    if changed:
        text = set_meta(text, "memhtml-updated", instant)
    return Restated(tuple(changed), text)


def set_event_time(text: str, instant: str) -> str:
    """Make `instant` the article's event time: rewrite the `datetime` of its first `<time>`, or put an
    empty `<time datetime>` right after the claim's `</mark>` (no text, so the content hash holds).

    `text` is a whole file or bare article markup. The splice is found by a tokenizer that is not the
    reader's, so the result is read back: when the reader does not see `instant` as the event time, or
    the article's text moved (a `</mark>` or `<time>` inside a comment or raw text), the edit is refused.
    """
    located = _first_article_time(text)
    if located is None:
        insert_at = _first_mark_end(text)
        if insert_at is None:
            raise _unsettable("its claim has no `</mark>` end tag to anchor the event time after")
        edited = text[:insert_at] + f'<time datetime="{escape_attribute(instant)}"></time>' + text[insert_at:]
    else:
        start, end, attributes = located
        attributes["datetime"] = instant
        rendered = "".join(f' {name}="{escape_attribute(value)}"' for name, value in sorted(attributes.items()))
        edited = text[:start] + f"<time{rendered}>" + text[end:]
    before, after = _event_reading(text), _event_reading(edited)
    if after[0] != instant or after[1] != before[1]:
        raise _unsettable("the HTML parser does not read the spliced <time> where the scanner put it")
    return edited


def _unsettable(why: str) -> InvalidMemory:
    return InvalidMemory(
        f"invalid memory: the event time cannot be set in place: {why}",
        ["write the article's <mark> and first <time> as plain elements, outside comments and raw text"],
    )


def _event_reading(text: str) -> tuple[str | None, str | None]:
    """(event time, canonical text) of the article the reader finds in `text`."""
    article = locate_article(text)
    if article is None:
        return None, None
    event = next(
        (element.get("datetime") for element in iter_elements(article.children) if element.tag == "time"), None
    )
    return event, canonical_text_of(article)


def first_event_time(text: str) -> str | None:
    """The `datetime` of the article's first `<time>` (what the original reads as event time)."""
    located = _first_article_time(text)
    return None if located is None else located[2].get("datetime")


def _article_start(text: str) -> int:
    position = text.find("<article")
    return 0 if position == -1 else position


_Finder = TypeVar("_Finder", "_TimeFinder", "_MarkEndFinder")


def _scan_article(text: str, finder_type: type[_Finder]) -> tuple[int, _Finder]:
    """Run `finder_type` over `text` from `<article` on (it stops at its first find); the offset too."""
    offset = _article_start(text)
    finder = finder_type(text[offset:])
    try:
        finder.feed(text[offset:])
        finder.close()
    except _FoundError:
        pass
    return offset, finder


def _first_article_time(text: str) -> tuple[int, int, dict[str, str]] | None:
    """Source span and attributes of the first `<time>` start tag at or after `<article`."""
    offset, finder = _scan_article(text, _TimeFinder)
    if finder.found is None:
        return None
    start, raw, attributes = finder.found
    return offset + start, offset + start + len(raw), attributes


def _first_mark_end(text: str) -> int | None:
    """Where the first `</mark>` end tag at or after `<article` ends (any case, any spacing)."""
    offset, finder = _scan_article(text, _MarkEndFinder)
    if finder.found is None:
        return None
    closing = text.find(">", offset + finder.found)
    return None if closing == -1 else closing + 1


class _FoundError(Exception):
    """Stops a scan at the first thing it looks for (a `<time>` start tag, a `</mark>` end tag)."""


class _TimeFinder(SpliceScanner):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.found: tuple[int, str, dict[str, str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "time":
            return
        values: dict[str, str] = {}
        for name, value in attrs:
            values.setdefault(name, value or "")  # the first of duplicated attributes wins, as in HTML5
        self.found = (self.source_offset(), self.get_starttag_text() or "", values)
        raise _FoundError


class _MarkEndFinder(SpliceScanner):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.found: int | None = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "mark":
            self.found = self.source_offset()
            raise _FoundError
