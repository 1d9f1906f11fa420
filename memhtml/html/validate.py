"""The format check: every violation (refusal) and warning of a memory file, in the reference's wording.

Violations come in passes: head, article, mark, time, presentation/script, links, meta values, task
coupling, datetime metas (§6.1); warnings follow document order, deduplicated per key (§6.2). The check
never stops at the first problem and never repairs anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from memhtml.contracts.instants import is_sortable_instant
from memhtml.contracts.vocabulary import (
    ALL_RELS,
    ANYWHERE_ELEMENTS,
    ARTICLE_ELEMENTS,
    DATETIME_METAS,
    FIGURE_SCOPED_ELEMENTS,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_ELEMENTS,
    MEMORY_STATUSES,
    MEMORY_TYPES,
    META_ORDER,
    REPEATABLE_METAS,
    REQUIRED_METAS,
    SKELETON_ELEMENTS,
    TASK_STATUSES,
    rel_from_token,
)
from memhtml.html.document import DocumentParts, ParsedMemory, document_parts, parse_memory_tree
from memhtml.html.extract import gist_of
from memhtml.html.javascript_semantics import js_trim, utf16_prefix
from memhtml.html.metavalues import is_language_token, is_repo_root_href
from memhtml.html.parser import parse_document, parse_fragment
from memhtml.html.tree import Element, descendants, direct_text, elements_in, first_descendant

KNOWN_ELEMENTS = SKELETON_ELEMENTS | ARTICLE_ELEMENTS | ANYWHERE_ELEMENTS
_CLAIM_CONTAINERS = frozenset({"p", "li"})
_TIME_TEXT_UNITS = 40


class MemoryCheck(NamedTuple):
    violations: Sequence[str] = ()
    warnings: Sequence[str] = ()

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def reason(self) -> str:
        """The violations joined as the reference's `InvalidMemory.reason`."""
        return "; ".join(self.violations)


def check_memory(text: str) -> MemoryCheck:
    """Check a whole memory file."""
    return check_memory_tree(parse_document(text))


def inspect_memory(text: str, *, warnings: bool = True) -> tuple[ParsedMemory, MemoryCheck]:
    """Read and check a file with one parse (what an indexer needs for every file it projects; it asks
    for no `warnings`, which only a writer reports and which would otherwise be worked out for every file).

    The memory's `article` comes back detached: once the tree is read and checked, no element keeps its
    parent, so the tree is freed as soon as the caller drops it. Parent links make every element part
    of a reference cycle, which only the cycle collector frees: a file read over and over took nearly
    twice as long with them, and each `has_ancestor` asked afterwards would answer as of a tree that is
    not kept anyway."""
    html = parse_document(text)
    parts = document_parts(html)
    memory, check = parse_memory_tree(html, parts), check_memory_tree(html, parts, warnings=warnings)
    for element in parts.elements:
        element.parent = None
    return memory, check


def check_memory_tree(html: Element, parts: DocumentParts | None = None, *, warnings: bool = True) -> MemoryCheck:
    """Check an already-parsed document (lets callers share one parse, and its `parts`, with `document`);
    without `warnings`, only its violations."""
    if parts is None:
        parts = document_parts(html)
    elements, metas = parts.elements, parts.metas
    articles = [element for element in elements if element.tag == "article"]
    violations = _head_violations(elements, parts.title, metas)
    if not articles:
        violations.append("no <article>: a memory file needs exactly one")
    elif len(articles) > 1:
        violations.append(f"{len(articles)} <article> elements: a memory file needs exactly one")
    else:
        violations += claim_violations(articles[0])
    violations += _time_violations(elements)
    violations += _presentation_violations(elements)
    violations += _link_violations(parts.links)
    violations += _meta_value_violations(metas)
    return MemoryCheck(violations, collect_warnings(elements) if warnings else ())


def check_article_fragment(inner_markup: str) -> MemoryCheck:
    """The article-scoped checks (claim, time, presentation, warnings) for bare inner markup."""
    article = Element("article", children=parse_fragment(inner_markup, "article"))
    for child in article.children:
        if isinstance(child, Element):
            child.parent = article
    elements = [article, *elements_in(article.children)]
    violations = claim_violations(article) + _time_violations(elements) + _presentation_violations(elements)
    return MemoryCheck(violations, collect_warnings(elements))


def claim_violations(article: Element) -> list[str]:
    """The mark rules: exactly one non-empty mark, never folded, inside the article's first p/li."""
    marks = descendants(article, "mark")
    if not marks:
        return ["no <mark>: the claim span is required"]
    if len(marks) > 1:
        return [f"{len(marks)} <mark> elements: exactly one span is the claim"]
    mark = marks[0]
    found: list[str] = []
    if not gist_of(mark):
        found.append("empty <mark>: the claim span must say something")
    folded = False
    if mark.has_ancestor("aside"):
        found.append("<mark> inside <aside>: the claim is never a caveat")
        folded = True
    if mark.has_ancestor("details"):
        found.append("<mark> inside <details>: the claim is never behind a fold")
        folded = True
    if folded:  # a folded claim's position is moot; only emptiness is still worth saying
        return found
    lead = first_descendant(article, _CLAIM_CONTAINERS)
    if lead is None:
        found.append("<mark> outside any <p> or <li>: the claim must lead a paragraph or list item")
    elif not mark.is_descendant_of(lead):
        found.append(f"<mark> not in the first <{lead.tag}>: the claim must lead the article")
    return found


