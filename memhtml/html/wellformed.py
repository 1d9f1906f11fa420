"""The fast reader of well-formed markup: documents and article fragments in the shape memory files have.

A memory file is written by one serializer: a doctype, `<html>`, a head of metas, links and a title, a
body whose elements are all closed where they end. For such markup the HTML5 tree is plain nesting,
and this reader builds it in one pass over the text, several times cheaper than Lexbor's parse and the
conversion of its nodes, and without loading Lexbor at all.

It answers None whenever HTML5's tree construction could build something other than the nesting as
written: an element it does not know, an end tag that does not close the current element, a `<p>` left
open where a block starts (the parser would close it), a table (foster parenting), raw-text elements,
comments, character references other than a few unambiguous ones, control characters. The parser
module then parses with Lexbor, which stays the authority: tests hold this reader to Lexbor's tree on
every file they can make, and to None or Lexbor's tree on tag soup.
"""

from __future__ import annotations

import re
from typing import Final

from memhtml.html.tree import Element, Node, Text

_DOCTYPE: Final = "<!doctype html>"
_SPACE: Final = " \t\n\f"
# Names read so far: the lowercased name, or "" for text that is no plain name.
_PLAIN_NAMES: Final[dict[str, str]] = {}
_PLAIN_NAMES_KEPT: Final = 4096
_PLAIN_NAME_KEPT_LENGTH: Final = 40
_REFERENCE: Final = re.compile(r"&(?:(amp|lt|gt|quot|apos|nbsp);|#([0-9]{1,7});|#[xX]([0-9a-fA-F]{1,6});)")
_NAMED: Final[dict[str, str]] = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'", "nbsp": "\u00a0"}

# Start tags that close an open `<p>`; the parser closes it, so a `<p>` still open there sends the
# markup to Lexbor. The same goes for the list items (li, dd, dt) and headings, below.
_CLOSES_P: Final[frozenset[str]] = frozenset(
    {
        "address", "article", "aside", "blockquote", "details", "div", "dl", "figcaption", "figure",
        "footer", "header", "main", "nav", "ol", "p", "section", "summary", "ul",
        "h1", "h2", "h3", "h4", "h5", "h6", "li", "dd", "dt", "hr", "pre",
    }
)  # fmt: skip
_HEADINGS: Final[frozenset[str]] = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_LIST_ITEMS: Final[frozenset[str]] = frozenset({"li", "dd", "dt"})
_DEFINITION_ITEMS: Final[frozenset[str]] = frozenset({"dd", "dt"})
# Inline elements the parser inserts as they come: ordinary ones and the formatting ones (code, em,
# strong, b, i, a) whose bookkeeping changes nothing while every end tag closes the current element.
_INLINE: Final[frozenset[str]] = frozenset(
    {
        "abbr", "cite", "data", "dfn", "kbd", "mark", "q", "samp", "span", "time", "var", "sub", "sup",
        "code", "em", "strong", "b", "i", "a",
    }
)  # fmt: skip
_VOID_IN_BODY: Final[frozenset[str]] = frozenset({"br", "hr", "img", "wbr"})
_VOID_IN_HEAD: Final[frozenset[str]] = frozenset({"meta", "link"})
# Body elements that may be open on the stack of open elements, beside html and body themselves.
_CONTAINERS: Final[frozenset[str]] = (_CLOSES_P - {"hr"}) | _INLINE
# Of the elements above, the ones HTML5 counts as "special" minus address, div and p: a search for an
# open list item stops at them.
_LIST_ITEM_SEARCH_STOPS: Final[frozenset[str]] = (_CLOSES_P | {"html", "body"}) - {"address", "div", "p", "hr"}

# The insertion modes a document passes through around its body (`_read_body` reads the body itself).
_BEFORE_HEAD: Final = 0
_IN_HEAD: Final = 1
_AFTER_HEAD: Final = 2
_AFTER_BODY: Final = 3
_AFTER_AFTER_BODY: Final = 4


