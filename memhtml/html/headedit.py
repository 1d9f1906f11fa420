"""Surgical head edits: set, add and remove `<meta>`/`<link>` lines by splicing bytes, never re-serializing.

Source offsets come from the standard library's `html.parser`, so everything outside the touched span,
the article above all, stays byte-identical and the content hash cannot move. New lines land at their
META_ORDER position (reference §4.9); values are escaped like the serializer, so each stays on one line.

The scanner follows the HTML5 rules for where the head ends, but its tokenizer is not HTML5's (comments,
CDATA sections and character references in attributes differ on hostile markup). So every edit first
proves that the scanner sees the metas and links the reader sees, in order, and refuses the edit
(InvalidMemory) when they differ, rather than splice a span the reader does not read.
"""

from __future__ import annotations

from html.parser import HTMLParser
from itertools import zip_longest
from typing import Final, NamedTuple

from memhtml.contracts.errors import InvalidMemory
from memhtml.contracts.vocabulary import META_ORDER, META_PREFIX, REPEATABLE_METAS
from memhtml.html.document import head_links, head_metas
from memhtml.html.parser import parse_document
from memhtml.html.template import link_line, meta_line


class HeadTag(NamedTuple):
    """A `<meta name=memhtml-*>` or `<link rel=memhtml-*>` start tag and its source span [start, end)."""

    tag: str
    key: str  # the meta name or link rel
    value: str  # the meta content or link href, entity-decoded
    start: int
    end: int


class HeadLayout(NamedTuple):
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
    layout = _editable_head(text)
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
    layout = _editable_head(text)
    existing = layout.metas(name)
    if any(tag.value == value for tag in existing):
        return text
    if existing:
        return _insert_after(text, existing[-1].end, meta_line(name, value))
    return _insert_in_order(text, layout, name, value)


def remove_meta(text: str, name: str, value: str | None = None) -> str:
    """Remove every `name` meta (only those holding `value`, when given); a line left empty goes too."""
    doomed = [tag for tag in _editable_head(text).metas(name) if value is None or tag.value == value]
    return _remove_spans(text, doomed)


def add_link(text: str, rel_token: str, href: str) -> str:
    """Add `<link rel=rel_token href=href>` after the last memhtml link (else the last memhtml meta, else
    before `</head>`); idempotent on (rel_token, href)."""
    layout = _editable_head(text)
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
    links = _editable_head(text).links()
    doomed = [link for link in links if link.key == rel_token and href in (None, link.value)]
    return _remove_spans(text, doomed)


def scan_head(text: str) -> HeadLayout:
    """Locate the head's memhtml metas and links with their source spans."""
    # HTML5 reads a CR as a line break and a NUL as U+FFFD before it tokenizes; one character for one,
    # so every offset still points into `text` (a CRLF inside a value reads as two breaks, and is refused).
    preprocessed = text.replace("\r", "\n").replace("\0", "\ufffd")
    scanner = _HeadScanner(preprocessed)
    try:
        scanner.feed(preprocessed)
        scanner.close()
    except _HeadEndedError:
        pass
    head_end = scanner.head_end if scanner.head_end is not None else len(text)
    return HeadLayout(scanner.found, head_end)


def _editable_head(text: str) -> HeadLayout:
    """`scan_head`, proven against the reader: the same memhtml metas and links in the same order."""
    layout = scan_head(text)
    html = parse_document(text)
    for kind, scanned, read in (
        ("meta", [(tag.key, tag.value) for tag in layout.metas()], head_metas(html)),
        ("link", [(tag.key, tag.value) for tag in layout.links()], head_links(html)),
    ):
        if scanned != read:
            differing = next(pair for pair in zip_longest(scanned, read) if pair[0] != pair[1])
            key = (differing[0] or differing[1] or ("", ""))[0]
            raise InvalidMemory(
                "invalid memory: the head cannot be edited in place: the HTML parser and the head scanner "
                f"read its <{kind}> elements differently (first at `{key}`)",
                ["write the head as plain <meta> and <link> elements between <head> and </head>"],
            )
    return layout


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


# What the HTML5 tree builder keeps in the head ("in head" and "after head" insertion modes); any other
# start tag, non-whitespace text, or `</body>`, `</html>`, `</br>` ends the head, and whatever follows
# (a `<meta>` included) lands in the body, where the reader never looks for metas.
_IN_HEAD: Final = frozenset(
    {
        *("html", "head", "base", "basefont", "bgsound", "link", "meta", "title"),
        *("noscript", "noframes", "style", "script", "template"),
    }
)
_AFTER_HEAD: Final = _IN_HEAD - {"noscript"}
_HEAD_CLOSING_END_TAGS: Final = frozenset({"body", "html", "br"})
# Elements whose content is text to the HTML5 tokenizer (the standard library only knows script and
# style), and the RCDATA title: nothing inside them is a tag.
_TEXT_CONTENT: Final = frozenset({"title", "noframes", "style", "script"})
# Inside a template the body's rules apply, so these read as text too.
_TEMPLATE_TEXT_CONTENT: Final = _TEXT_CONTENT | {"textarea", "xmp", "iframe", "noembed", "plaintext"}
_ASCII_WHITESPACE: Final = " \t\n\f\r"


