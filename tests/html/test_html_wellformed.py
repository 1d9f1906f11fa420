"""The well-formed reader against Lexbor: the same tree for every file memhtml writes, and on any markup
either Lexbor's tree or a refusal that sends the markup to Lexbor."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhtml.html.parser import (
    parse_document,
    parse_document_with_lexbor,
    parse_fragment,
    parse_fragment_with_lexbor,
)
from memhtml.html.template import MemoryHead, finish_article, prose_article, render_memory_file
from memhtml.html.tree import Element, Node
from memhtml.html.wellformed import read_wellformed_document, read_wellformed_fragment
from tests.html.memory_file_examples import FILE_A, FILE_B_NEW, FILE_B_OLD, FILE_C
from tests.html.test_html_properties import PROPERTY_SETTINGS, article_markup, claims, memory_heads, plain_text

EXAMPLES = [FILE_A, FILE_B_NEW, FILE_B_OLD, FILE_C]


def shape(node: Node, parent: Element | None = None) -> Any:
    """A node and its subtree as plain values, checking on the way that every element knows its parent."""
    if type(node) is Element:
        assert node.parent is parent, f"<{node.tag}> has the wrong parent"
        content = None if node.template_content is None else nodes_shape(node.template_content)
        return (node.tag, tuple(node.attrs), tuple(shape(child, node) for child in node.children), content)
    return (type(node).__name__, node.data)  # type: ignore[union-attr]


def nodes_shape(nodes: list[Node]) -> Any:
    return tuple(shape(node, None) for node in nodes)


def assert_reads_as_lexbor(markup: str) -> None:
    """Whatever the reader answers for `markup` (a document) is what Lexbor builds, or a refusal."""
    tree = read_wellformed_document(markup)
    if tree is not None:
        assert shape(tree) == shape(parse_document_with_lexbor(markup))


def assert_fragment_reads_as_lexbor(markup: str) -> None:
    nodes = read_wellformed_fragment(markup)
    if nodes is not None:
        assert nodes_shape(nodes) == nodes_shape(parse_fragment_with_lexbor(markup, "article"))


def _inner_article(text: str) -> str:
    return text[text.index("<article>") + len("<article>") : text.rindex("</article>")]


@pytest.mark.parametrize("text", EXAMPLES, ids=["a", "b-new", "b-old", "c"])
def test_the_reference_files_read_as_lexbor_reads_them(text: str) -> None:
    tree = read_wellformed_document(text)
    assert tree is not None, "a file the original wrote must not need Lexbor"
    assert shape(tree) == shape(parse_document_with_lexbor(text))
    nodes = read_wellformed_fragment(_inner_article(text))
    assert nodes is not None
    assert nodes_shape(nodes) == nodes_shape(parse_fragment_with_lexbor(_inner_article(text), "article"))


@PROPERTY_SETTINGS
@given(memory_heads(), claims, st.lists(plain_text, max_size=3))
def test_every_file_memhtml_writes_is_read_without_lexbor(head: MemoryHead, claim: str, bodies: list[str]) -> None:
    article, digest = finish_article(prose_article(claim, bodies))
    text = render_memory_file(head._replace(content_hash=digest), article)
    tree = read_wellformed_document(text)
    assert tree is not None
    assert shape(tree) == shape(parse_document_with_lexbor(text))


@PROPERTY_SETTINGS
@given(article_markup)
def test_canonical_articles_of_any_shape_read_as_lexbor_reads_them(markup: str) -> None:
    # Tables, comments and entities the reader does not decode are refused; what it reads matches.
    article, _ = finish_article(markup)
    document = render_memory_file(
        MemoryHead(title="t", memory_type="semantic", status="active", created="2026-01-01T00:00:00Z",
                   updated="2026-01-01T00:00:00Z"),
        article,
        canonical=True,
    )  # fmt: skip
    assert_reads_as_lexbor(document)
    assert_fragment_reads_as_lexbor(markup)
    assert_fragment_reads_as_lexbor(_inner_article(document))


_PIECES = [
    "<p>", "</p>", "<li>", "</li>", "<ul>", "</ul>", "<ol>", "<pre>", "\n", "\n\n", " ", "\t", "\f", "x",
    "&amp;", "&", "&#39;", "&#x27;", "&#x80;", "&#0;", "&#10;", "&copy;", "&ampx;", "&nbsp;", "&lt", "&#x110000;",
    "<", ">", "<a href=\"x\">", "</a>", "<b>", "</b>", "<i>", "<table>", "<td>", "<tr>", "<br>", "</br>", "<br/>",
    "<h1>", "<h2>", "</h1>", "<dd>", "<dt>", "<dl>", "<div>", "</div>", "<!-- c -->", "<span>", "</span>",
    "<code>", "</code>", "<em>", "<strong>", "</strong>", "<mark>", "</mark>", "</body>", "</html>", "<body>",
    "<head>", "</head>", "<title>", "</title>", "<P>", "</P>", "<meta name=\"a\" content=\"b\">", "<hr>",
    "<p/>", "<img src='a'>", "<img src=a>", "\u00a0", "é", "\ud800", "\r", "\x00", "\x01", "<section>",
    "</section>", "<article>", "</article>", "<figure>", "<details>", "<summary>", "<q>", "<wbr>",
    "<p a=\"1\" a=\"2\">", "<p a = \"1\">", "<p a=\"1\"b=\"2\">", "<p hidden>", "<template>", "<script>",
    "<textarea>", "<pre>&#10;", "<pre>&#xa;", "<!doctype html>", "<html>", "<?x?>", "</ p>", "</p >", "<p\n class=\"x\">", "<x-y>",
]  # fmt: skip
_edits = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 4), st.lists(st.sampled_from(_PIECES), max_size=4)),
    min_size=1,
    max_size=4,
)


def _edited(text: str, edits: list[tuple[float, int, list[str]]]) -> str:
    """`text` with, at each edit's relative position, a few characters cut and some pieces put in."""
    for where, cut, pieces in edits:
        position = int(where * len(text))
        text = text[:position] + "".join(pieces) + text[position + cut :]
    return text


