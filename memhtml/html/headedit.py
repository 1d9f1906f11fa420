"""Surgical head edits: set, add and remove `<meta>`/`<link>` lines by splicing bytes, never re-serializing.

Source offsets come from the standard library's `html.parser`, so everything outside the touched span,
the article above all, stays byte-identical and the content hash cannot move. New lines land at their
META_ORDER position (reference §4.9); values are escaped like the serializer, so each stays on one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

from memhtml.contracts.vocabulary import META_ORDER, META_PREFIX, REPEATABLE_METAS
from memhtml.html.template import link_line, meta_line

_HEAD_ENDERS = frozenset({"body", "article"})


@dataclass(frozen=True, slots=True)
class HeadTag:
    """A `<meta name=memhtml-*>` or `<link rel=memhtml-*>` start tag and its source span [start, end)."""

    tag: str
    key: str  # the meta name or link rel
    value: str  # the meta content or link href, entity-decoded
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class HeadLayout:
    tags: list[HeadTag]
    head_end: int  # where `</head>` (or, lacking it, the body) starts; insertion point of last resort

    def metas(self, name: str | None = None) -> list[HeadTag]:
        return [tag for tag in self.tags if tag.tag == "meta" and (name is None or tag.key == name)]

    def links(self) -> list[HeadTag]:
        return [tag for tag in self.tags if tag.tag == "link"]


def set_meta(text: str, name: str, value: str) -> str:
    """Set scalar meta `name`: replace its first element in place, or insert a line at its META_ORDER slot.

    Unknown names are a no-op; an unchanged value returns `text` itself.
    """
    if name not in META_ORDER:
        return text
    layout = scan_head(text)
    existing = layout.metas(name)
    if existing:
        first = existing[0]
        if first.value == value:
            return text
        return text[: first.start] + meta_line(name, value) + text[first.end :]
    return _insert_in_order(text, layout, name, value)


def add_meta(text: str, name: str, value: str) -> str:
    """Add one value of a repeatable meta after its last same-name line; idempotent on the value."""
    if name not in REPEATABLE_METAS:
        raise ValueError(f"{name} is not repeatable; use set_meta")
    layout = scan_head(text)
    existing = layout.metas(name)
    if any(tag.value == value for tag in existing):
        return text
    if existing:
        return _insert_after(text, existing[-1].end, meta_line(name, value))
    return _insert_in_order(text, layout, name, value)


def remove_meta(text: str, name: str, value: str | None = None) -> str:
    """Remove every `name` meta (only those holding `value`, when given); a line left empty goes too."""
    doomed = [tag for tag in scan_head(text).metas(name) if value is None or tag.value == value]
    return _remove_spans(text, doomed)


def add_link(text: str, rel_token: str, href: str) -> str:
    """Add `<link rel=rel_token href=href>` after the last memhtml link (else the last memhtml meta, else
    before `</head>`); idempotent on (rel_token, href)."""
    layout = scan_head(text)
    links = layout.links()
    if any(link.key == rel_token and link.value == href for link in links):
        return text
    line = link_line(rel_token, href)
    anchors = links or layout.metas()
    if anchors:
        return _insert_after(text, anchors[-1].end, line)
    return _insert_before(text, layout.head_end, line)


def remove_link(text: str, rel_token: str, href: str | None = None) -> str:
    """Remove every link with `rel_token` (only the one to `href`, when given)."""
    links = scan_head(text).links()
    doomed = [link for link in links if link.key == rel_token and href in (None, link.value)]
    return _remove_spans(text, doomed)


def scan_head(text: str) -> HeadLayout:
    """Locate the head's memhtml metas and links with their source spans."""
    scanner = _HeadScanner(text)
    try:
        scanner.feed(text)
        scanner.close()
    except _HeadEndedError:
        pass
    head_end = scanner.head_end if scanner.head_end is not None else len(text)
    return HeadLayout(scanner.found, head_end)


def _insert_in_order(text: str, layout: HeadLayout, name: str, value: str) -> str:
    rank = META_ORDER.index(name)
    ranked = [(META_ORDER.index(tag.key), tag) for tag in layout.metas() if tag.key in META_ORDER]
    line = meta_line(name, value)
    later = next((tag for tag_rank, tag in ranked if tag_rank > rank), None)
    if later is not None:
        return _insert_before(text, later.start, line)
    earlier = [tag for tag_rank, tag in ranked if tag_rank < rank]
    if earlier:
        return _insert_after(text, earlier[-1].end, line)
    return _insert_before(text, layout.head_end, line)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _insert_before(text: str, offset: int, line: str) -> str:
    """Insert `line` as its own line ahead of whatever starts at `offset`, keeping that line's indent."""
    line_start = text.rfind("\n", 0, offset) + 1
    indent = text[line_start:offset]
    newline = _newline(text)
    if indent.strip() == "":
        return text[:line_start] + indent + line + newline + text[line_start:]
    return text[:offset] + newline + line + newline + text[offset:]


def _insert_after(text: str, offset: int, line: str) -> str:
    """Insert `line` as its own line after the element ending at `offset`, with that element's indent."""
    line_end = text.find("\n", offset)
    tail = text[offset:] if line_end == -1 else text[offset:line_end]
    anchor_line = text[text.rfind("\n", 0, offset) + 1 : offset]
    indent = anchor_line[: len(anchor_line) - len(anchor_line.lstrip(" \t"))]
    newline = _newline(text)
    if tail.strip() != "":
        return text[:offset] + newline + line + newline + text[offset:]
    if line_end == -1:
        return text + newline + indent + line
    return text[: line_end + 1] + indent + line + newline + text[line_end + 1 :]


def _remove_spans(text: str, doomed: list[HeadTag]) -> str:
    for tag in sorted(doomed, key=lambda item: item.start, reverse=True):
        line_start = text.rfind("\n", 0, tag.start) + 1
        line_end = text.find("\n", tag.end)
        after = len(text) if line_end == -1 else line_end + 1
        if text[line_start : tag.start].strip() == "" and text[tag.end : after].strip() == "":
            text = text[:line_start] + text[after:]
        else:
            text = text[: tag.start] + text[tag.end :]
    return text


class _HeadEndedError(Exception):
    """Raised from the scanner's callbacks to stop parsing once the head is over."""


class _HeadScanner(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[HeadTag] = []
        self.head_end: int | None = None
        self._in_title = False
        self._line_starts = [0]
        self._line_starts += [index + 1 for index, char in enumerate(text) if char == "\n"]

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._in_title:
            return
        if tag == "title":
            self._in_title = True
            return
        if tag in _HEAD_ENDERS:
            self.head_end = self._offset()
            raise _HeadEndedError
        self._record(tag, attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self._in_title:
            self._record(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "head" and not self._in_title:
            self.head_end = self._offset()
            raise _HeadEndedError

    def _record(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        key_name, value_name = {"meta": ("name", "content"), "link": ("rel", "href")}.get(tag, ("", ""))
        if not key_name:
            return
        values = dict(reversed(attrs))  # the first of duplicated attributes wins, as in HTML5
        key = values.get(key_name)
        if key is None or not key.startswith(META_PREFIX):
            return
        start = self._offset()
        raw = self.get_starttag_text() or ""
        self.found.append(HeadTag(tag, key, values.get(value_name) or "", start, start + len(raw)))
