"""Canonical article re-serialization, byte-compared with files the original CLI wrote for the same input."""

from __future__ import annotations

import pytest

from memhtml.html.parser import parse_document, parse_fragment
from memhtml.html.serialize import canonical_article, serialize_nodes
from memhtml.html.tree import Comment, Element, Text

# (submitted --article-html, article bytes in the file the original wrote)
OBSERVED = [
    (
        '<p><mark>Ser \u00a0 "q" \'s\' &lt;&gt;&amp;</mark> <a href="/x?a=1&amp;b=&quot;2&quot;&lt;&gt;\u00a0" '
        'title="line1\nline2\rz\tt\'" Zed=1 alpha>link</a></p>',
        '<p><mark>Ser &nbsp; "q" \'s\' &lt;&gt;&amp;</mark> <a alpha="" href="/x?a=1&amp;b=&quot;2&quot;<>&nbsp;" '
        'title="line1&#10;line2&#10;z\tt\'" zed="1">link</a></p>',
    ),
    (
        "<pre>\nfirst</pre><textarea>\nta</textarea><listing>\nli</listing>",
        "<pre>first</pre><textarea>ta</textarea><listing>li</listing>",
    ),
    (
        "<xmp><b>&amp;</b></xmp><iframe>a&b<i></iframe><noembed>a&amp;<</noembed><noframes>n&amp;</noframes>",
        "<xmp><b>&amp;</b></xmp><iframe>a&b<i></iframe><noembed>a&amp;<</noembed><noframes>n&amp;</noframes>",
    ),
    (
        '<br/><img src="a.png" alt><input disabled><hr><wbr>',
        '<br><img alt="" src="a.png"><input disabled=""><hr><wbr>',
    ),
    (
        '<svg viewBox="0 0 1 1"><circle cx=1 /><foreignObject><p>x</p></foreignObject></svg>',
        '<svg viewBox="0 0 1 1"><circle cx="1"></circle><foreignObject><p>x</p></foreignObject></svg>',
    ),
    (
        "<template><i>t</i></template><!--comment - -> x-->",
        "<template><i>t</i></template><!--comment - -> x-->",
    ),
    (
        "<p><mark>voids</mark><basefont><bgsound><keygen><param><embed><source><track><col><area>"
        "<menuitem>m</menuitem><image src=x></p><table><colgroup><col></colgroup></table>",
        "<p><mark>voids</mark><basefont><bgsound><keygen><param><embed><source><track><area>"
        '<menuitem>m</menuitem><img src="x"></p><table><colgroup><col></colgroup></table>',
    ),
    (
        "<p><mark>Probe</mark> lead</p><i>i<b>b<u>u</i>x</b>y</u><li>a<li>b",
        "<p><mark>Probe</mark> lead</p><i>i<b>b<u>u</u></b></i><b><u>x</u></b><u>y</u><li>a</li><li>b</li>",
    ),
    (
        "<p><mark>P</mark></p>\n\n  <colgroup><col></colgroup>\n\n  <html lang=fr>h</html>\n\n"
        "  <table><tr>text in tr<td>x</td></tr></table>",
        "<p><mark>P</mark></p>\n\n  \n\n  h\n\n  text in tr<table><tbody><tr><td>x</td></tr></tbody></table>",
    ),
    ("<p>one<p>two\n\n  <menu><li>m</li></menu>", "<p>one</p><p>two\n\n  </p><menu><li>m</li></menu>"),
    ("<p =x>weird</p><p a=b/>self</p><br a=1/>", '<p =x="">weird</p><p a="b/">self</p><br a="1/">'),
    ("<p>\x00nul</p><a>1<a>2</a></a></article>after", "<p>nul</p><a>1</a><a>2</a>after"),
    ("<p>&#10;&#13;&#x41;&#128512;</p>", "<p>\n\nA\U0001f600</p>"),
]


@pytest.mark.parametrize(("submitted", "on_disk"), OBSERVED)
def test_matches_original_writer(submitted: str, on_disk: str) -> None:
    assert canonical_article(submitted) == on_disk


@pytest.mark.parametrize(("submitted", "on_disk"), OBSERVED)
def test_canonical_form_is_a_fixed_point(submitted: str, on_disk: str) -> None:
    assert canonical_article(on_disk) == on_disk


def test_attributes_sort_by_name_and_escape_only_what_the_reference_escapes() -> None:
    element = Element("p", [("z", "a\"b&c\u00a0d\re\nf<g>'h\t"), ("a", "")], [Text("x")])
    assert serialize_nodes([element]) == '<p a="" z="a&quot;b&amp;c&nbsp;d&#13;e&#10;f<g>\'h\t">x</p>'


def test_text_escapes_amp_lt_gt_nbsp_only() -> None:
    assert serialize_nodes([Text("a&b<c>d\u00a0e\"f'g")]) == "a&amp;b&lt;c&gt;d&nbsp;e\"f'g"


def test_newline_swallowing_elements_get_the_newline_back() -> None:
    tree = [Element(tag, [], [Text("\nx")]) for tag in ("pre", "textarea", "listing")]
    assert serialize_nodes(tree) == "<pre>\n\nx</pre><textarea>\n\nx</textarea><listing>\n\nx</listing>"
    # Only when the first child is text that starts with a newline.
    assert serialize_nodes([Element("pre", [], [Element("code", [], [Text("\nx")])])]) == (
        "<pre><code>\nx</code></pre>"
    )


def test_comments_keep_their_exact_data() -> None:
    assert serialize_nodes([Comment(" c "), Comment("")]) == "<!-- c --><!---->"
    nodes = parse_fragment("<!--  spaced  -->")
    assert nodes == [Comment("  spaced  ")]


def test_fragment_is_parsed_in_article_context() -> None:
    # Tree fix-ups of a body context apply; an article end tag in the markup cannot close the context.
    assert canonical_article("<table><tr><td>1</td></tr></table>") == (
        "<table><tbody><tr><td>1</td></tr></tbody></table>"
    )
    assert canonical_article("<p>a<div>b</div>") == "<p>a</p><div>b</div>"
    assert canonical_article("x</article>y") == "xy"


def test_cr_from_a_character_reference_becomes_lf_like_the_reference() -> None:
    # The reference serializes twice, so `&#13;` ends up as LF on disk; we match and stay a fixed point.
    assert canonical_article("<pre>&#13;&#10;x</pre>") == canonical_article(canonical_article("<pre>&#13;&#10;x</pre>"))
    assert "\r" not in canonical_article("<p>a&#13;b</p>")


def test_deep_nesting_does_not_hit_the_recursion_limit() -> None:
    deep = "<div>" * 3000 + "x"
    assert canonical_article(deep).count("<div>") == 3000


def test_document_parse_keeps_head_and_body() -> None:
    html = parse_document('<!doctype html><html lang="en"><head><title>t</title></head><body><article>a</article>')
    assert serialize_nodes([html]) == (
        '<html lang="en"><head><title>t</title></head><body><article>a</article></body></html>'
    )
