"""The neutral HTML tree every module of this layer works on: Element, Text and Comment nodes.

The parser module builds it from Lexbor's tree, so nothing else here depends on the parser library.
Traversals are iterative, because hand-written or generated files can nest deeper than Python's stack.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field


@dataclass(slots=True)
class Text:
    """A text node; `data` is already entity-decoded."""

    data: str


@dataclass(slots=True)
class Comment:
    """A comment node; `data` is what sat between `<!--` and `-->`."""

    data: str


@dataclass(slots=True, eq=False)
class Element:
    """An element with its attributes in source order (names as the parser normalized them)."""

    tag: str
    attrs: list[tuple[str, str]] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    parent: Element | None = field(default=None, repr=False)
    # Only a <template> has content: inert markup that is serialized but is not part of the tree
    # (a browser's textContent and selectors never reach it, and neither do our walks).
    template_content: list[Node] | None = field(default=None, repr=False)

    def get(self, name: str) -> str | None:
        """The value of attribute `name`, or None when the element does not carry it."""
        for attr_name, value in self.attrs:
            if attr_name == name:
                return value
        return None

    def has_ancestor(self, tag: str, stop_at: Element | None = None) -> bool:
        """True when some ancestor (below `stop_at`, exclusive) is a `tag` element."""
        node = self.parent
        while node is not None and node is not stop_at:
            if node.tag == tag:
                return True
            node = node.parent
        return False

    def is_descendant_of(self, ancestor: Element) -> bool:
        node = self.parent
        while node is not None:
            if node is ancestor:
                return True
            node = node.parent
        return False


Node = Element | Text | Comment


def walk(nodes: Iterable[Node]) -> Iterator[tuple[bool, Node]]:
    """Document-order events over `nodes` and their subtrees: (True, node) on entry, (False, element) on exit.

    Text and comments only get an entry event; elements get both, so callers can track scopes.
    """
    stack: list[tuple[bool, Node]] = [(True, node) for node in reversed(list(nodes))]
    pop, push = stack.pop, stack.append
    while stack:
        entering, node = pop()
        yield entering, node
        if entering and type(node) is Element:
            push((False, node))
            stack.extend([(True, child) for child in reversed(node.children)])


def iter_elements(nodes: Iterable[Node]) -> Iterator[Element]:
    """Every element in `nodes` and below, in document order."""
    stack: list[Node] = list(nodes)
    stack.reverse()
    pop = stack.pop
    while stack:
        node = pop()
        if type(node) is Element:
            yield node
            stack.extend(reversed(node.children))


def descendants(element: Element, tag: str) -> list[Element]:
    """The `tag` elements strictly below `element`, in document order."""
    return [node for node in iter_elements(element.children) if node.tag == tag]


def first_descendant(element: Element, tags: frozenset[str]) -> Element | None:
    for node in iter_elements(element.children):
        if node.tag in tags:
            return node
    return None


def direct_text(element: Element) -> str:
    """The element's own text children joined, without the text of nested elements."""
    return "".join(child.data for child in element.children if isinstance(child, Text))
