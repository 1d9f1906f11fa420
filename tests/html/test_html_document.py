"""Reading memory files: typed metas, links and the article-derived fields, as the original's read/index show them."""

from __future__ import annotations

import pytest

from memhtml.html.document import parse_memory
from tests.html.memory_file_examples import FILE_A

HEAD = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>T</title>
<meta name="memhtml-type" content="semantic">
<meta name="memhtml-status" content="active">
<meta name="memhtml-created" content="2026-11-30T05:55:00Z">
<meta name="memhtml-updated" content="2026-11-30T05:55:00Z">
"""


def memory_file(article: str, extra_head: str = "") -> str:
    return HEAD + extra_head + "</head>\n<body>\n<article>\n" + article + "\n</article>\n</body>\n</html>\n"


def test_example_a_fields() -> None:
    memory = parse_memory(FILE_A)
    assert memory.title == "Prod rollbacks drain the VIP first"
    assert memory.memory_type == "procedural"
    assert memory.status == "active"
    assert memory.created == memory.updated == "2026-11-30T04:21:21Z"
    assert memory.confidence == 0.9
    assert memory.importance == 8
    assert memory.session == "f7e32699-d45b-4248-8ae6-894dfc606f49"
    assert memory.prompt == "pr_01JQ8ZK3"
    assert memory.turn == "t_7c1a"
    assert memory.entities == ["service:checkout-api", "person:sanju"]
    assert memory.tags == ["deploy", "oncall"]
    assert memory.links == [("relates_to", "/resources/people/sanju-owns-the-checkout-api.html")]
    assert memory.content_hash == memory.stated_content_hash
    assert memory.gist == "If a prod rollback is issued, drain the VIP before reverting the deploy."
    assert memory.body_text == (
        "If a prod rollback is issued, drain the VIP before reverting the deploy. The revert alone leaves "
        "in-flight connections pinned to the old target group. aws elbv2 modify-target-group-attributes \\ "
        '--target-group-arn "$TG"'
    )
    assert memory.derived_entities == [("service", "checkout-api"), ("person", "sanju"), ("lang", "bash")]
    assert memory.article_inner_html.startswith("<p><mark>If a prod rollback")
    assert memory.metas[0] == ("memhtml-type", "procedural")
    assert memory.meta("memhtml-tag") == "deploy"


def test_extraction_matches_the_original_index() -> None:
    # Row values read back from the original's index.db after projecting this exact file.
    article = (
        '<p><mark>Claim <code>c</code> <dfn>Term One</dfn></mark> tail <time datetime="2026-01-02">jan</time></p>'
        '<details><summary>Sum <b>one</b></summary><time datetime="2025-01-01">x</time>hidden</details>'
        "<aside>cav</aside><dl><dd>orphan</dd><dt>K</dt>"
        '<dd>V1 <data value="">blank</data><data value="abc">nan</data><data value=" 12.5 ">x</data>'
        '<data value="3">y</data></dd><dd>V2</dd><dt>K</dt>'
        '<dd>V1 <data value="">blank</data><data value="abc">nan</data><data value=" 12.5 ">x</data>'
        '<data value="3">y</data></dd><div><dt>N</dt><dd>nested</dd></div></dl>'
        '<p><cite>Book A</cite> <q cite="http://x">quoted</q> <q>plain q</q> <cite></cite><cite>Book A</cite></p>'
        '<code data-lang=" Rust ">r</code><code data-lang="c++ x">c</code><code data-lang="TS">c</code>'
        "<dfn> Term  Two </dfn><dfn></dfn>"
    )
    head = "".join(
        f'<meta name="memhtml-entity" content="{value}">\n'
        for value in ("person:sanju", "concept:Term One", "nocolon", ":lead", "trail:", "a:b:c", "")
    )
    memory = parse_memory(memory_file(article, head))
    assert memory.body_text == (
        "Claim c Term One tail jan Sum one xhidden cav orphan K V1 blanknanxy V2 K V1 blanknanxy N nested "
        "Book A quoted plain q Book A rcc Term Two"
    )
    assert memory.gist == "Claim Term One"
    assert memory.fts_text == "T\nClaim Term One\n" + memory.body_text
    assert memory.disclosure_text == (
        "Claim Term One\nSum one\nK: V1 blanknanxy\nK: V2\nK: V1 blanknanxy\nBook A\nquoted\nplain q\nBook A"
    )
    assert memory.event_at == "2026-01-02"
    assert memory.word_count == 30
    assert memory.facets == [("K", "V1 blanknanxy", 12.5), ("K", "V2", None)]
    assert memory.citations == [("Book A", None), ("quoted", "http://x"), ("plain q", None)]
    assert memory.content_hash == "sha256:3950e59f7972146e9a31921bf65684486cf86b3958fce99e2e66ba55a20a1dc9"
    assert set(memory.derived_entities) == {
        ("a", "b:c"),
        ("concept", "Term One"),
        ("concept", "Term Two"),
        ("lang", "c++ x"),
        ("lang", "rust"),
        ("lang", "ts"),
        ("person", "sanju"),
        ("unknown", ":lead"),
        ("unknown", "nocolon"),
        ("unknown", "trail:"),
    }
    assert len(memory.derived_entities) == 10


def test_facet_and_citation_edges() -> None:
    article = (
        "<p><mark>Claim</mark></p><details><summary> a<b>b</b>c\u00a0</summary>x</details><details><summary></summary>"
        "</details><dl><dt> k<b>1</b>k </dt><dd> a<b>b</b>c <code>z</code></dd><dt></dt><dd>empty-name</dd>"
        "<dt>novalue</dt><dd></dd><dd>  </dd></dl><dl><dt>a</dt><dd>1<dl><dt>inner</dt><dd>2</dd></dl></dd></dl>"
        '<p><cite>a<b>b</b>c</cite><q cite="">qq</q><dfn>a<b>b</b>c</dfn><cite>\u00a0</cite></p>'
    )
    memory = parse_memory(memory_file(article))
    assert memory.facets == [
        ("k 1 k", "a b c z", None),
        ("", "empty-name", None),
        ("novalue", "", None),
        ("a", "1 inner 2", None),
        ("inner", "2", None),
    ]
    assert memory.citations == [("a b c", None), ("qq", "")]
    assert memory.disclosure_text == (
        "Claim\na b c\nk 1 k: a b c z\n: empty-name\nnovalue:\nnovalue:\na: 1 inner 2\ninner: 2\na b c\nqq"
    )
    assert memory.derived_entities == [("concept", "a b c")]


def test_gist_drops_pre_and_code_and_trims_nbsp() -> None:
    cases = {
        "<ul><li><mark>a<pre>b</pre>c</mark></li></ul>": ("ac", "a b c"),
        "<ul><li><mark>a<div>b</div>c<code> </code>d</mark></li></ul>": ("a b cd", "a b c d"),
        "<ul><li><mark>a<pre><b>x</b></pre>c <span><code>q</code></span>\u00a0</mark></li></ul>": (
            "ac",
            "a x c q",
        ),
        "<p><mark>&nbsp;a&nbsp;&nbsp;b&nbsp;</mark></p><p>&nbsp;</p>": ("a\u00a0\u00a0b", "a\u00a0\u00a0b"),
        "<p><mark>a\x0bb\x0cc</mark></p>": ("a\x0bb c", "a\x0bb c"),
        "<p><mark>x</mark></p><pre>\n\n  a  </pre><p>  </p>": ("x", "x a"),
    }
    for article, (gist, body) in cases.items():
        memory = parse_memory(memory_file(article))
        assert (memory.gist, memory.body_text) == (gist, body), article


@pytest.mark.parametrize(
    ("raw", "confidence", "importance", "reprieves"),
    [
        # (value; confidence read from it; importance read from it with 0.5->5; reprieves with 0.5->3),
        # all observed with `memhtml read` on the original.
        ("0x0", 0.0, None, 0),
        (".5", 0.5, None, None),
        ("5.", None, 5, 5),
        ("+0.5", 0.5, 5, 3),
        ("-0", 0.0, None, 0),
        ("0.5e0", 0.5, 5, 3),
        ("1_0", None, None, None),
        (" ", None, None, None),
        ("abc", None, None, None),
        ("NaN", None, None, None),
        ("0b1", 1.0, 1, 1),
        ("1.5", None, None, None),
        ("0o1", 1.0, 1, 1),
        ("\u00a00.5", 0.5, 5, 3),
        ("0.5x", None, None, None),
        ("1e-1", 0.1, None, None),
    ],
)
def test_numeric_metas_follow_js_number(
    raw: str, confidence: float | None, importance: int | None, reprieves: int | None
) -> None:
    head = (
        f'<meta name="memhtml-confidence" content="{raw}">'
        f'<meta name="memhtml-importance" content="{raw.replace("0.5", "5")}">'
        f'<meta name="memhtml-reprieves" content="{raw.replace("0.5", "3")}">'
    )
    memory = parse_memory(memory_file("<p><mark>C</mark></p>", head))
    assert (memory.confidence, memory.importance, memory.reprieves) == (confidence, importance, reprieves)


def test_other_typed_metas() -> None:
    head = (
        '<meta name="memhtml-importance" content="7.0">'
        '<meta name="memhtml-author" content="">'
        '<meta name="memhtml-session" content=" s ">'
        '<meta name="memhtml-needs-revision" content="YES">'
        '<meta name="memhtml-tag" content=" x "><meta name="memhtml-tag" content="x"><meta name="memhtml-tag" content="  ">'
        '<meta name="memhtml-tag" content=""><meta name="memhtml-alias" content="Al">'
        '<meta name="memhtml-content-hash" content="sha256:stale">'
        '<meta name="memhtml-type" content="episodic">'
    )
    memory = parse_memory(memory_file("<p><mark>C</mark></p>", head))
    assert memory.importance == 7
    assert memory.author == ""
    assert memory.session == " s "
    assert memory.needs_revision is True
    assert memory.tags == [" x ", "x", "  "]
    assert memory.aliases == ["Al"]
    assert memory.memory_type == "semantic", "the first occurrence wins"
    assert memory.stated_content_hash == "sha256:stale"
    assert memory.content_hash == parse_memory(memory_file("<p><mark>C</mark></p>")).content_hash


@pytest.mark.parametrize(
    ("raw", "expected"), [(" yes ", False), ("True", True), ("1", True), ("on", False), ("", False)]
)
def test_needs_revision_reading(raw: str, expected: bool) -> None:
    memory = parse_memory(memory_file("<p><mark>C</mark></p>", f'<meta name="memhtml-needs-revision" content="{raw}">'))
    assert memory.needs_revision is expected


def test_links_come_from_the_head_only() -> None:
    head = (
        '<link rel="memhtml-supports" href="/a.html"><link rel="memhtml-supports" href="/a.html">'
        '<link rel="memhtml-laterally-related" href="/b.html#x"><link rel="stylesheet memhtml-x" href="/c">'
        '<link rel="memhtml-supports">'
    )
    article = '<p><mark>C</mark></p><link rel="memhtml-blocks" href="/in-body.html">'
    memory = parse_memory(memory_file(article, head))
    assert memory.links == [
        ("supports", "/a.html"),
        ("supports", "/a.html"),
        ("laterally_related", "/b.html#x"),
        ("supports", ""),
    ]
    # Metas in the body are not head metas either.
    in_body = parse_memory(memory_file('<p><mark>C</mark></p><meta name="memhtml-tag" content="body">'))
    assert in_body.tags == []


def test_title_is_collapsed_and_trimmed() -> None:
    text = memory_file("<p><mark>x</mark></p>").replace(
        "<title>T</title>", "<title> a \u00a0 <b>b</b>\n\tc&amp; </title>"
    )
    assert parse_memory(text).title == "a \u00a0 <b>b</b> c&"


def test_a_file_without_article_parses_to_empty_fields() -> None:
    memory = parse_memory("<!doctype html><html><head><title>x</title></head><body><p>y</p></body></html>")
    assert not memory.has_article
    assert memory.gist == memory.body_text == memory.article_inner_html == ""
    assert memory.content_hash == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
