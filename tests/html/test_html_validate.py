"""Validator messages, order and warnings, each expectation observed with `memhtml read` on the original CLI."""

from __future__ import annotations

import pytest

from memhtml.html.document import parse_memory
from memhtml.html.validate import check_article_fragment, check_memory, inspect_memory
from tests.html.memory_file_examples import FILE_A, FILE_B_NEW, FILE_B_OLD, FILE_C
from tests.html.test_html_shared_reading import same_reading

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


def memory_file(article: str, extra_head: str = "", head: str = HEAD) -> str:
    return head + extra_head + "</head>\n<body>\n<article>\n" + article + "\n</article>\n</body>\n</html>\n"


@pytest.mark.parametrize("text", [FILE_A, FILE_B_NEW, FILE_B_OLD, FILE_C])
def test_reference_files_are_clean(text: str) -> None:
    check = check_memory(text)
    assert check.ok and check.violations == [] and check.warnings == []


CLAIM_CASES = [
    ("<p>x</p>", ["no <mark>: the claim span is required"]),
    ("<p><mark>a</mark> and <mark>b</mark></p>", ["2 <mark> elements: exactly one span is the claim"]),
    (
        "<p><mark>a</mark><mark>b</mark></p><p><mark>c</mark></p>",
        ["3 <mark> elements: exactly one span is the claim"],
    ),
    ("<p><mark> &nbsp; </mark></p>", ["empty <mark>: the claim span must say something"]),
    ("<p><mark><code>x</code></mark></p>", ["empty <mark>: the claim span must say something"]),
    ("<p><mark><strong>x</strong></mark></p>", []),
    ("<aside><mark>x</mark></aside>", ["<mark> inside <aside>: the claim is never a caveat"]),
    (
        "<details><mark><pre>x</pre></mark></details>",
        [
            "empty <mark>: the claim span must say something",
            "<mark> inside <details>: the claim is never behind a fold",
        ],
    ),
    ("<p>lead</p><p><mark>x</mark></p>", ["<mark> not in the first <p>: the claim must lead the article"]),
    ("<mark>x</mark><p>y</p>", ["<mark> not in the first <p>: the claim must lead the article"]),
    ("<mark>x</mark>", ["<mark> outside any <p> or <li>: the claim must lead a paragraph or list item"]),
    ("<ul><li><mark>x</mark></li></ul><p>y</p>", []),
    (
        "<p>a</p><ul><li><mark>x</mark></li></ul>",
        ["<mark> not in the first <p>: the claim must lead the article"],
    ),
    (
        "<ol><li>first</li><li><mark>x</mark></li></ol>",
        ["<mark> not in the first <li>: the claim must lead the article"],
    ),
    (
        "<details><summary><mark>x</mark></summary></details>",
        ["<mark> inside <details>: the claim is never behind a fold"],
    ),
    (
        "<aside><details><mark></mark></details></aside>",
        [
            "empty <mark>: the claim span must say something",
            "<mark> inside <aside>: the claim is never a caveat",
            "<mark> inside <details>: the claim is never behind a fold",
        ],
    ),
    ("<p><aside><mark>x</mark></aside></p>", ["<mark> inside <aside>: the claim is never a caveat"]),
    ("<li><mark>x</mark></li>", []),
    ("<div><mark>x</mark></div><p>q</p>", ["<mark> not in the first <p>: the claim must lead the article"]),
    ("<section><p><mark>x</mark></p></section>", []),
]


@pytest.mark.parametrize(("article", "violations"), CLAIM_CASES)
def test_claim_rules(article: str, violations: list[str]) -> None:
    assert check_memory(memory_file(article)).violations == violations
    assert check_article_fragment(article).violations == violations


