"""The canonical HTML writer for article content, byte-compatible with the reference's own writer.

Attributes sorted by name, void elements without end tags, raw-text elements unescaped, comments
verbatim, and the newline a parser swallows after `<pre>`/`<textarea>`/`<listing>` re-emitted, so
parse-then-serialize is a fixed point and never moves the content hash.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from memhtml.html.escaping import escape_attribute, escape_text
from memhtml.html.javascript_semantics import js_trim, utf16_sort_key
from memhtml.html.parser import parse_fragment
from memhtml.html.tree import Comment, Element, Node, Text

VOID_ELEMENTS: Final = frozenset(
    {"area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input", "keygen"}
    | {"link", "meta", "param", "source", "track", "wbr"}
)
RAW_TEXT_ELEMENTS: Final = frozenset({"style", "script", "xmp", "iframe", "noembed", "noframes", "plaintext"})
# The parser drops one newline right after these start tags, so the writer must put one back.
NEWLINE_SWALLOWING_ELEMENTS: Final = frozenset({"pre", "textarea", "listing"})
_ASCII_WHITESPACE: Final = " \t\n\f\r"
_KNOWN_CANONICAL_LIMIT: Final = 256
_known_canonical: dict[str, Element] = {}


def canonical_article(inner_markup: str) -> str:
    """The article inner HTML re-serialized canonically and trimmed (parsed in `<article>` context)."""
    return canonical_article_tree(inner_markup)[0]


def canonical_article_tree(inner_markup: str) -> tuple[str, Element]:
    """The canonical article and the `<article>` tree it parses to (so hashing needs no reparse).

    The tree may be shared with later calls, so treat it as read-only.
    """
    known = _known_canonical.get(inner_markup)  # one lookup: another thread may clear the memo
    if known is not None:
        return inner_markup, known
    root = _article_root(inner_markup)
    serialized = serialize_nodes(root.children)
    article = js_trim(serialized)
    if "\r" in article:
        # A CR can only survive as a decoded `&#13;` in text, and the next parse turns it into LF. The
        # reference writer serializes twice, so its files hold the LF; a second pass makes ours match
        # and makes the result a fixed point.
        root = _article_root(article)
        article = js_trim(serialize_nodes(root.children))
    elif article != serialized.strip(_ASCII_WHITESPACE):
        # Trimming removed non-ASCII whitespace (U+3000, U+2028...) that was text in the tree.
        root = _article_root(article)
    _remember(article, root)
    return article, root


def _article_root(inner_markup: str) -> Element:
    root = Element("article", [], parse_fragment(inner_markup, "article"))
    for child in root.children:
        if type(child) is Element:
            child.parent = root
    return root


def _remember(article: str, root: Element) -> None:
    # Writers canonicalize, hash, then render the same article; remembering recent results makes the
    # second and third passes free. Bounded so a long batch cannot grow it without limit.
    if len(_known_canonical) >= _KNOWN_CANONICAL_LIMIT:
        _known_canonical.clear()
    _known_canonical[article] = root


def serialize_nodes(nodes: Iterable[Node]) -> str:
    """Serialize `nodes` (and their subtrees) in document order."""
    out: list[str] = []
    # Work items are either a node to write or a literal string (an end tag, raw text) to emit as is.
    stack: list[Node | str] = list(reversed(list(nodes)))
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Text):
            out.append(escape_text(item.data))
        elif isinstance(item, Comment):
            out.append(f"<!--{item.data}-->")
        else:
            out.append(start_tag(item))
            if item.tag in VOID_ELEMENTS:
                continue
            children = item.template_content if item.template_content is not None else item.children
            if item.tag in NEWLINE_SWALLOWING_ELEMENTS and children:
                first = children[0]
                if isinstance(first, Text) and first.data.startswith("\n"):
                    out.append("\n")
            stack.append(f"</{item.tag}>")
            if item.tag in RAW_TEXT_ELEMENTS:
                stack.extend(child.data if isinstance(child, Text) else child for child in reversed(children))
            else:
                stack.extend(reversed(children))
    return "".join(out)


def start_tag(element: Element) -> str:
    """`<tag a="1" b="2">` with attributes sorted by name (JS sort order) and values escaped."""
    if not element.attrs:
        return f"<{element.tag}>"
    attrs = sorted(element.attrs, key=lambda attr: utf16_sort_key(attr[0]))
    rendered = "".join(f' {name}="{escape_attribute(value)}"' for name, value in attrs)
    return f"<{element.tag}{rendered}>"