class SpliceScanner(HTMLParser):
    """The standard library's tokenizer with HTML5's comments, and source offsets: the base of every scanner
    that finds a span to splice (head edits here, the event time in `identity`).

    HTML5 closes `<!-->` and `<!--->` at once and a comment at `--!>` too, and reads `<![CDATA[` outside
    foreign content as a bogus comment up to the first `>`; the library (before 3.13) does neither, and
    raises AssertionError on a marked section such as `<![0`.
    """

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self._line_starts = [0, *(index + 1 for index, char in enumerate(text) if char == "\n")]

    def source_offset(self) -> int:
        """Where the construct being handled starts in the text given to `__init__`."""
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def parse_comment(self, i: int, report: bool | int = True) -> int:
        start = i + 4
        for abrupt in (">", "->"):
            if self.rawdata.startswith(abrupt, start):
                return start + len(abrupt)
        closes = [at for at in (self.rawdata.find("-->", start), self.rawdata.find("--!>", start)) if at >= 0]
        if not closes:
            return -1
        close = min(closes)
        return close + (3 if self.rawdata.startswith("-->", close) else 4)

    def parse_html_declaration(self, i: int) -> int:
        if self.rawdata.startswith("<![", i):
            return self.parse_bogus_comment(i)
        return super().parse_html_declaration(i)


class _HeadScanner(SpliceScanner):
    """Finds the head's memhtml metas and links where the HTML5 parser puts them, with source offsets.

    The head is what the reader (Lexbor) makes of it: `<meta>`s after `</head>` but before the body
    still belong to it, `<template>` content and the text of title/script/style/noframes do not, and
    the head ends at the first start tag, text or end tag that opens the body.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text
        self.found: list[HeadTag] = []
        self.head_end: int | None = None  # `</head>`, else where the head implicitly ended
        self._text_of: str | None = None  # the element whose content is text, while inside one
        self._templates = 0  # open <template> elements: their content is inert, outside the tree
        self._after_head = False

    def _end_head(self, offset: int) -> None:
        if self.head_end is None:
            self.head_end = offset
        raise _HeadEndedError

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._text_of is not None:
            return
        if not self._templates and tag not in (_AFTER_HEAD if self._after_head else _IN_HEAD):
            self._end_head(self.source_offset())
        if tag in (_TEMPLATE_TEXT_CONTENT if self._templates else _TEXT_CONTENT):
            self._text_of = tag
            self.set_cdata_mode(tag)  # no markup inside, not even a comment (the library knows script, style)
        elif tag == "template":
            self._templates += 1
        elif not self._templates:
            self._record(tag, attrs)

    # HTML ignores the self-closing flag: `<title/>` opens a title, `<meta/>` is a meta.
    handle_startendtag = handle_starttag

    def handle_endtag(self, tag: str) -> None:
        if self._text_of is not None:
            if tag == self._text_of:
                self._text_of = None
            return
        if tag == "template" and self._templates:
            self._templates -= 1
            return
        if self._templates:
            return
        if tag == "head" and not self._after_head:
            self.head_end = self.source_offset()
            self._after_head = True
        elif tag in _HEAD_CLOSING_END_TAGS:
            self._end_head(self.source_offset())

    def handle_data(self, data: str) -> None:
        if self._text_of is not None or self._templates or not data.strip(_ASCII_WHITESPACE):
            return
        # The head ends at the first character that is not whitespace (offsets are of the source, where
        # a character reference may spell a space; ending a little early is safe, late is not).
        start = self.source_offset()
        end = len(self.text)
        while start < end and self.text[start] in _ASCII_WHITESPACE:
            start += 1
        self._end_head(start)

    def _record(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        key_name, value_name = {"meta": ("name", "content"), "link": ("rel", "href")}.get(tag, ("", ""))
        if not key_name:
            return
        values = {name: value or "" for name, value in reversed(attrs)}  # the first of duplicates wins
        key = values.get(key_name)
        if key is None or not key.startswith(META_PREFIX):
            return
        start = self.source_offset()
        raw = self.get_starttag_text() or ""
        self.found.append(HeadTag(tag, key, values.get(value_name, ""), start, start + len(raw)))