TIME_CASES = [
    (
        "<p><mark>x</mark> <time>  a   b\n c <b>inner</b> tail 0123456789012345678901234567890123456789XYZ</time></p>",
        ['<time> without datetime: "a   b\n c  tail 0123456789012345678901234"'],
    ),
    (
        '<p><mark>x</mark> <time datetime="">q</time></p>',
        ['<time datetime=""> is not an ISO date or datetime'],
    ),
    (
        '<p><mark>x</mark> <time datetime=" 2026-01-01 ">q</time></p>',
        ['<time datetime=" 2026-01-01 "> is not an ISO date or datetime'],
    ),
    (
        '<p><mark>x</mark> <time datetime="2026-01-01T10:00:60Z">q</time><time datetime="2026-01-01T24:00:00Z">q</time>'
        '<time datetime="2026-01-01T10:00Z">q</time></p>',
        [
            '<time datetime="2026-01-01T24:00:00Z"> is not an ISO date or datetime',
            '<time datetime="2026-01-01T10:00Z"> is not an ISO date or datetime',
        ],
    ),
    (
        '<p><mark>x</mark> <time datetime="2026-07-28T10:00+02:00">t</time></p>',
        ['<time datetime="2026-07-28T10:00+02:00"> is not an ISO date or datetime'],
    ),
    (
        '<p><mark>x</mark> <time datetime="2026-02-30">t</time></p>',
        ['<time datetime="2026-02-30"> is not an ISO date or datetime'],
    ),
    ("<p><mark>x</mark> <time></time></p>", ['<time> without datetime: ""']),
    ("<p><mark>x</mark> <time>\u00a0abc\u00a0</time></p>", ['<time> without datetime: "abc"']),
    # P37: a bad <time> in an aside refuses the whole file even though only the first sets event time.
    (
        '<p><mark>x</mark> <time datetime="2026-01-01">ok</time></p><aside><time datetime="soon">t</time></aside>',
        ['<time datetime="soon"> is not an ISO date or datetime'],
    ),
]


@pytest.mark.parametrize(("article", "violations"), TIME_CASES)
def test_time_rules(article: str, violations: list[str]) -> None:
    assert check_memory(memory_file(article)).violations == violations


def test_presentation_and_script_follow_document_order_and_attribute_order() -> None:
    article = (
        '<p style="a" class="b" onclick="c" ONX="d" on="e"><mark>x</mark></p><p><i style=1>i</i></p>'
        '<p><mark2>y</mark2> <script class="x" onload="y">1</script> <style>a</style></p>'
    )
    assert check_memory(memory_file(article)).violations == [
        "style attribute on <p>: presentation is not memory",
        "class attribute on <p>: presentation is not memory",
        "onclick handler on <p>: a memory file does not execute",
        "onx handler on <p>: a memory file does not execute",
        "style attribute on <i>: presentation is not memory",
        "<script> is forbidden: a memory file does not execute or style",
        "class attribute on <script>: presentation is not memory",
        "onload handler on <script>: a memory file does not execute",
        "<style> is forbidden: a memory file does not execute or style",
    ]


def test_violations_are_not_deduplicated() -> None:
    article = (
        '<p class=a><mark>x</mark></p><p class=a>y</p><p><time datetime="b">1</time><time datetime="b">2</time>'
        "<time>z</time><time>z</time></p>"
    )
    extra = (
        '<link rel="memhtml-supports" href="a"><link rel="memhtml-supports" href="a">'
        '<meta name="memhtml-type" content="task"><meta name="memhtml-due" content="x">'
        '<meta name="memhtml-due" content="y">'
    )
    assert check_memory(memory_file(article, extra)).violations == [
        '<meta name="memhtml-type"> appears 2 times but is not repeatable',
        '<meta name="memhtml-due"> appears 2 times but is not repeatable',
        '<time datetime="b"> is not an ISO date or datetime',
        '<time datetime="b"> is not an ISO date or datetime',
        '<time> without datetime: "z"',
        '<time> without datetime: "z"',
        "class attribute on <p>: presentation is not memory",
        "class attribute on <p>: presentation is not memory",
        '<link rel="memhtml-supports" href="a"> is not repo-root-relative',
        '<link rel="memhtml-supports" href="a"> is not repo-root-relative',
        '<meta name="memhtml-due" content="x"> is not an ISO date or datetime',
    ]


def test_every_pass_in_reference_order() -> None:
    # One file breaking every rule class; the expected list is the original's `; `-joined reason, split.
    text = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>T</title><title>U</title>
