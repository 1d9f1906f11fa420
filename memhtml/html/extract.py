"""What the index derives from an article: gist, body text, event time, facets, citations and terms.

Rules follow the reference projection (§1.4, P37, P38): the gist is the first `<mark>` without its
pre/code, event time is the first `<time>` anywhere in the article, and a `<dl>` pairs only its
direct `<dt>`/`<dd>` children.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from memhtml.contracts.vocabulary import GIST_EXCLUDED_ELEMENTS
from memhtml.html.hashing import canonical_text_of, flat_text
from memhtml.html.jscompat import collapsed, finite_number, js_trim, js_word_count
from memhtml.html.metavalues import language_entity_name
from memhtml.html.tree import Element, iter_elements

Row = TypeVar("Row")


@dataclass(frozen=True, slots=True)
class Facet:
    name: str
    value: str
    numeric_value: float | None


@dataclass(frozen=True, slots=True)
class Citation:
    text: str
    href: str | None  # `<q cite>` only; `<cite>` never carries one


@dataclass(frozen=True, slots=True)
class ArticleFacts:
    """Derived fields of one article; facets and citations deduped (first wins) as the index stores them."""

    canonical_text: str
    body_text: str
    gist: str
    event_at: str | None
    summaries: list[str] = field(default_factory=list)
    facets: list[Facet] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    defined_terms: list[str] = field(default_factory=list)
    code_langs: list[str] = field(default_factory=list)
    disclosure_text: str = ""

    @property
    def word_count(self) -> int:
        return js_word_count(self.body_text)


def extract_article(article: Element | None) -> ArticleFacts:
    """Every derived field of `article`; an absent article yields empty facts."""
    if article is None:
        return ArticleFacts(canonical_text="", body_text="", gist="", event_at=None)
    elements = list(iter_elements(article.children))
    canonical = canonical_text_of(article)
    gist = next((gist_of(el) for el in elements if el.tag == "mark"), "")
    event_at = next((el.get("datetime") for el in elements if el.tag == "time"), None)
    summaries = [text for el in elements if el.tag == "summary" if (text := flat_text(el))]
    facet_rows = [row for el in elements if el.tag == "dl" for row in _facets_of(el)]
    citation_rows = [row for el in elements if el.tag in ("cite", "q") if (row := _citation_of(el))]
    defined_terms = _unique(text for el in elements if el.tag == "dfn" if (text := flat_text(el)))
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


def _facets_of(dl: Element) -> list[Facet]:
    rows: list[Facet] = []
    name: str | None = None
    for child in dl.children:
        if not isinstance(child, Element):
            continue
        if child.tag == "dt":
            name = flat_text(child)
        elif child.tag == "dd" and name is not None:
            rows.append(Facet(name, flat_text(child), _numeric_value(child)))
    return rows


def _numeric_value(dd: Element) -> float | None:
    for element in iter_elements(dd.children):
        if element.tag == "data":
            value = element.get("value")
            number = finite_number(value) if value is not None else None
            if number is not None:
                return number
    return None


def _citation_of(element: Element) -> Citation | None:
    text = flat_text(element)
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