@PROPERTY_SETTINGS
@given(st.sampled_from(EXAMPLES), _edits)
def test_on_damaged_files_the_reader_reads_as_lexbor_or_declines(text: str, edits: list[Any]) -> None:
    damaged = _edited(text, edits)
    assert_reads_as_lexbor(damaged)
    assert_fragment_reads_as_lexbor(_edited(_inner_article(text), edits))


@PROPERTY_SETTINGS
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_on_tag_soup_the_reader_reads_as_lexbor_or_declines(soup: str) -> None:
    assert_reads_as_lexbor(soup)
    assert_reads_as_lexbor("<!doctype html><html><head></head><body>" + soup)
    assert_fragment_reads_as_lexbor(soup)


_BODY = "<!doctype html>\n<html>\n<head>\n<title>t</title>\n</head>\n<body>\n{}\n</body>\n</html>\n"


@pytest.mark.parametrize(
    "body",
    [
        "<p>open<ul><li>x</li></ul></p>",  # the parser closes the <p> before the list
        "<ul><li>one<li>two</li></ul>",  # and the first item before the second
        "<ul><li>one <span>and<li>two</li></span></li></ul>",  # even from inside an inline element
        "<dl><dt>a<dd>b</dd></dl>",
        "<h1>a<h2>b</h2></h1>",
        "<p>a</p></p>",  # an end tag with nothing to close makes an empty <p>
        "<table><tr><td>x</td></tr></table>",  # a <tbody> appears
        "<p>a &copy; b</p>",  # a named reference beyond the few the reader decodes
        "<p>a &#x80; b</p>",  # a reference the parser replaces
        "<p>a<!-- note -->b</p>",
        "<p>a\rb</p>",  # the parser turns CR into LF before anything else
        "<p>a\x00b</p>",
        "<p>a\ud800b</p>",  # Lexbor drops a lone surrogate
        "<p>a <b>b <i>c</b> d</i></p>",  # misnested formatting: the adoption agency
        '<a href="x">a <a href="y">b</a></a>',  # a link in a link: the parser closes the first
        "<p/>text",
        '<p title="a" title="b">x</p>',
        "<template><p>x</p></template>",
        "<p>x</P >",
        "<p><kbd>x</\u212abd>y</p>",  # `</` and a Kelvin sign, which lowercases to `k`, is a comment
        "<pre>&#10;x</pre>",  # a newline first in a <pre> is dropped even when written as a reference
        "<pre>&#x0A;&#10;x</pre>",
    ],
)
def test_markup_whose_tree_is_not_its_nesting_goes_to_lexbor(body: str) -> None:
    document = _BODY.format(body)
    assert read_wellformed_document(document) is None
    assert read_wellformed_fragment(body) is None
    assert shape(parse_document(document)) == shape(parse_document_with_lexbor(document))