<meta name="memhtml-type" content="bogus">
<meta name="memhtml-type" content="bogus2">
<meta name="memhtml-status" content="zzz">
<meta name="memhtml-created" content="2026-02-30">
<meta name="memhtml-foo" content="x">
<meta name="memhtml-task-status" content="nope">
<meta name="memhtml-due" content="tomorrow">
<meta name="memhtml-valid-from" content="2026-13-45">
<meta name="memhtml-valid-until" content="x">
<meta name="memhtml-archived" content="y">
<link rel="memhtml-bogus" href="/a.html">
<link rel="memhtml-supports">
<link rel="memhtml-supports" href="a.html">
<link rel="memhtml-supports" href="//a.html">
<link rel="memhtml-supports" href="/a/../b.html">
<script>x</script>
</head>
<body onload="x">
<article class="c" style="s">
<p>lead <time>no dt here at all</time> <time datetime="2026-07-28T10:00+02:00">t</time></p><p><mark>m</mark><mark></mark></p>
<style>a{}</style><div>d</div><b>b</b><code data-lang="c++ x">c</code>
</article>
<article>second</article>
</body>
</html>
"""
    expected = (
        '2 <title> elements: a memory file needs exactly one; missing required <meta name="memhtml-updated">; '
        '<meta name="memhtml-type"> appears 2 times but is not repeatable; <meta name="memhtml-foo"> is outside '
        "the closed metadata vocabulary; 2 <article> elements: a memory file needs exactly one; <time> without "
        'datetime: "no dt here at all"; <time datetime="2026-07-28T10:00+02:00"> is not an ISO date or datetime; '
        "<script> is forbidden: a memory file does not execute or style; onload handler on <body>: a memory file "
        "does not execute; class attribute on <article>: presentation is not memory; style attribute on <article>: "
        "presentation is not memory; <style> is forbidden: a memory file does not execute or style; "
        '<link rel="memhtml-bogus"> is outside the closed edge vocabulary; <link rel="memhtml-supports"> without '
        'href; <link rel="memhtml-supports" href="a.html"> is not repo-root-relative; <link rel="memhtml-supports" '
        'href="//a.html"> is not repo-root-relative; <link rel="memhtml-supports" href="/a/../b.html"> is not '
        'repo-root-relative; <meta name="memhtml-type" content="bogus"> is outside the type vocabulary; '
        '<meta name="memhtml-status" content="zzz"> is neither active nor archived; <meta name="memhtml-task-status"> '
        'on a typeless memory: only a task carries one; <meta name="memhtml-task-status" content="nope"> is outside '
        'the vocabulary: todo, doing, blocked, done; <meta name="memhtml-due" content="tomorrow"> is not an ISO date '
        'or datetime; <meta name="memhtml-created" content="2026-02-30"> is not an ISO date or datetime; '
        '<meta name="memhtml-valid-from" content="2026-13-45"> is not an ISO date or datetime; '
        '<meta name="memhtml-valid-until" content="x"> is not an ISO date or datetime; '
        '<meta name="memhtml-archived" content="y"> is not an ISO date or datetime'
    )
    assert check_memory(text).reason == expected


def test_head_rules() -> None:
    mixed = """<!doctype html><html><head><title>T</title>