class _StartTag:
    """A start tag as read: its lowercased name, its attributes and whether it ended in `/>`."""

    __slots__ = ("attributes", "end", "name", "self_closing")

    def __init__(self, name: str, attributes: list[tuple[str, str]], self_closing: bool, end: int) -> None:
        self.name = name
        self.attributes = attributes
        self.self_closing = self_closing
        self.end = end  # where the markup goes on after the tag


def read_wellformed_document(markup: str) -> Element | None:
    """The `<html>` element of `markup` as HTML5 parses it, or None when this reader cannot be sure."""
    if not _plain_characters(markup):
        return None
    length = len(markup)
    position = _past_space(markup, 0)
    if markup[position : position + len(_DOCTYPE)].lower() != _DOCTYPE:
        return None  # without a doctype the document is in quirks mode
    position = _past_space(markup, position + len(_DOCTYPE))
    opening = _start_tag(markup, position)
    if opening is None or opening.name != "html" or opening.self_closing:
        return None
    html = Element("html", opening.attributes, [])
    head: Element | None = None
    body: Element | None = None
    open_elements: list[Element] = [html]
    mode = _BEFORE_HEAD
    position = opening.end
    while position < length:
        tag_start = markup.find("<", position)
        if tag_start < 0:
            tag_start = length
        if tag_start > position:
            text = markup[position:tag_start]
            if text.strip(_SPACE):
                return None  # text outside the body would move into an implied one
            if mode == _IN_HEAD and head is not None:
                _append_text(head, text)
            elif mode == _AFTER_HEAD:
                _append_text(html, text)
            elif mode != _BEFORE_HEAD and body is not None:  # after the body: whitespace goes into it
                _append_text(body, text)
            position = tag_start
            if position == length:
                break
        if mode == _AFTER_BODY and _at(markup, "</html>", position):
            mode = _AFTER_AFTER_BODY
            position += len("</html>")
            continue
        if mode == _IN_HEAD and _at(markup, "</head>", position):
            mode = _AFTER_HEAD
            open_elements.pop()
            position += len("</head>")
            continue
        start = _start_tag(markup, position)
        if start is None:
            return None
        name = start.name
        position = start.end
        if mode == _BEFORE_HEAD and name == "head" and not start.self_closing:
            head = Element("head", start.attributes, [], html)
            html.children.append(head)
            open_elements.append(head)
            mode = _IN_HEAD
        elif mode == _IN_HEAD and head is not None and name in _VOID_IN_HEAD:
            head.children.append(Element(name, start.attributes, [], head))
        elif mode == _IN_HEAD and head is not None and name == "title" and not start.self_closing:
            title = Element("title", start.attributes, [], head)
            head.children.append(title)
            closing = markup.find("</title>", position)
            if closing < 0:
                return None
            content = markup[position:closing]
            if "</" in content and "</title" in content.lower():
                return None  # an end tag the parser would take for this one, written otherwise
            if content:
                decoded = _decoded(content) if "&" in content else content
                if decoded is None:
                    return None
                title.children.append(Text(decoded))
            position = closing + len("</title>")
        elif mode == _AFTER_HEAD and name == "body" and not start.self_closing:
            body = Element("body", start.attributes, [], html)
            html.children.append(body)
            open_elements.append(body)
            position = _read_body(markup, position, open_elements)
            if position < 0:
                return None
            mode = _AFTER_BODY
        else:
            return None
    if body is None:
        return None  # the parser would have made the missing parts up
    return html


def read_wellformed_fragment(markup: str) -> list[Node] | None:
    """The top-level nodes of `markup` parsed as the inner HTML of an `<article>`, or None when this
    reader cannot be sure."""
    if not _plain_characters(markup):
        return None
    # HTML5 parses a fragment under an `<html>` element; its children are the fragment's top-level
    # nodes, which have no parent (as Lexbor's fragment root gives them).
    root = Element("html", [], [])
    if _read_body(markup, 0, [root]) < 0:
        return None
    top = root.children
    for node in top:
        if type(node) is Element:
            node.parent = None
    return top