@pytest.mark.parametrize(
    "document",
    [
        _BODY.format("<pre>\ncode</pre>"),  # the newline right after <pre> is dropped
        _BODY.format("<pre>\n\ncode</pre>"),
        _BODY.format("<p>a &amp; b &lt;c&gt; &quot;d&quot; &#39;e&#x27; &nbsp;f &apos;</p>"),
        _BODY.format("<p>a & b &; c</p>"),  # an ampersand that starts no reference is text
        _BODY.format('<p><a href="/a?b=1&amp;c=2" title="x &gt; y">link</a></p>'),
        _BODY.format("<section><p>a</p><ul><li><p>b</p><ul><li>c</li></ul></li></ul></section>"),
        _BODY.format('<P CLASS="x">upper</P>'),
        _BODY.format("<p>line<br>break<br/>again</p><hr><p>after</p>"),
        _BODY.format("<details open><summary>s</summary><p>x</p></details>"),
        '<!DOCTYPE html><html><head><meta charset="utf-8"/><title>a &amp; b</title></head><body>x</body></html>',
        "<!doctype html>\n<html>\n<head>\n</head>\n<body>\n<p>unclosed",  # the end of input closes it all
        '  <!doctype html>  <html lang="en">\n\n<head>  <title></title>\t</head>\n <body></body>\n \n</html>\n\n',
    ],
)
def test_well_formed_corners_read_as_lexbor_reads_them(document: str) -> None:
    tree = read_wellformed_document(document)
    assert tree is not None
    assert shape(tree) == shape(parse_document_with_lexbor(document))


def test_whitespace_after_the_body_joins_the_body_s_last_text() -> None:
    tree = read_wellformed_document(_BODY.format("<p>x</p>"))
    assert tree is not None
    body = tree.children[-1]
    assert isinstance(body, Element) and body.tag == "body"
    assert shape(body.children[-1]) == ("Text", "\n\n\n")  # before </body>, before </html>, after it
    assert shape(tree) == shape(parse_document_with_lexbor(_BODY.format("<p>x</p>")))


def test_the_fragment_s_top_level_nodes_have_no_parent() -> None:
    nodes = parse_fragment("<p>a</p>\n<ul><li>b</li></ul>")
    assert [type(node).__name__ for node in nodes] == ["Element", "Text", "Element"]
    assert all(node.parent is None for node in nodes if isinstance(node, Element))
    assert nodes_shape(nodes) == nodes_shape(parse_fragment_with_lexbor("<p>a</p>\n<ul><li>b</li></ul>"))


def _imports_lexbor_to_parse(markup: str) -> bool:
    program = (
        "import sys\n"
        "from memhtml.html.parser import parse_document\n"
        f"parse_document({markup!r})\n"
        "print('selectolax' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    return result.stdout.strip() == "True"


def test_lexbor_is_loaded_only_for_markup_the_reader_declines() -> None:
    assert not _imports_lexbor_to_parse(FILE_A)
    assert _imports_lexbor_to_parse(_BODY.format("<table><tr><td>x</td></tr></table>"))


def test_the_names_the_reader_keeps_are_bounded_in_length_and_number() -> None:
    from memhtml.html import wellformed

    long_name = "a" * 5000
    assert read_wellformed_fragment(f'<p {long_name}="x">y</p>') is not None
    assert read_wellformed_fragment(f"<p>a <{long_name}> b</p>") is None  # an element it does not know
    assert all(len(raw) <= wellformed._PLAIN_NAME_KEPT_LENGTH for raw in wellformed._PLAIN_NAMES)
    # More distinct names than it keeps, each still read right once the memo is full.
    for number in range(wellformed._PLAIN_NAMES_KEPT + 100):
        nodes = read_wellformed_fragment(f'<p data-n{number}="x">y</p>')
        assert nodes is not None and nodes_shape(nodes) == (("p", ((f"data-n{number}", "x"),), (("Text", "y"),), None),)
    assert len(wellformed._PLAIN_NAMES) <= wellformed._PLAIN_NAMES_KEPT
