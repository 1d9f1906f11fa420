"""The one door to the HTML5 parser: markup in, our neutral tree out.

Lexbor (via selectolax) is spec-conformant where it matters for the corpus contract (it swallows the
newline after `<pre>`, inserts `<tbody>`, closes `<p>` before blocks), which is what reproduces the
reference's hashes and canonical bytes. Well-formed markup, which is what memory files are, is read by
the `wellformed` reader first; Lexbor parses whatever that reader declines, and is imported only then
(its import, with the logging it pulls in, was a large share of a command that reads one file). No other module
imports selectolax.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memhtml.html.tree import Comment, Element, Node, Text
from memhtml.html.wellformed import read_wellformed_document, read_wellformed_fragment

# Lexbor's pseudo tag names for non-element nodes.
_TEXT_TAG = "-text"
_COMMENT_TAG = "-comment"


def parse_document(markup: str) -> Element:
    """Parse a whole document; returns the `<html>` element (the parser always creates html/head/body)."""
    html = read_wellformed_document(markup)
    return html if html is not None else parse_document_with_lexbor(markup)


def parse_fragment(markup: str, context: str = "article") -> list[Node]:
    """The top-level nodes of `markup` parsed as the inner HTML of a `context` element (HTML5 fragment)."""
    if not markup:
        return []
    if context == "article":
        nodes = read_wellformed_fragment(markup)
        if nodes is not None:
            return nodes
    return parse_fragment_with_lexbor(markup, context)


def parse_document_with_lexbor(markup: str) -> Element:
    """`parse_document` by Lexbor alone, whatever the markup."""
    from selectolax.lexbor import LexborHTMLParser

    root = LexborHTMLParser(markup).root
    if root is None:  # pragma: no cover - Lexbor builds <html> even for empty input
        return Element("html", [], [])
    html = Element(root.tag or "html", _attributes(root), [])
    _convert(root.iter(include_text=True), html)
    return html


def parse_fragment_with_lexbor(markup: str, context: str = "article") -> list[Node]:
    """`parse_fragment` by Lexbor alone, whatever the markup."""
    if not markup:
        return []
    from selectolax.lexbor import LexborHTMLParser

    root = LexborHTMLParser(markup, is_fragment=True, fragment_tag=context).root
    if root is None:
        return []
    # On a fragment root, iter() covers every top-level node of the fragment.
    return _convert(root.iter(include_text=True), None)


def _convert(children: Iterator[Any], parent_of_top: Element | None) -> list[Node]:
    """Rebuild Lexbor nodes (and their subtrees) as neutral nodes; iterative, so depth is unbounded.

    Top-level nodes become children of `parent_of_top` when given, else they are returned. A template's
    content is converted in the same loop (templates nest as deep as any element).

    This loop runs once per node of every file read, so it is written flat rather than factored.
    """
    top: list[Node] = []
    # (siblings, their parent, the list they are appended to): a parent's children, the top level, or a
    # template's content (whose top-level nodes have no parent in the tree).
    stack: list[tuple[Iterator[Any], Element | None, list[Node]]] = [
        (children, parent_of_top, top if parent_of_top is None else parent_of_top.children)
    ]
    while stack:
        siblings, parent, sink = stack[-1]
        lexbor_node = next(siblings, None)
        if lexbor_node is None:
            stack.pop()
            continue
        tag = lexbor_node.tag
        node: Node
        if tag == _TEXT_TAG:
            node = Text(lexbor_node.text_content or "")
        elif tag == _COMMENT_TAG:
            node = Comment(_comment_data(lexbor_node))
        elif tag is None:
            # Lexbor keeps `<?x?>` as a processing instruction; HTML5 (and the reference) make it the
            # bogus comment `<!--?x?-->`.
            markup = lexbor_node.html or ""
            if not (markup.startswith("<?") and markup.endswith(">")):
                continue
            node = Comment(markup[1:-1])
        elif tag[0] == "-" and not lexbor_node.is_element_node:
            continue  # doctype and other node kinds carry nothing we keep
        else:
            element = Element(tag, _attributes(lexbor_node), [], parent)
            stack.append((lexbor_node.iter(include_text=True), element, element.children))
            if tag == "template":
                content: list[Node] = []
                element.template_content = content
                # Pushed last, so converted first; fragments in reverse, so they land in order.
                for fragment in reversed(lexbor_node.template_fragments()):
                    stack.append((fragment.iter(include_text=True), None, content))
            node = element
        sink.append(node)
    return top


def _attributes(lexbor_node: Any) -> list[tuple[str, str]]:
    # A bare attribute (`<input disabled>`) has no value in Lexbor; the DOM value is "".
    attributes = lexbor_node.attributes
    return [(name, value or "") for name, value in attributes.items()] if attributes else []


def _comment_data(lexbor_node: Any) -> str:
    # comment_content strips surrounding whitespace; the serialized form keeps the exact data.
    markup = lexbor_node.html or ""
    if markup.startswith("<!--") and markup.endswith("-->") and len(markup) >= 7:
        return str(markup[4:-3])
    return str(lexbor_node.comment_content or "")