def collect_warnings(elements: Iterable[Element]) -> list[str]:
    """Warnings in document order, one per element name or data-lang value."""
    warnings: dict[tuple[str, str], str] = {}
    in_figure = _FigureScope()
    for element in elements:
        lang = element.get("data-lang")
        if lang is not None and not is_language_token(lang):
            warnings.setdefault(("data-lang", lang), f'data-lang="{lang}" is not a language token')
        if element.tag in FIGURE_SCOPED_ELEMENTS:
            if not in_figure(element):
                warnings.setdefault(
                    ("element", element.tag),
                    f"<{element.tag}> outside a <figure>: use a semantic element instead",
                )
        elif element.tag not in KNOWN_ELEMENTS:
            warnings.setdefault(("element", element.tag), f"<{element.tag}> is outside the closed vocabulary")
    return list(warnings.values())


class _FigureScope:
    """Whether an element has a `<figure>` ancestor, remembered per ancestor: asking `has_ancestor` of
    every div and span walks to the root each time, quadratic in the nesting depth."""

    def __init__(self) -> None:
        self._within: dict[Element, bool] = {}  # element -> it is, or is inside, a figure

    def __call__(self, element: Element) -> bool:
        unknown: list[Element] = []
        node = element.parent
        within = False
        while node is not None:
            known = self._within.get(node)
            if known is not None:
                within = known
                break
            if node.tag == "figure":
                within = True
                break
            unknown.append(node)
            node = node.parent
        self._within.update(dict.fromkeys(unknown, within))
        return within


def _head_violations(elements: list[Element], title: str, metas: list[tuple[str, str]]) -> list[str]:
    found: list[str] = []
    titles = sum(1 for element in elements if element.tag == "title")
    if titles != 1:
        found.append(f"{titles} <title> elements: a memory file needs exactly one")
    elif not title:
        found.append("empty <title>")
    names = [name for name, _ in metas]
    found += [f'missing required <meta name="{name}">' for name in REQUIRED_METAS if name not in names]
    for name in dict.fromkeys(names):
        if name not in META_ORDER:
            found.append(f'<meta name="{name}"> is outside the closed metadata vocabulary')
        elif name not in REPEATABLE_METAS and (count := names.count(name)) > 1:
            found.append(f'<meta name="{name}"> appears {count} times but is not repeatable')
    return found


def _time_violations(elements: list[Element]) -> list[str]:
    found: list[str] = []
    for element in elements:
        if element.tag != "time":
            continue
        value = element.get("datetime")
        if value is None:
            text = utf16_prefix(js_trim(direct_text(element)), _TIME_TEXT_UNITS)
            found.append(f'<time> without datetime: "{text}"')
        elif not is_sortable_instant(value):
            found.append(f'<time datetime="{value}"> is not an ISO date or datetime')
    return found


def _presentation_violations(elements: list[Element]) -> list[str]:
    found: list[str] = []
    for element in elements:
        if element.tag in FORBIDDEN_ELEMENTS:
            found.append(f"<{element.tag}> is forbidden: a memory file does not execute or style")
        for name, _ in element.attrs:
            if name in FORBIDDEN_ATTRIBUTES:
                found.append(f"{name} attribute on <{element.tag}>: presentation is not memory")
            elif len(name) > 2 and name.lower().startswith("on"):
                found.append(f"{name} handler on <{element.tag}>: a memory file does not execute")
    return found


def _link_violations(links: list[tuple[str, str]]) -> list[str]:
    found: list[str] = []
    for token, href in links:
        if rel_from_token(token) not in ALL_RELS:
            found.append(f'<link rel="{token}"> is outside the closed edge vocabulary')
        if not href:
            found.append(f'<link rel="{token}"> without href')
        elif not is_repo_root_href(href):
            found.append(f'<link rel="{token}" href="{href}"> is not repo-root-relative')
    return found


def _meta_value_violations(metas: list[tuple[str, str]]) -> list[str]:
    first: dict[str, str] = {}
    for meta_name, content in metas:
        first.setdefault(meta_name, content)  # the first occurrence is the value read
    single = first.get

    found: list[str] = []
    memory_type = single("memhtml-type")
    if memory_type is not None and memory_type not in MEMORY_TYPES:
        found.append(f'<meta name="memhtml-type" content="{memory_type}"> is outside the type vocabulary')
    status = single("memhtml-status")
    if status is not None and status not in MEMORY_STATUSES:
        found.append(f'<meta name="memhtml-status" content="{status}"> is neither active nor archived')
    known_type = memory_type if memory_type in MEMORY_TYPES else None
    task_status = single("memhtml-task-status")
    if task_status is None:
        if known_type == "task":
            found.append('a task requires <meta name="memhtml-task-status">')
    else:
        if known_type != "task":
            found.append(
                f'<meta name="memhtml-task-status"> on a {known_type or "typeless"} memory: only a task carries one'
            )
        if task_status not in TASK_STATUSES:
            found.append(
                f'<meta name="memhtml-task-status" content="{task_status}"> is outside the vocabulary: '
                + ", ".join(TASK_STATUSES)
            )
    for name in ("memhtml-due", *DATETIME_METAS):
        value = single(name)
        if value is not None and not is_sortable_instant(value):
            found.append(f'<meta name="{name}" content="{value}"> is not an ISO date or datetime')
    return found
