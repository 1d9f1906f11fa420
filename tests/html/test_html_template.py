"""The writer: §1.6 files rebuilt byte-for-byte, toFixed(2), and the prose template as the original renders it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhtml.html.javascript_semantics import js_to_fixed_2
from memhtml.html.template import (
    MemoryHead,
    finish_article,
    format_confidence,
    prose_article,
    render_memory_file,
    split_apply_body,
)
from tests.html.memory_file_examples import FILE_A, FILE_B_NEW, FILE_B_OLD, FILE_C


def test_example_a_renders_byte_identically() -> None:
    article, digest = finish_article(
        prose_article(
            "If a prod rollback is issued, drain the VIP before reverting the deploy.",
            [
                "The revert alone leaves in-flight connections pinned to the old target group.",
                '```bash\naws elbv2 modify-target-group-attributes \\\n  --target-group-arn "$TG"\n```',
            ],
        )
    )
    head = MemoryHead(
        title="Prod rollbacks drain the VIP first",
        memory_type="procedural",
        created="2026-11-30T04:21:21Z",
        updated="2026-11-30T04:21:21Z",
        confidence=0.9,
        importance=8,
        content_hash=digest,
        session="f7e32699-d45b-4248-8ae6-894dfc606f49",
        prompt="pr_01JQ8ZK3",
        turn="t_7c1a",
        entities=["service:checkout-api", "person:sanju"],
        tags=["deploy", "oncall"],
        links=[("memhtml-relates-to", "/resources/people/sanju-owns-the-checkout-api.html")],
    )
    assert render_memory_file(head, article) == FILE_A


def test_example_b_correction_pair_renders_byte_identically() -> None:
    new_article, new_hash = finish_article(
        prose_article("SQLite WAL admits one writer at a time and unlimited concurrent readers.", [])
    )
    new_head = MemoryHead(
        title="WAL admits one writer, many readers",
        memory_type="semantic",
        created="2026-11-30T04:21:35Z",
        updated="2026-11-30T04:21:35Z",
        content_hash=new_hash,
        session="sess-3",
        valid_from="2026-11-30T04:21:35Z",
        links=[("memhtml-supersedes", "/archive/2026/resources/infra/wal-admits-one-writer-2.html")],
    )
    assert render_memory_file(new_head, new_article) == FILE_B_NEW

    old_article, old_hash = finish_article(
        prose_article("WAL admits a single writer at a time, with many readers.", [])
    )
    old_head = MemoryHead(
        title="WAL admits one writer",
        memory_type="semantic",
        status="archived",
        created="2026-11-30T04:21:24Z",
        updated="2026-11-30T04:21:35Z",
        content_hash=old_hash,
        valid_until="2026-11-30T04:21:35Z",
        archived="2026-11-30T04:21:35Z",
        superseded_by="/areas/inbox/wal-admits-one-writer-many-readers.html",
        tags=["infra"],
    )
    assert render_memory_file(old_head, old_article) == FILE_B_OLD


def test_example_c_task_renders_byte_identically() -> None:
    article, digest = finish_article(prose_article("Rotate the deploy key", []))
    head = MemoryHead(
        title="Rotate the deploy key",
        memory_type="task",
        created="2026-11-30T04:21:41Z",
        updated="2026-11-30T04:21:53Z",
        content_hash=digest,
        task_status="blocked",
        due="2026-12-01",
        links=[("memhtml-blocks", "/projects/checkout-api/tasks/wire-the-drain-step-into-the-runbook.html")],
    )
    assert render_memory_file(head, article) == FILE_C


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (0.125, "0.13"),
        (0.625, "0.63"),
        (0.9, "0.90"),
        (1, "1.00"),
        (1.0, "1.00"),
        (0.005, "0.01"),
        (0.015, "0.01"),
        (0.045, "0.04"),
        (0.995, "0.99"),
        (0.0, "0.00"),
        (-0.0, "0.00"),
        (0.5, "0.50"),
        (0.1, "0.10"),
        # What node prints for (-0.004).toFixed(2) and the rest: below zero keeps its sign, even at 0.00.
        (-0.004, "-0.00"),
        (-0.005, "-0.01"),
        (-1.005, "-1.00"),
        (123456789.125, "123456789.13"),
    ],
)
def test_confidence_prints_like_js_to_fixed(value: float, printed: str) -> None:
    # 0.045/0.995 are below the tie in binary, so they round down, exactly as the original stamped them.
    assert format_confidence(value) == printed


@given(st.floats(min_value=-1e18, max_value=1e18, allow_nan=False))
def test_to_fixed_is_the_exact_binary_value_rounded_half_away_from_zero(value: float) -> None:
    from decimal import ROUND_HALF_UP, Decimal

    expected = str(Decimal(0.0 if value == 0 else value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    assert js_to_fixed_2(value) == expected


def test_meta_pairs_follow_meta_order_and_render_values() -> None:
    head = MemoryHead(
        title="t",
        memory_type="task",
        created="2026-01-01T00:00:00Z",
        updated="2026-01-02T00:00:00Z",
        aliases=["Al", ""],
        tags=["", "x"],
        due="2026-02-01",
        task_status="todo",
        needs_revision=False,
        reprieves=2,
        archived="2026-01-03",
        author="agent:sleep",
        confidence=0.125,
        importance=3,
    )
    assert head.meta_pairs() == [
        ("memhtml-type", "task"),
        ("memhtml-status", "active"),
        ("memhtml-created", "2026-01-01T00:00:00Z"),
        ("memhtml-updated", "2026-01-02T00:00:00Z"),
        ("memhtml-confidence", "0.13"),
        ("memhtml-importance", "3"),
        ("memhtml-author", "agent:sleep"),
        ("memhtml-reprieves", "2"),
        ("memhtml-archived", "2026-01-03"),
        ("memhtml-needs-revision", "false"),
        ("memhtml-task-status", "todo"),
        ("memhtml-due", "2026-02-01"),
        ("memhtml-tag", "x"),
        ("memhtml-alias", "Al"),
    ]


def test_head_values_are_escaped_and_the_title_trimmed() -> None:
    # Observed on the original: the title is trimmed and text-escaped (a raw CR inside it survives),
    # attribute values escape quotes, ampersands, NBSP, CR and LF.
    head = MemoryHead(
        title='  Ti<t>le & "q" \u00a0 x\nnl\r\nz  ',
        memory_type="semantic",
        session="s\r\n1",
        entities=['person:a"b'],
        tags=['t"a&g', "nl\nx", "\u00a0nb"],
    )
    text = render_memory_file(head, "<p><mark>Head esc.</mark></p>")
    assert '<title>Ti&lt;t&gt;le &amp; "q" &nbsp; x\nnl\r\nz</title>' in text
    assert '<meta name="memhtml-session" content="s&#13;&#10;1">' in text
    assert '<meta name="memhtml-entity" content="person:a&quot;b">' in text
    assert '<meta name="memhtml-tag" content="t&quot;a&amp;g">\n<meta name="memhtml-tag" content="nl&#10;x">' in text
    assert '<meta name="memhtml-tag" content="&nbsp;nb">' in text


# Prose mode, observed with `memhtml write --claim ... --body ...` on the original.
PROSE_CASES = [
    (
        '  Claim <a> & "q"  ',
        [
            "  first body  ",
            "",
            "  ",
            "second\nline  two",
            '```Python title=x\nprint(1 < 2)\n\n  x = "&"\n```',
            "````js\nconst a = ```;\n````",
            "pre ```x\ny\n```",
            "```\nunlabelled text here\n```",
            "```c++\nint x;\n```",
        ],
        '<p><mark>Claim &lt;a&gt; &amp; "q"</mark> first body</p>\n<p>second\nline  two</p>\n'
        '<figure><pre><code data-lang="python">print(1 &lt; 2)\n\n  x = "&amp;"</code></pre></figure>\n'
        '<figure><pre><code data-lang="js">const a = ```;</code></pre></figure>\n<p>pre ```x\ny\n```</p>\n'
        "<figure><pre><code>unlabelled text here</code></pre></figure>\n"
        '<figure><pre><code data-lang="c++">int x;</code></pre></figure>',
    ),
    (
        "Fence first.",
        ["```bash\nls\n```", "after"],
        '<p><mark>Fence first.</mark></p>\n<figure><pre><code data-lang="bash">ls</code></pre></figure>\n<p>after</p>',
    ),
    (
        "Bad lang.",
        [
            "```-x\nls\n```",
            "```ts\nunclosed",
            "  ```sh\n  indented fence\n  ```  ",
            "```sh \nls\n```  ",
            "```a`b\nq\n```",
            "```sh\nls\n`````",
        ],
        "<p><mark>Bad lang.</mark></p>\n<figure><pre><code>ls</code></pre></figure>\n<p>```ts\nunclosed</p>\n"
        '<figure><pre><code data-lang="sh">  indented fence</code></pre></figure>\n'
        '<figure><pre><code data-lang="sh">ls</code></pre></figure>\n<p>```a`b\nq\n```</p>\n'
        '<figure><pre><code data-lang="sh">ls</code></pre></figure>',
    ),
    (
        "Edge fences one.",
        [
            "```sh\nls```",
            "```sh```",
            "```\n```",
            "```sh\nls\n``` trailing",
            "```sh\nls\n\n```",
            "```sh\n\nls\n```",
            "~~~sh\nls\n~~~",
            "```sh\r\nls\r\n```",
            "```sh\nls\n``",
            "````sh\nls\n```",
            "```SH.X+\nls\n```",
        ],
        "<p><mark>Edge fences one.</mark> ```sh\nls```</p>\n<p>```sh```</p>\n<figure><pre><code></code></pre></figure>\n"
        "<p>```sh\nls\n``` trailing</p>\n"
        '<figure><pre><code data-lang="sh">ls\n</code></pre></figure>\n'
        '<figure><pre><code data-lang="sh">\nls</code></pre></figure>\n<p>~~~sh\nls\n~~~</p>\n'
        '<figure><pre><code data-lang="sh">ls\n</code></pre></figure>\n<p>```sh\nls\n``</p>\n<p>````sh\nls\n```</p>\n'
        '<figure><pre><code data-lang="sh.x+">ls</code></pre></figure>',
    ),
    ("Blank first.", ["  ", "x y"], "<p><mark>Blank first.</mark> x y</p>"),
    (
        "Nbsp\u00a0claim.",
        ["a\u00a0b", "tab\there"],
        "<p><mark>Nbsp&nbsp;claim.</mark> a&nbsp;b</p>\n<p>tab\there</p>",
    ),
]


@pytest.mark.parametrize(("claim", "bodies", "article"), PROSE_CASES)
def test_prose_article_matches_the_original(claim: str, bodies: list[str], article: str) -> None:
    assert prose_article(claim, bodies) == article


# `apply` bodies, observed with `memhtml apply` on the original: (body, resulting article).
APPLY_CASES = [
    ("No terminal punctuation here", "<p><mark>No terminal punctuation here</mark></p>"),
    (
        "First sentence. Same para continues.\nStill.\n\nSecond para.\n\n\n  Third para  \n\n"
        "```py\nx = 1\n\ny = 2\n```\n\nAfter fence.",
        "<p><mark>First sentence.</mark> Same para continues.\nStill.</p>\n<p>Second para.</p>\n<p>Third para</p>\n"
        '<figure><pre><code data-lang="py">x = 1\n\ny = 2</code></pre></figure>\n<p>After fence.</p>',
    ),
    ("v1.2 is out! Yes.\n\nMore", "<p><mark>v1.2 is out!</mark> Yes.</p>\n<p>More</p>"),
    (
        "Ends here.\n\n```sh\nls\n```",
        '<p><mark>Ends here.</mark></p>\n<figure><pre><code data-lang="sh">ls</code></pre></figure>',
    ),
    (
        "  Leading space? Then\ttab.  \n \n  next",
        "<p><mark>Leading space?</mark> Then\ttab.</p>\n<p>next</p>",
    ),
    (
        "Claim.\nline2\n\n```\nunclosed\n\nfence tail",
        "<p><mark>Claim.</mark> line2</p>\n<p>```\nunclosed\n\nfence tail</p>",
    ),
    ("Claim... more?! yes", "<p><mark>Claim...</mark> more?! yes</p>"),
    (
        "Claim b1.\n\n````md\n```\n\ninner\n```\n\nstill\n````\n\nafter",
        '<p><mark>Claim b1.</mark></p>\n<figure><pre><code data-lang="md">```\n\ninner\n```\n\nstill</code></pre></figure>\n'
        "<p>after</p>",
    ),
    (
        "Claim b2.\n\ntext before\n```sh\nls\n\nmore\n```\ntext after\n\nlast",
        "<p><mark>Claim b2.</mark> text before\n```sh\nls\n\nmore\n```\ntext after</p>\n<p>last</p>",
    ),
    (
        "Claim b3.\n\n   ```sh\nls\n\n   ```   \n\nlast",
        '<p><mark>Claim b3.</mark></p>\n<figure><pre><code data-lang="sh">ls\n</code></pre></figure>\n<p>last</p>',
    ),
    (
        "Claim b4.\n\n```sh\nls\n\n```js\n\nq\n```\n\nlast",
        '<p><mark>Claim b4.</mark></p>\n<figure><pre><code data-lang="sh">ls\n\n```js\n\nq</code></pre></figure>\n'
        "<p>last</p>",
    ),
    ("Claim b5.\r\n\r\nsecond\r\n\r\nthird", "<p><mark>Claim b5.</mark> second</p>\n<p>third</p>"),
    # A line whose info string holds a backtick does not open a fence; a later bare ``` does.
    (
        "Body 56! ```a`b\nq\n```\n \n```py\nx = 1\n\ny = 2\n```",
        "<p><mark>Body 56!</mark> ```a`b\nq\n```\n \n```py\nx = 1\n\ny = 2\n```</p>",
    ),
    (
        "Body 175?\n\n```a`b\nq\n``` ```ts\nunclosed\r\n\r\ntab\there?!",
        "<p><mark>Body 175?</mark> ```a`b\nq\n``` ```ts\nunclosed</p>\n<p>tab\there?!</p>",
    ),
    (
        "Body 196 tab\there\r\n\r\nx...\n\n```a`b\nq\n```\n\n\u3000ideo",
        "<p><mark>Body 196 tab\there\n\nx...</mark> ```a`b\nq\n```\n\n\u3000ideo</p>",
    ),
]


@pytest.mark.parametrize(("body", "article"), APPLY_CASES)
def test_apply_body_matches_the_original(body: str, article: str) -> None:
    claim, paragraphs = split_apply_body(body)
    assert prose_article(claim, paragraphs) == article


def test_split_apply_body_shapes() -> None:
    assert split_apply_body("One. Two.\n\nThree") == ("One.", ["Two.", "Three"])
    assert split_apply_body("No end") == ("No end", [])
    assert split_apply_body("Trailing.") == ("Trailing.", [])
    assert split_apply_body("x.y is a name. Rest") == ("x.y is a name.", ["Rest"])
