"""Reading a memory file: the head's metas and links as typed values plus the article's derived fields.

Parsing is tolerant (it never refuses; `validate` does that) and mirrors what the reference projects:
the first occurrence of a scalar meta wins, dropped numeric values read as None, and the content hash
is recomputed from the article rather than trusted from the head.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from memhtml.contracts.vocabulary import META_PREFIX, rel_from_token
from memhtml.html.extract import ArticleFacts, extract_article
from memhtml.html.hashing import hash_text
from memhtml.html.javascript_semantics import collapsed, js_trim
from memhtml.html.metavalues import (
    read_confidence,
    read_importance,
    read_needs_revision,
    read_reprieves,
    split_entity,
)
from memhtml.html.parser import parse_document
from memhtml.html.serialize import serialize_nodes
from memhtml.html.tree import Element, Text, elements_in, iter_elements


class ParsedMemory(NamedTuple):
    """One memory file as read. `content_hash` is recomputed; `stated_content_hash` is the head's claim.

    `article` is the parsed element itself (compared by identity, as elements are): its markup is
    serialized only when asked for (`article_inner_html`), which indexing never does.
    """

    title: str
    metas: list[tuple[str, str]]
    links: list[tuple[str, str]]  # (rel in underscore form, href as written)
    article: Element | None
    facts: ArticleFacts
    content_hash: str
    has_article: bool = True
    memory_type: str | None = None
    status: str | None = None
    created: str | None = None
    updated: str | None = None
    confidence: float | None = None
    importance: int | None = None
    stated_content_hash: str | None = None
    author: str | None = None
    session: str | None = None
    prompt: str | None = None
    turn: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    reprieves: int | None = None
    archived_at: str | None = None
    superseded_by: str | None = None
    needs_revision: bool | None = None
    task_status: str | None = None
    due: str | None = None
    entities: Sequence[str] = ()
    tags: Sequence[str] = ()
    aliases: Sequence[str] = ()

    @property
    def article_inner_html(self) -> str:
        """The article's content serialized as the parser reads it, JS-trimmed ("" without an article)."""
        return js_trim(serialize_nodes(self.article.children)) if self.article is not None else ""

    def meta(self, name: str) -> str | None:
        """The first value of meta `name` (the reference's `single()`), or None when absent."""
        return next((content for meta_name, content in self.metas if meta_name == name), None)

    @property
    def gist(self) -> str:
        return self.facts.gist

    @property
    def body_text(self) -> str:
        return self.facts.body_text

    @property
    def event_at(self) -> str | None:
        return self.facts.event_at

    @property
    def fts_text(self) -> str:
        """Title, gist and body text, newline-joined with empty parts skipped."""
        return "\n".join(part for part in (self.title, self.gist, self.body_text) if part)

    @property
    def disclosure_text(self) -> str:
        return self.facts.disclosure_text

    @property
    def word_count(self) -> int:
        return self.facts.word_count

    @property
    def facets(self) -> list[tuple[str, str, float | None]]:
        return [(row.name, row.value, row.numeric_value) for row in self.facts.facets]

    @property
    def citations(self) -> list[tuple[str, str | None]]:
        return [(row.text, row.href) for row in self.facts.citations]

    @property
    def derived_entities(self) -> list[tuple[str, str]]:
        """(type, name) pairs from the entity metas, then `concept:` dfn terms, then `lang:` code tokens."""
        pairs = [pair for value in self.entities if (pair := split_entity(value))]
        pairs += [("concept", term) for term in self.facts.defined_terms]
        pairs += [("lang", lang) for lang in self.facts.code_langs]
        return list(dict.fromkeys(pairs))


def parse_memory(text: str) -> ParsedMemory:
    """Parse a whole memory file."""
    return parse_memory_tree(parse_document(text))


class DocumentParts(NamedTuple):
    """What both reading and checking a memory take from its tree, gathered once for the two."""

    elements: list[Element]  # every element, the root first, in document order
    metas: list[tuple[str, str]]  # as `head_metas` gives them
    links: list[tuple[str, str]]  # as `head_links` gives them
    title: str  # as `document_title` gives it


