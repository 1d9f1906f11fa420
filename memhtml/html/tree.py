"""The neutral HTML tree every module of this layer works on: Element, Text and Comment nodes.

The parser module builds it from Lexbor's tree, so nothing else here depends on the parser library.
Traversals are iterative, because hand-written or generated files can nest deeper than Python's stack.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator


class Text:
    """A text node; `data` is already entity-decoded."""

    __slots__ = ("data",)

    def __init__(self, data: str) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        return type(other) is Text and other.data == self.data

    __hash__ = None  # type: ignore[assignment]  # equal by value and mutable: unhashable, like a list

    def __repr__(self) -> str:
        return f"Text({self.data!r})"


class Comment:
    """A comment node; `data` is what sat between `<!--` and `-->`."""

    __slots__ = ("data",)

    def __init__(self, data: str) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        return type(other) is Comment and other.data == self.data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Comment({self.data!r})"


class Element:
    """An element with its attributes in source order (names as the parser normalized them).

    Compared by identity: two elements are the same node, not two equal subtrees.
    """

    __slots__ = ("attrs", "children", "parent", "tag", "template_content")

    def __init__(
        self,
        tag: str,
        attrs: list[tuple[str, str]] | None = None,
        children: list[Node] | None = None,
        parent: Element | None = None,
    ) -> None:
        self.tag = tag
        self.attrs = attrs if attrs is not None else []
        self.children = children if children is not None else []
        self.parent = parent
        # Only a <template> has content: inert markup that is serialized but is not part of the tree
        # (a browser's textContent and selectors never reach it, and neither do our walks).
        self.template_content: list[Node] | None = None

    def __repr__(self) -> str:
        return f"Element({self.tag!r}, {self.attrs!r}, {self.children!r})"

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


def elements_in(nodes: Iterable[Node]) -> list[Element]:
    """Every element in `nodes` and below, in document order, as a list: `list(iter_elements(nodes))`
    without a generator's step per element (several times the cost of this loop once compiled)."""
    found: list[Element] = []
    stack: list[Node] = list(nodes)
    stack.reverse()
    while stack:
        node = stack.pop()
        if type(node) is Element:
            found.append(node)
            children = node.children
            if children:
                stack.extend(reversed(children))
    return found


def descendants(element: Element, tag: str) -> list[Element]:
    """The `tag` elements strictly below `element`, in document order."""
    return [node for node in elements_in(element.children) if node.tag == tag]


def first_descendant(element: Element, tags: frozenset[str]) -> Element | None:
    for node in iter_elements(element.children):
        if node.tag in tags:
            return node
    return None


def direct_text(element: Element) -> str:
    """The element's own text children joined, without the text of nested elements."""
    return "".join(child.data for child in element.children if isinstance(child, Text))