def _read_body(markup: str, position: int, open_elements: list[Element]) -> int:
    """Read body content from `position` into the open elements: up to the end of the markup, or past a
    `</body>` that closes the body itself (`open_elements` is then html and body). Returns where the
    markup goes on, or -1 for Lexbor."""
    length = len(markup)
    while position < length:
        tag_start = markup.find("<", position)
        if tag_start < 0:
            tag_start = length
        if tag_start > position:
            if not _insert_text(open_elements[-1], markup[position:tag_start]):
                return -1
            position = tag_start
            if position == length:
                break
        if len(open_elements) == 2 and open_elements[-1].tag == "body" and _at(markup, "</body>", position):
            return position + len("</body>")
        position = _body_tag(markup, position, open_elements)
        if position < 0:
            return -1
    return position


def _body_tag(markup: str, position: int, open_elements: list[Element]) -> int:
    """Handle the tag at `position` in the body; returns where the markup goes on, or -1 for Lexbor."""
    current = open_elements[-1]
    if _at(markup, "</", position):
        closing = markup.find(">", position + 2)
        if closing < 0 or current.tag not in _CONTAINERS:
            return -1
        # A plain name, as for a start tag: `</` before anything but an ASCII letter starts a comment.
        if _plain_name(markup[position + 2 : closing]) != current.tag:
            return -1
        open_elements.pop()
        return closing + 1
    start = _start_tag(markup, position)
    if start is None:
        return -1
    name = start.name
    void = name in _VOID_IN_BODY
    if start.self_closing and not void:
        return -1  # the parser ignores the slash: the element stays open
    if name in _CLOSES_P:
        for element in open_elements:
            if element.tag == "p":
                return -1
        if name in _HEADINGS and current.tag in _HEADINGS:
            return -1
        if name in _LIST_ITEMS:
            # An open item of the same list kind is closed first (a dd by a dt, too), unless the search
            # meets a block first.
            for element in reversed(open_elements):
                tag = element.tag
                if tag == name or (name != "li" and tag in _DEFINITION_ITEMS):
                    return -1
                if tag in _LIST_ITEM_SEARCH_STOPS:
                    break
    elif name == "a":
        for element in open_elements:
            if element.tag == "a":
                return -1
    elif name not in _INLINE and not void:
        return -1
    element = Element(name, start.attributes, [], current)
    current.children.append(element)
    position = start.end
    if not void:
        open_elements.append(element)
        if name == "pre":
            if _at(markup, "\n", position):
                position += 1  # HTML5 drops the newline right after <pre>
            elif _at(markup, "&", position):
                return -1  # and the parser drops it written as a reference too
    return position


def _start_tag(markup: str, position: int) -> _StartTag | None:
    """The start tag at `position`, when it is written as a serializer writes one: a name, then each
    attribute after one space, bare or as `name="value"`, no name twice. Anything else (unquoted or
    single-quoted values, other whitespace) is None, which sends the markup to Lexbor."""
    tag_end = markup.find(">", position)
    if tag_end < 0:
        return None
    space = markup.find(" ", position, tag_end)
    name_end = space if space >= 0 else tag_end
    self_closing = False
    if space < 0 and markup[tag_end - 1] == "/":
        name_end = tag_end - 1
        self_closing = True
    name = _plain_name(markup[position + 1 : name_end])
    if name is None:
        return None
    attributes: list[tuple[str, str]] = []
    cursor = name_end
    while cursor < tag_end:
        if markup[cursor] == "/":
            if cursor + 1 != tag_end:
                return None
            self_closing = True
            break
        cursor += 1  # past the one space before an attribute
        if cursor == tag_end:
            break
        if markup[cursor] == "/" and cursor + 1 == tag_end:
            self_closing = True
            break
        equals = markup.find('="', cursor, tag_end)
        bare_end = markup.find(" ", cursor, tag_end if equals < 0 else equals)
        if equals < 0 or bare_end >= 0:
            # A bare attribute (`<details open>`): its name runs to the next space or the tag's end.
            if bare_end < 0:
                bare_end = tag_end - 1 if markup[tag_end - 1] == "/" else tag_end
            if not _add_attribute(attributes, markup[cursor:bare_end], ""):
                return None
            cursor = bare_end
            continue
        closing = markup.find('"', equals + 2)
        if closing < 0:
            return None
        value = markup[equals + 2 : closing]
        if "&" in value:
            decoded = _decoded(value)
            if decoded is None:
                return None
            value = decoded
        if not _add_attribute(attributes, markup[cursor:equals], value):
            return None
        cursor = closing + 1
        if cursor > tag_end:  # the value held a `>`
            tag_end = markup.find(">", cursor)
            if tag_end < 0:
                return None
        if cursor < tag_end and markup[cursor] != " " and markup[cursor] != "/":
            return None  # an attribute straight after a value
    return _StartTag(name, attributes, self_closing, tag_end + 1)


