"""The content hash: sha256 over the article's canonical text, the corpus's dedupe and identity key.

Every non-inline element is a word boundary, ASCII whitespace collapses, NBSP is content and `<pre>`
text is verbatim; only collapsible edge spaces are trimmed (reference §3.1). The head is out of scope,
so head edits never move the hash.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

from memhtml.contracts.vocabulary import INLINE_ELEMENTS
from memhtml.html.javascript_semantics import JS_WHITESPACE, collapse_ascii_whitespace, collapsed
from memhtml.html.parser import parse_document, parse_fragment
from memhtml.html.tree import Element, Text, iter_elements, walk

HASH_PREFIX: Final = "sha256:"
# `<article` then what ends an HTML tag name: whitespace, `>` or `/` (`<article/>` opens an article too).
_WHOLE_FILE: Final = re.compile(f"<article[{re.escape(JS_WHITESPACE)}/>]", re.IGNORECASE)
_BOUNDARY: Final = " "


def content_hash(markup: str) -> str:
    """`sha256:<hex>` of the canonical article text of a whole file or of bare article inner markup."""
    return hash_text(canonical_text(markup))


def canonical_text(markup: str) -> str:
    """The text the content hash covers, for a whole file (has `<article`) or bare inner markup."""
    article = locate_article(markup)
    return canonical_text_of(article) if article is not None else ""


def hash_text(text: str) -> str:
    return HASH_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def locate_article(markup: str) -> Element | None:
    """The first `<article>` of a whole document, or bare markup parsed in `<article>` context.

    None when the markup looks like a file (mentions `<article`) but parses to no article element.
    """
    if _WHOLE_FILE.search(markup):
        return first_article(parse_document(markup))
    return Element("article", children=parse_fragment(markup, "article"))


def first_article(html: Element) -> Element | None:
    for element in iter_elements([html]):
        if element.tag == "article":
            return element
    return None


def canonical_text_of(root: Element) -> str:
    """Canonical text of `root` and its subtree (root included, so an article contributes edge spaces)."""
    runs: list[tuple[bool, list[str]]] = []  # (verbatim, pieces); adjacent same-mode runs coalesce

    def emit(verbatim: bool, text: str) -> None:
        if runs and runs[-1][0] == verbatim:
            runs[-1][1].append(text)
        else:
            runs.append((verbatim, [text]))

    pre_depth = 0
    for entering, node in walk([root]):
        if isinstance(node, Element):
            if node.tag not in INLINE_ELEMENTS and entering:
                emit(False, _BOUNDARY)
            if node.tag == "pre":
                pre_depth += 1 if entering else -1
            if node.tag not in INLINE_ELEMENTS and not entering:
                emit(False, _BOUNDARY)
        elif isinstance(node, Text):
            emit(pre_depth > 0, node.data)
    last = len(runs) - 1
    rendered: list[str] = []
    for index, (verbatim, pieces) in enumerate(runs):
        text = "".join(pieces)
        if not verbatim:
            text = collapse_ascii_whitespace(text)
            if index == 0 and text.startswith(" "):
                text = text[1:]
            if index == last and text.endswith(" "):
                text = text[:-1]
        rendered.append(text)
    return "".join(rendered)


def flat_text(root: Element, skip: frozenset[str] = frozenset()) -> str:
    """Collapsed, JS-trimmed text of `root` with word boundaries, leaving out `skip` subtrees entirely.

    This is the reference's rule for gist (skipping pre/code), summaries, dfn terms, facets and citations.
    """
    pieces: list[str] = []
    skipping: Element | None = None
    for entering, node in walk(root.children):
        if skipping is not None:
            if node is skipping and not entering:
                skipping = None
            continue
        if isinstance(node, Element):
            if entering and node.tag in skip:
                skipping = node
                continue
            if node.tag not in INLINE_ELEMENTS:
                pieces.append(_BOUNDARY)
        elif isinstance(node, Text):
            pieces.append(node.data)
    return collapsed("".join(pieces))
