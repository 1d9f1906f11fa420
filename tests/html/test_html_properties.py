"""Property tests: canonical serialization is a fixed point, files round-trip, head edits never move the hash."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memhtml.contracts.vocabulary import (
    ALL_RELS,
    MEMORY_TYPES,
    META_ORDER,
    REPEATABLE_METAS,
    TASK_STATUSES,
    rel_from_token,
    rel_token,
)
from memhtml.html.document import parse_memory
from memhtml.html.escaping import escape_attribute, escape_text
from memhtml.html.hashing import content_hash
from memhtml.html.headedit import add_link, add_meta, remove_link, remove_meta, scan_head, set_meta
from memhtml.html.javascript_semantics import collapsed
from memhtml.html.serialize import canonical_article
from memhtml.html.template import (
    MemoryHead,
    finish_article,
    format_confidence,
    prose_article,
    render_memory_file,
)
from memhtml.html.validate import check_memory

# No example database: the suite stays hermetic and writes nothing outside the test run.
PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

# Text a file can hold verbatim: no NUL or CR (the parser rewrites both) and no lone surrogates.
_TEXT_ALPHABET = st.characters(codec="utf-8", exclude_characters="\x00\r")
_SPICY = st.sampled_from(["&", "<", ">", '"', "'", "\u00a0", " ", "  ", "\n", "\t", "&amp;", "```", "\u3000"])
plain_text = st.lists(st.one_of(st.text(_TEXT_ALPHABET, max_size=8), _SPICY), max_size=5).map("".join)

INLINE_TAGS = [
    "mark",
    "cite",
    "q",
    "dfn",
    "abbr",
    "code",
    "kbd",
    "samp",
    "var",
    "a",
    "strong",
    "em",
    "span",
    "b",
]


def _element(tag: str, inner: str, attrs: str = "") -> str:
    return f"<{tag}{attrs}>{inner}</{tag}>"


def _attribute(name: str) -> st.SearchStrategy[str]:
    return plain_text.map(lambda value: f' {name}="{escape_attribute(value)}"')


inline_content = st.recursive(
    plain_text.map(escape_text),
    lambda children: st.one_of(
        st.tuples(st.sampled_from(INLINE_TAGS), st.lists(children, max_size=3)).map(
            lambda pair: _element(pair[0], "".join(pair[1]))
        ),
        st.tuples(children, _attribute("title")).map(lambda pair: _element("abbr", pair[0], pair[1])),
        st.tuples(children, st.sampled_from(["2026-01-02", "2026-01-02T03:04:05Z"])).map(
            lambda pair: _element("time", pair[0], f' datetime="{pair[1]}"')
        ),
        st.just("<br>"),
        plain_text.map(lambda text: f"<!--{text.replace('-', '')}-->"),
    ),
    max_leaves=8,
)


def _block(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        inline_content.map(lambda inner: _element("p", inner)),
        st.lists(inline_content.map(lambda inner: _element("li", inner)), min_size=1, max_size=3).map(
            lambda items: _element("ul", "".join(items))
        ),
        st.tuples(inline_content, inline_content).map(
            lambda pair: _element("dl", _element("dt", pair[0]) + _element("dd", pair[1]))
        ),
        plain_text.map(lambda code: f"<figure><pre><code>{escape_text(code)}</code></pre></figure>"),
        plain_text.map(lambda text: _element("pre", escape_text(text))),
        st.lists(children, max_size=2).map(lambda inner: _element("section", "".join(inner))),
        st.lists(children, max_size=2).map(lambda inner: _element("aside", "".join(inner))),
        st.tuples(inline_content, st.lists(children, max_size=2)).map(
            lambda pair: _element("details", _element("summary", pair[0]) + "".join(pair[1]))
        ),
        st.lists(inline_content, min_size=1, max_size=3).map(
            lambda cells: "<table><tr>" + "".join(_element("td", cell) for cell in cells) + "</tr></table>"
        ),
    )


block_content = st.recursive(inline_content.map(lambda inner: _element("p", inner)), _block, max_leaves=6)
article_markup = st.lists(
    st.tuples(block_content, st.sampled_from(["", "\n", "\n  ", " "])), min_size=1, max_size=4
).map(lambda blocks: "".join(block + gap for block, gap in blocks))


@PROPERTY_SETTINGS
@given(article_markup)
def test_canonical_article_is_a_fixed_point_and_keeps_the_hash(markup: str) -> None:
    once = canonical_article(markup)
    assert canonical_article(once) == once
    assert content_hash(once) == content_hash(markup)
    assert finish_article(markup) == (once, content_hash(markup))


@PROPERTY_SETTINGS
@given(st.text(st.sampled_from("<>/ap=\"'&;!-bcdeilmrtu \n\u00a0"), max_size=60))
def test_canonical_article_is_a_fixed_point_on_tag_soup(soup: str) -> None:
    once = canonical_article(soup)
    assert canonical_article(once) == once


instants = st.one_of(
    st.dates().map(lambda day: day.isoformat()),
    st.datetimes(timezones=st.none()).map(lambda moment: moment.strftime("%Y-%m-%dT%H:%M:%SZ")),
).filter(lambda value: len(value) in (10, 20))
head_values = st.text(_TEXT_ALPHABET, max_size=20)
titles = st.text(_TEXT_ALPHABET, min_size=1, max_size=30).filter(lambda title: collapsed(title) == title)
hrefs = st.lists(
    st.text("abcxyz-.0", min_size=1, max_size=6).filter(lambda s: s not in (".", "..")),
    min_size=1,
    max_size=3,
).map(lambda parts: "/" + "/".join(parts) + ".html")


@st.composite
def memory_heads(draw: st.DrawFn) -> MemoryHead:
    memory_type = draw(st.sampled_from(MEMORY_TYPES))
    status = draw(st.sampled_from(["active", "archived"]))
    return MemoryHead(
        title=draw(titles),
        memory_type=memory_type,
        status=status,
        created=draw(instants),
        updated=draw(instants),
        confidence=draw(st.none() | st.floats(0, 1)),
        importance=draw(st.none() | st.integers(1, 10)),
        author=draw(st.none() | head_values),
        session=draw(st.none() | head_values),
        prompt=draw(st.none() | head_values),
        turn=draw(st.none() | head_values),
        valid_from=draw(st.none() | instants),
        valid_until=draw(st.none() | instants),
        reprieves=draw(st.none() | st.integers(0, 50)),
        archived=draw(instants) if status == "archived" else None,
        superseded_by=draw(st.none() | hrefs),
        needs_revision=draw(st.none() | st.booleans()),
        task_status=draw(st.sampled_from(TASK_STATUSES)) if memory_type == "task" else None,
        due=draw(st.none() | instants),
        entities=draw(st.lists(head_values, max_size=3)),
        tags=draw(st.lists(head_values, max_size=3)),
        aliases=draw(st.lists(head_values, max_size=2)),
        links=draw(st.lists(st.tuples(st.sampled_from(ALL_RELS).map(rel_token), hrefs), max_size=3)),
    )


claims = st.text(_TEXT_ALPHABET, min_size=1, max_size=30).filter(lambda claim: collapsed(claim) != "")


@PROPERTY_SETTINGS
@given(memory_heads(), claims, st.lists(plain_text, max_size=3))
def test_rendered_file_parses_back_to_its_head(head: MemoryHead, claim: str, bodies: list[str]) -> None:
    article, digest = finish_article(prose_article(claim, bodies))
    head = head._replace(content_hash=digest)
    text = render_memory_file(head, article)
    memory = parse_memory(text)
    assert memory.title == head.title
    assert (memory.memory_type, memory.status, memory.created, memory.updated) == (
        head.memory_type,
        head.status,
        head.created,
        head.updated,
    )
    expected_confidence = float(format_confidence(head.confidence)) if head.confidence is not None else None
    assert memory.confidence == expected_confidence
    assert memory.importance == head.importance
    assert memory.reprieves == head.reprieves
    assert memory.needs_revision == head.needs_revision
    for field in ("author", "session", "prompt", "turn", "valid_from", "valid_until", "superseded_by"):
        assert getattr(memory, field) == getattr(head, field), field
    assert (memory.archived_at, memory.task_status, memory.due) == (head.archived, head.task_status, head.due)
    assert memory.entities == [value for value in head.entities if value]
    assert memory.tags == [value for value in head.tags if value]
    assert memory.aliases == [value for value in head.aliases if value]
    assert memory.links == [(rel_from_token(token), href) for token, href in head.links]
    assert memory.article_inner_html == article
    assert memory.stated_content_hash == memory.content_hash == digest
    assert memory.gist == collapsed(claim)
    check = check_memory(text)
    assert check.violations == []


EDITABLE_SCALARS = [name for name in META_ORDER if name not in REPEATABLE_METAS]
head_edits = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(EDITABLE_SCALARS), head_values),
    st.tuples(st.just("add"), st.sampled_from(sorted(REPEATABLE_METAS)), head_values),
    st.tuples(st.just("remove"), st.sampled_from(META_ORDER), st.none() | head_values),
    st.tuples(st.just("link"), st.sampled_from(ALL_RELS).map(rel_token), hrefs),
    st.tuples(st.just("unlink"), st.sampled_from(ALL_RELS).map(rel_token), st.none() | hrefs),
)


@PROPERTY_SETTINGS
@given(memory_heads(), claims, st.lists(head_edits, min_size=1, max_size=8))
def test_head_edits_never_move_the_hash_or_touch_the_article(
    head: MemoryHead, claim: str, edits: list[tuple[str, str, str | None]]
) -> None:
    article, digest = finish_article(prose_article(claim, []))
    original = render_memory_file(head._replace(content_hash=digest), article)
    text = original
    for kind, key, value in edits:
        if kind == "set" and value is not None:
            text = set_meta(text, key, value)
            assert parse_memory(text).meta(key) == value
        elif kind == "add" and value is not None:
            text = add_meta(text, key, value)
            assert value in [content for name, content in parse_memory(text).metas if name == key]
        elif kind == "remove":
            text = remove_meta(text, key, value)
        elif kind == "link" and value is not None:
            text = add_link(text, key, value)
            assert (rel_from_token(key), value) in parse_memory(text).links
        elif kind == "unlink":
            text = remove_link(text, key, value)
        assert content_hash(text) == digest
        # Attribute values escape LF, so this line break can only be the real one before <body>.
        assert text[text.index("\n<body>\n") :] == original[original.index("\n<body>\n") :]
    names = [tag.key for tag in scan_head(text).tags if tag.tag == "meta"]
    ranks = [META_ORDER.index(name) for name in names]
    assert ranks == sorted(ranks), "edits keep META_ORDER"
    assert len(text.split("\n")) == len(original.split("\n")) + sum(
        1 for line in text.split("\n") if line not in original.split("\n")
    ) - sum(1 for line in original.split("\n") if line not in text.split("\n")), "one line per change"


@PROPERTY_SETTINGS
@given(st.text(_TEXT_ALPHABET, max_size=40))
def test_attribute_values_survive_a_head_round_trip(value: str) -> None:
    assume(value != "")
    base = render_memory_file(
        MemoryHead(title="t", memory_type="semantic", created="2026-01-01", updated="2026-01-01"),
        "<p><mark>x</mark></p>",
    )
    edited = set_meta(base, "memhtml-session", value)
    assert parse_memory(edited).session == value
    assert len(edited.split("\n")) == len(base.split("\n")) + 1