def document_parts(html: Element) -> DocumentParts:
    elements = elements_in([html])
    metas, links = _head_metas_and_links(html)
    return DocumentParts(elements, metas, links, _title_of(elements))


def parse_memory_tree(html: Element, parts: DocumentParts | None = None) -> ParsedMemory:
    """Read an already-parsed document (lets callers share one parse, and its `parts`, with `validate`)."""
    if parts is None:
        parts = document_parts(html)
    metas = parts.metas
    article = next((element for element in parts.elements if element.tag == "article"), None)
    facts = extract_article(article)
    first: dict[str, str] = {}
    for meta_name, content in metas:
        first.setdefault(meta_name, content)  # the first occurrence of a scalar meta wins
    single = first.get

    def many(name: str) -> list[str]:
        return [content for meta_name, content in metas if meta_name == name and content != ""]

    confidence = single("memhtml-confidence")
    importance = single("memhtml-importance")
    reprieves = single("memhtml-reprieves")
    needs_revision = single("memhtml-needs-revision")
    return ParsedMemory(
        title=parts.title,
        metas=metas,
        links=[(rel, href) for token, href in parts.links if (rel := rel_from_token(token)) is not None],
        article=article,
        facts=facts,
        content_hash=hash_text(facts.canonical_text),
        has_article=article is not None,
        memory_type=single("memhtml-type"),
        status=single("memhtml-status"),
        created=single("memhtml-created"),
        updated=single("memhtml-updated"),
        confidence=read_confidence(confidence) if confidence is not None else None,
        importance=read_importance(importance) if importance is not None else None,
        stated_content_hash=single("memhtml-content-hash"),
        author=single("memhtml-author"),
        session=single("memhtml-session"),
        prompt=single("memhtml-prompt"),
        turn=single("memhtml-turn"),
        valid_from=single("memhtml-valid-from"),
        valid_until=single("memhtml-valid-until"),
        reprieves=read_reprieves(reprieves) if reprieves is not None else None,
        archived_at=single("memhtml-archived"),
        superseded_by=single("memhtml-superseded-by"),
        needs_revision=read_needs_revision(needs_revision) if needs_revision is not None else None,
        task_status=single("memhtml-task-status"),
        due=single("memhtml-due"),
        entities=many("memhtml-entity"),
        tags=many("memhtml-tag"),
        aliases=many("memhtml-alias"),
    )


def head_of(html: Element) -> Element | None:
    heads = (child for child in html.children if isinstance(child, Element) and child.tag == "head")
    return next(heads, None)


def head_metas(html: Element) -> list[tuple[str, str]]:
    """(name, content) of every `memhtml-` meta in the head, in document order; a missing content reads ""."""
    return _head_metas_and_links(html)[0]


def head_links(html: Element) -> list[tuple[str, str]]:
    """(rel token, href) of every head `<link>` whose rel starts with `memhtml-`; a missing href reads ""."""
    return _head_metas_and_links(html)[1]


def _head_metas_and_links(html: Element) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """`head_metas` and `head_links` in one pass over the head."""
    metas: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    head = head_of(html)
    if head is None:
        return metas, links
    for element in elements_in(head.children):
        if element.tag == "meta":
            name = element.get("name")
            if name is not None and name.startswith(META_PREFIX):
                metas.append((name, element.get("content") or ""))
        elif element.tag == "link":
            rel = element.get("rel")
            if rel is not None and rel.startswith(META_PREFIX):
                links.append((rel, element.get("href") or ""))
    return metas, links


def document_title(html: Element) -> str:
    """The first `<title>`'s text, ASCII-whitespace-collapsed and trimmed; "" without one."""
    return _title_of(iter_elements([html]))


def _title_of(elements: Iterable[Element]) -> str:
    for element in elements:
        if element.tag == "title":
            return collapsed("".join(child.data for child in element.children if isinstance(child, Text)))
    return ""