def _add_attribute(attributes: list[tuple[str, str]], raw_name: str, value: str) -> bool:
    """Add the attribute when its name is plain and new (the parser keeps the first of two)."""
    name = _plain_name(raw_name)
    if name is None:
        return False
    for known, _ in attributes:
        if known == name:
            return False
    attributes.append((name, value))
    return True


def _plain_name(raw: str) -> str | None:
    """`raw` lowercased when it is a plain tag or attribute name: an ASCII letter, then ASCII letters,
    digits and hyphens. Names repeat from file to file, so the answers are kept (up to a bound)."""
    known = _PLAIN_NAMES.get(raw)
    if known is not None:
        return known if known else None
    plain = bool(raw) and raw.isascii() and raw[0].isalpha() and raw.replace("-", "").isalnum()
    name = raw.lower() if plain else ""
    if len(raw) <= _PLAIN_NAME_KEPT_LENGTH and len(_PLAIN_NAMES) < _PLAIN_NAMES_KEPT:
        _PLAIN_NAMES[raw] = name
    return name if name else None


def _plain_characters(markup: str) -> bool:
    """Markup without the characters HTML5 rewrites before parsing (NUL, CR) or Lexbor drops (lone
    surrogates)."""
    if "\x00" in markup or "\r" in markup:
        return False
    if markup.isascii():
        return True
    try:
        markup.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _insert_text(parent: Element, text: str) -> bool:
    if "&" in text:
        decoded = _decoded(text)
        if decoded is None:
            return False
        text = decoded
    _append_text(parent, text)
    return True


def _append_text(parent: Element, text: str) -> None:
    """Insert text as HTML5 does: into the last child when that is text already."""
    children = parent.children
    if children:
        last = children[-1]
        if type(last) is Text:
            last.data += text
            return
    children.append(Text(text))


def _decoded(text: str) -> str | None:
    """`text` with its character references replaced, or None for one this reader leaves to Lexbor."""
    parts: list[str] = []
    position = 0
    length = len(text)
    while True:
        ampersand = text.find("&", position)
        if ampersand < 0:
            parts.append(text[position:])
            return "".join(parts)
        parts.append(text[position:ampersand])
        reference = _REFERENCE.match(text, ampersand)
        if reference is None:
            following = text[ampersand + 1] if ampersand + 1 < length else " "
            if following == "#" or (following.isascii() and following.isalnum()):
                return None  # a reference this reader does not know, or text that only looks like one
            parts.append("&")
            position = ampersand + 1
            continue
        named = reference.group(1)
        if named is not None:
            parts.append(_NAMED[named])
        else:
            decimal = reference.group(2)
            number = int(decimal) if decimal is not None else int(reference.group(3), 16)
            if not _plain_code_point(number):
                return None
            parts.append(chr(number))
        position = reference.end()


def _plain_code_point(number: int) -> bool:
    """A code point a numeric reference stands for as written (no replacement, no parse error)."""
    if number in {0x09, 0x0A}:
        return True
    if number < 0x20 or 0x7F <= number < 0xA0 or 0xD800 <= number <= 0xDFFF or number > 0x10FFFF:
        return False
    return not (0xFDD0 <= number <= 0xFDEF or number & 0xFFFE == 0xFFFE)


def _at(markup: str, text: str, position: int) -> bool:
    """`markup.startswith(text, position)`, as a bounded find (which compiles to one call)."""
    return markup.find(text, position, position + len(text)) == position


def _past_space(markup: str, position: int) -> int:
    length = len(markup)
    while position < length and markup[position] in _SPACE:
        position += 1
    return position
