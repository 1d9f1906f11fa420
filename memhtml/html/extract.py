"""What the index derives from an article: gist, body text, event time, facets, citations and terms.

Rules follow the reference projection (§1.4, P37, P38): the gist is the first `<mark>` without its
pre/code, event time is the first `<time>` anywhere in the article, and a `<dl>` pairs only its
direct `<dt>`/`<dd>` children.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Final, NamedTuple, TypeVar

from memhtml.contracts.vocabulary import GIST_EXCLUDED_ELEMENTS, INLINE_ELEMENTS
from memhtml.html.hashing import canonical_text_of, flat_text
from memhtml.html.javascript_semantics import (
    collapse_ascii_whitespace,
    collapsed,
    finite_number,
    js_trim,
    js_word_count,
)
from memhtml.html.metavalues import language_entity_name
from memhtml.html.tree import Element, Text, elements_in, walk

Row = TypeVar("Row")


class Facet(NamedTuple):
    name: str
    value: str
    numeric_value: float | None


class Citation(NamedTuple):
    text: str
    href: str | None  # `<q cite>` only; `<cite>` never carries one


class ArticleFacts(NamedTuple):
    """Derived fields of one article; facets and citations deduped (first wins) as the index stores them."""

    canonical_text: str
    body_text: str
    gist: str
    event_at: str | None
    summaries: Sequence[str] = ()
    facets: Sequence[Facet] = ()
    citations: Sequence[Citation] = ()
    defined_terms: Sequence[str] = ()
    code_langs: Sequence[str] = ()
    disclosure_text: str = ""

    @property
    def word_count(self) -> int:
        return js_word_count(self.body_text)


def extract_article(article: Element | None) -> ArticleFacts:
    """Every derived field of `article`; an absent article yields empty facts."""
    if article is None:
        return ArticleFacts(canonical_text="", body_text="", gist="", event_at=None)
    elements = elements_in(article.children)
    canonical = canonical_text_of(article)
    gist = next((gist_of(el) for el in elements if el.tag == "mark"), "")
    event_at = next((el.get("datetime") for el in elements if el.tag == "time"), None)
    texts = _subtree_texts(article)
    summaries = [text for el in elements if el.tag == "summary" if (text := texts.flat[el])]
    facet_rows = [row for el in elements if el.tag == "dl" for row in _facets_of(el, texts)]
    citation_rows = [row for el in elements if el.tag in ("cite", "q") if (row := _citation_of(el, texts))]
    defined_terms = _unique(text for el in elements if el.tag == "dfn" if (text := texts.flat[el]))
    code_langs = _unique(
        name
        for el in elements
        if el.tag == "code"
        if (lang := el.get("data-lang")) is not None
        if (name := language_entity_name(lang))
    )
    disclosure = [gist, *summaries]
    disclosure += [js_trim(f"{row.name}: {row.value}") for row in facet_rows]
    disclosure += [row.text for row in citation_rows]
    return ArticleFacts(
        canonical_text=canonical,
        body_text=collapsed(canonical),
        gist=gist,
        event_at=event_at,
        summaries=summaries,
        facets=_unique_by(facet_rows, lambda row: (row.name, row.value)),
        citations=_unique_by(citation_rows, lambda row: row.text),
        defined_terms=defined_terms,
        code_langs=code_langs,
        disclosure_text="\n".join(line for line in disclosure if line),
    )


def gist_of(mark: Element) -> str:
    """The claim text: the mark's text without pre/code subtrees, collapsed and trimmed (NBSP trims too)."""
    return flat_text(mark, skip=GIST_EXCLUDED_ELEMENTS)


class _SubtreeTexts(NamedTuple):
    flat: dict[Element, str]  # `flat_text` of every summary, dfn, cite, q, dt and dd
    numbers: dict[Element, float]  # the first finite `<data value>` inside each dd that has one


_TEXT_BEARING: Final = frozenset({"summary", "dfn", "cite", "q", "dt", "dd"})


def _subtree_texts(article: Element) -> _SubtreeTexts:
    """`flat_text` of every text-bearing element and the number of every dd, in one walk.

    Calling `flat_text` per element walks each subtree again, quadratic in the nesting depth: a file of
    a few thousand nested `<q>` took minutes to read. Here the article's text is collapsed once and each
    element's text is a slice of it, JS-trimmed, which is what collapsing its own text gives: a whitespace
    run cut at a slice's edge is trimmed either way.
    """
    collapsed_pieces: list[str] = []
    length = 0
    after_space = False
    spans: dict[Element, tuple[int, int]] = {}
    starts: dict[Element, int] = {}
    numbers: dict[Element, float] = {}
    open_dds: list[Element] = []  # dds entered and still without a number
    for entering, node in walk(article.children):
        piece = None
        if isinstance(node, Element):
            if not entering:
                start = starts.pop(node, None)
                if start is not None:
                    spans[node] = (start, length)
                if open_dds and open_dds[-1] is node:
                    open_dds.pop()
            if node.tag not in INLINE_ELEMENTS:
                piece = " "  # a word boundary where a block starts and where it ends
            elif entering and node.tag == "data" and open_dds:
                value = node.get("value")
                number = finite_number(value) if value is not None else None
                if number is not None:
                    numbers.update(dict.fromkeys(open_dds, number))
                    open_dds.clear()
        elif isinstance(node, Text):
            piece = collapse_ascii_whitespace(node.data)
        if piece:
            if after_space and piece[0] == " ":
                piece = piece[1:]
            if piece:
                collapsed_pieces.append(piece)
                length += len(piece)
                after_space = piece[-1] == " "
        if entering and isinstance(node, Element) and node.tag in _TEXT_BEARING:
            starts[node] = length
            if node.tag == "dd":
                open_dds.append(node)
    text = "".join(collapsed_pieces)
    return _SubtreeTexts({element: js_trim(text[start:end]) for element, (start, end) in spans.items()}, numbers)


def _facets_of(dl: Element, texts: _SubtreeTexts) -> list[Facet]:
    rows: list[Facet] = []
    name: str | None = None
    for child in dl.children:
        if not isinstance(child, Element):
            continue
        if child.tag == "dt":
            name = texts.flat[child]
        elif child.tag == "dd" and name is not None:
            rows.append(Facet(name, texts.flat[child], texts.numbers.get(child)))
    return rows


def _citation_of(element: Element, texts: _SubtreeTexts) -> Citation | None:
    text = texts.flat[element]
    if not text:
        return None
    return Citation(text, element.get("cite") if element.tag == "q" else None)


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _unique_by(rows: list[Row], key: Callable[[Row], Hashable]) -> list[Row]:
    seen: set[Hashable] = set()
    unique: list[Row] = []
    for row in rows:
        marker = key(row)
        if marker not in seen:
            seen.add(marker)
            unique.append(row)
    return unique