<meta name="memhtml-foo" content="x">
<meta name="memhtml-type" content="task">
<meta name="memhtml-bar" content="x">
<meta name="memhtml-status" content="active">
<meta name="memhtml-status" content="active">
<meta name="memhtml-foo" content="x">
<meta name="memhtml-type" content="task">
<meta name="memhtml-type" content="task">
<meta name="MEMHTML-tag" content=""><meta name="Memhtml-foo" content="">
</head><body><article><p><mark>x</mark></p></article></body></html>"""
    assert check_memory(mixed).violations == [
        'missing required <meta name="memhtml-created">',
        'missing required <meta name="memhtml-updated">',
        '<meta name="memhtml-foo"> is outside the closed metadata vocabulary',
        '<meta name="memhtml-type"> appears 3 times but is not repeatable',
        '<meta name="memhtml-bar"> is outside the closed metadata vocabulary',
        '<meta name="memhtml-status"> appears 2 times but is not repeatable',
        'a task requires <meta name="memhtml-task-status">',
    ]
    blank_title = "<html><head><title> </title></head><body><article><p><mark>x</mark></p></article></body></html>"
    assert check_memory(blank_title).violations[:2] == [
        "empty <title>",
        'missing required <meta name="memhtml-type">',
    ]
    no_title = "<html><head></head><body><p><mark>x</mark></p></body></html>"
    assert check_memory(no_title).violations == [
        "0 <title> elements: a memory file needs exactly one",
        'missing required <meta name="memhtml-type">',
        'missing required <meta name="memhtml-status">',
        'missing required <meta name="memhtml-created">',
        'missing required <meta name="memhtml-updated">',
        "no <article>: a memory file needs exactly one",
    ]
    # A title in the body still counts; metas in the body are not head metas.
    in_body = memory_file('<p><mark>x</mark></p><meta name="memhtml-zzz" content="1"><title>t2</title>')
    assert check_memory(in_body).violations == ["2 <title> elements: a memory file needs exactly one"]


def test_mark_checks_look_inside_the_single_article_only() -> None:
    outside = HEAD + "</head><body><p><mark>outside</mark></p><article><p>y</p></article></body></html>"
    assert check_memory(outside).violations == ["no <mark>: the claim span is required"]


def test_task_coupling_both_ways() -> None:
    typeless = HEAD.replace("semantic", "")
    assert check_memory(
        memory_file("<p><mark>x</mark></p>", '<meta name="memhtml-task-status" content="todo">', typeless)
    ).violations == [
        '<meta name="memhtml-type" content=""> is outside the type vocabulary',
        '<meta name="memhtml-task-status"> on a typeless memory: only a task carries one',
    ]
    semantic = memory_file("<p><mark>x</mark></p>", '<meta name="memhtml-task-status" content="done">')
    assert check_memory(semantic).violations == [
        '<meta name="memhtml-task-status"> on a semantic memory: only a task carries one'
    ]
    task = HEAD.replace("semantic", "task")
    assert check_memory(memory_file("<p><mark>x</mark></p>", head=task)).violations == [
        'a task requires <meta name="memhtml-task-status">'
    ]
    blank = '<meta name="memhtml-task-status" content=""><meta name="memhtml-due" content=""><meta name="memhtml-valid-from" content="">'
    assert check_memory(memory_file("<p><mark>x</mark></p>", blank, task)).violations == [
        '<meta name="memhtml-task-status" content=""> is outside the vocabulary: todo, doing, blocked, done',
        '<meta name="memhtml-due" content=""> is not an ISO date or datetime',
        '<meta name="memhtml-valid-from" content=""> is not an ISO date or datetime',
    ]
    good = '<meta name="memhtml-task-status" content="doing"><meta name="memhtml-due" content="2026-12-01T00:00:00Z">'
    assert check_memory(memory_file("<p><mark>x</mark></p>", good, task)).ok


def test_link_rules() -> None:
    links = (
        '<link rel="memhtml-zzz"><link rel="memhtml-supports" href=""><link rel="memhtml-supports" href="/">'
        '<link rel="memhtml-supports" href="/a//b"><link rel="memhtml-supports" href="/a/./b">'
        '<link rel="memhtml-supports" href="/a/b?x=../..#/../"><link rel="memhtml-supports" href="/a/b/">'
        '<link rel="MEMHTML-supports" href="a"><link rel=" memhtml-supports" href="a">'
        '<link rel="memhtml-supports" href=" /a"><link rel="memhtml-supports" href="/a\\..\\b">'
        '<link rel="memhtml-supports" href="/a?"><link rel="memhtml-from-session" href="/s">'
    )
    body_link = '<p><mark>x</mark></p><link rel="memhtml-supports" href="a">'
    assert check_memory(memory_file(body_link, links)).violations == [
        '<link rel="memhtml-zzz"> is outside the closed edge vocabulary',
        '<link rel="memhtml-zzz"> without href',
        '<link rel="memhtml-supports"> without href',
        '<link rel="memhtml-supports" href="/"> is not repo-root-relative',
        '<link rel="memhtml-supports" href="/a//b"> is not repo-root-relative',
        '<link rel="memhtml-supports" href="/a/./b"> is not repo-root-relative',
        '<link rel="memhtml-supports" href="/a/b/"> is not repo-root-relative',
        '<link rel="memhtml-supports" href=" /a"> is not repo-root-relative',
    ]


def test_unchecked_values_pass() -> None:
    # needs-revision, superseded-by, confidence and author are never refused (silently dropped at most).
    extra = (
        '<meta name="memhtml-needs-revision" content="maybe"><meta name="memhtml-superseded-by" content="nope">'
        '<meta name="memhtml-confidence" content="9"><meta name="memhtml-author" content="">'
    )
    assert check_memory(memory_file('<p><mark>x</mark> <time datetime="2026-01-01">a</time></p>', extra)).ok


def test_warnings_in_document_order_deduplicated() -> None:
    article = (
        "<p><mark>x</mark></p><div>d</div><b>b</b><div>e</div><span>s</span><figure><div><span>ok</span></div></figure>"
        '<b>x</b><u>u</u><br><img src=x><code data-lang="c++ x">c</code><code data-lang="c++ x">c</code>'
        '<code data-lang=" Rust ">r</code><code data-lang="">e</code><code data-lang="-x">e</code>'
    )
    check = check_memory(memory_file(article))
    assert check.ok
    assert check.warnings == [
        "<div> outside a <figure>: use a semantic element instead",
        "<b> is outside the closed vocabulary",
        "<span> outside a <figure>: use a semantic element instead",
        "<u> is outside the closed vocabulary",
        "<br> is outside the closed vocabulary",
        "<img> is outside the closed vocabulary",
        'data-lang="c++ x" is not a language token',
        'data-lang=" Rust " is not a language token',
        'data-lang="" is not a language token',
        'data-lang="-x" is not a language token',
    ]


def test_warning_details() -> None:
    article = (
        '<p><mark>x</mark> <code data-lang="a b">c</code></p><b>b</b><pre data-lang="x y">p</pre><i data-lang="q r">i</i>'
        '<code data-lang="a b">c</code><code data-lang="C#">c</code><figure><b><div>in fig</div></b></figure>'
        "<span><figure><span>x</span></figure></span>"
    )
    assert check_memory(memory_file(article)).warnings == [
        'data-lang="a b" is not a language token',
        "<b> is outside the closed vocabulary",
        'data-lang="x y" is not a language token',
        'data-lang="q r" is not a language token',
        "<i> is outside the closed vocabulary",
        "<span> outside a <figure>: use a semantic element instead",
    ]
    foreign = (
        "<p><mark>x</mark></p><figure><figcaption><span>a</span></figcaption></figure><address><div>x</div></address>"
        "<svg><circle></circle></svg><math><mi>x</mi></math>"
    )
    assert check_memory(memory_file(foreign)).warnings == [
        "<div> outside a <figure>: use a semantic element instead",
        "<svg> is outside the closed vocabulary",
        "<circle> is outside the closed vocabulary",
        "<math> is outside the closed vocabulary",
        "<mi> is outside the closed vocabulary",
    ]
    whole = HEAD + (
        '<base href="/"><noscript></noscript><meta name="description" content="x"><link rel=stylesheet href=x>'
        "</head><body><header>h</header><article><p><mark>x</mark></p></article><p>out</p><div>o</div></body></html>"
    )
    assert check_memory(whole).warnings == [
        "<base> is outside the closed vocabulary",
        "<noscript> is outside the closed vocabulary",
        "<header> is outside the closed vocabulary",
        "<div> outside a <figure>: use a semantic element instead",
    ]
    # Observed with `memhtml doctor`: a forbidden element also warns as outside the vocabulary.
    assert check_memory(memory_file("<p><mark>x</mark><script>1</script><b>b</b></p>")).warnings == [
        "<script> is outside the closed vocabulary",
        "<b> is outside the closed vocabulary",
    ]


def test_inspect_memory_shares_one_parse() -> None:
    memory, check = inspect_memory(FILE_A)
    assert same_reading(memory, parse_memory(FILE_A))
    assert check == check_memory(FILE_A)


def test_an_indexer_that_asks_for_no_warnings_gets_the_same_reading_and_violations() -> None:
    text = memory_file("<p><mark>x</mark><script>1</script><b>b</b></p>")
    memory, check = inspect_memory(text)
    quiet_memory, quiet_check = inspect_memory(text, warnings=False)
    assert check.violations and check.warnings  # the file has both, so the comparison can tell
    assert quiet_check.violations == check.violations
    assert list(quiet_check.warnings) == []
    assert same_reading(quiet_memory, memory)
