"""Hostile inputs for the fuzz suite, and the settings every fuzz property runs under.

Owns: junk text and bytes (every code point including lone surrogates, invalid UTF-8 decoded the ways
the doors decode it), a vocabulary of hostile markup, near-valid memory files mutated from the
reference examples, JSONL `apply` streams, path-like strings and secret-shaped text.

Budgets: each property names its CI example count; `MEMHTML_FUZZ_EXAMPLES` replaces every count for a
long run. Runs are derandomized (the same examples every time, so a red build reproduces) unless
`MEMHTML_FUZZ_SEED` asks for a seeded random exploration.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

import pytest
from hypothesis import HealthCheck, currently_in_test_context, event, seed, settings
from hypothesis import strategies as st

from memhtml.contracts.paths import slugify
from memhtml.contracts.vocabulary import MEMORY_TYPES, PARA_BUCKETS, TASK_STATUSES
from memhtml.operations.batchinput import OP_FIELDS
from tests.html.memory_file_examples import FILE_A, FILE_B_NEW, FILE_B_OLD, FILE_C

EXAMPLES_ENV: Final = "MEMHTML_FUZZ_EXAMPLES"
SEED_ENV: Final = "MEMHTML_FUZZ_SEED"

Test = TypeVar("Test", bound=Callable[..., None])


def example_budget(ci_examples: int) -> int:
    """The examples one property runs: its CI count, or the long-run count from the environment."""
    raw = os.environ.get(EXAMPLES_ENV, "").strip()
    return int(raw) if raw else ci_examples


def fuzz(ci_examples: int) -> Callable[[Test], Test]:
    """Settings for one fuzz property (apply above `@given`): no example database (the committed corpus is
    the memory), no deadline (a deep tree legitimately takes a while), and slow or large inputs allowed."""
    chosen_seed = os.environ.get(SEED_ENV, "").strip()
    configured = settings(
        max_examples=example_budget(ci_examples),
        derandomize=not chosen_seed,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )

    def apply(test: Test) -> Test:
        decorated = configured(test)
        return seed(int(chosen_seed))(decorated) if chosen_seed else decorated

    return apply


def note_outcome(label: str) -> None:
    """Count an outcome in the statistics (`--hypothesis-show-statistics`); corpus replays count nothing."""
    if currently_in_test_context():
        event(label)


# ---------------------------------------------------------------- text and bytes

# Every code point, lone surrogates included: a str can hold them (surrogateescape'd argv, JSON `\ud800`).
ANY_CHARACTER: Final = st.characters(codec=None, exclude_categories=())
junk_text = st.text(ANY_CHARACTER, max_size=120)

# The characters the scans, the tokenizers and the path algebra treat specially.
NASTY_CHARACTERS: Final[tuple[str, ...]] = (
    "\x00",
    "\x01",
    "\x1b",
    "\x7f",
    "\x85",
    "\x9f",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x0b",
    "\x0c",
    "\u00a0",
    "\u00ad",
    "\u034f",
    "\u061c",
    "\u180e",
    "\u200b",
    "\u200c",
    "\u200d",
    "\u200e",
    "\u202a",
    "\u202e",
    "\u2028",
    "\u2029",
    "\u2066",
    "\u2069",
    "\u3000",
    "\u3164",
    "\ufe0f\ufe0f",
    "\ufeff",
    "\ufffd",
    "\U000e0041",
    "\U0001f600",
    "\ud800",
    "\udcff",
    "\udfff",
    "e\u0301",
    "\uff47\uff48\uff50\uff3f",  # fullwidth `ghp_`
    "\u2024",
    "\u2215",
    "\uff0f",
    "\uff0e\uff0e",
)
nasty_text = st.lists(
    st.one_of(st.sampled_from(NASTY_CHARACTERS), st.text(ANY_CHARACTER, max_size=6)), max_size=12
).map("".join)

# How a door turns bytes it was given into text: strictly decoded bytes never get this far, but
# `surrogateescape` (POSIX argv, a C-locale stdin) and `replace` do.
DECODINGS: Final[tuple[str, ...]] = ("surrogateescape", "replace", "ignore", "latin-1")


def decode_bytes(raw: bytes, how: str) -> str:
    if how == "latin-1":
        return raw.decode("latin-1")
    return raw.decode("utf-8", how)


INVALID_UTF8: Final[tuple[bytes, ...]] = (
    b"\xff",
    b"\xfe\xff",
    b"\xc0\xaf",  # overlong `/`
    b"\xe0\x80\xaf",
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xf4\x90\x80\x80",  # above U+10FFFF
    b"\xc3",  # truncated sequence
    b"\x80",
    b"\xef\xbb\xbf",  # BOM
)
hostile_bytes = st.lists(
    st.one_of(
        st.binary(max_size=24),
        st.sampled_from(INVALID_UTF8),
        junk_text.map(lambda text: text.encode("utf-8", "surrogatepass")),
    ),
    max_size=8,
).map(b"".join)
decoded_bytes = st.builds(decode_bytes, hostile_bytes, st.sampled_from(DECODINGS))
any_text = st.one_of(junk_text, nasty_text, decoded_bytes)

# ---------------------------------------------------------------- hostile markup

HOSTILE_MARKUP: Final[tuple[str, ...]] = (
    "<script>alert(1)</script>",
    "<script>",
    "</script>",
    "<sCrIpT src=//x.example/a.js></ScRiPt>",
    "<style>p{color:red}</style>",
    "<style>",
    '<p onclick="steal()">',
    "<img src=x onerror=alert(1)>",
    "<body onload=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    '<a href="&#106;avascript:alert(1)">x</a>',
    '<a href=" java\tscript:alert(1)">x</a>',
    '<a href="data:text/html,<script>x</script>">x</a>',
    '<iframe srcdoc="<script>x</script>"></iframe>',
    "<iframe>",
    "<object data=x></object>",
    "<embed src=x>",
    "<base href=//evil.example/>",
    '<form action="javascript:x"><button formaction=javascript:y>',
    "<svg><script>x</script></svg>",
    "<svg><style>&lt;img src=x onerror=y&gt;</style></svg>",
    "<svg><p>",
    "<math><mtext><table><mglyph><style><img src=x onerror=y>",
    "<template><meta name=memhtml-tag content=hidden></template>",
    "<template>",
    "</template>",
    '<noscript><p title="</noscript><img src=x onerror=y>">',
    "<noscript>",
    "<noembed>",
    "<noframes>",
    "<xmp><mark>x</mark></xmp>",
    "<plaintext>",
    "<textarea><mark>x</mark></textarea>",
    "<textarea>",
    "<listing>\n\nx</listing>",
    "<pre>\n\nx</pre>",
    "<select><option><mark>",
    "<frameset>",
    "<table><mark>x</mark><tr><td>y",
    "<table>x<p>y</table>",
    "<a><a>x",
    "<b><i>x</b>y</i>",
    "<p><div>x</p>",
    "<![CDATA[<mark>x</mark>]]>",
    "<![CDATA[",
    "]]>",
    "<!-- <mark>x</mark> -->",
    "<!--",
    "-->",
    "<!-->",
    "<!--->",
    "<!---->",
    "<!--x--!>",
    "<!->",
    "<!x>",
    "<?xml version='1.0'?>",
    "<?",
    "<!DOCTYPE html>",
    "<!doctype x [<!ENTITY a 'b'>]>",
    "<!",
    "&amp;",
    "&lt;mark&gt;",
    "&#0;",
    "&#x110000;",
    "&#xD800;",
    "&#13;",
    "&#x202e;",
    "&#8203;",
    "&nbsp",
    "&notit;",
    "&",
    "<",
    ">",
    "</",
    "<a",
    '<p title="',
    "<mark",
    "<mark>",
    "</mark>",
    "<mark></mark>",
    "<mark> </mark>",
    "<mark><code>x</code></mark>",
    "<MARK>y</MARK>",
    "<p><mark>claim</mark></p>",
    "<li><mark>claim</mark></li>",
    "<aside><mark>x</mark></aside>",
    "<details><summary>s</summary><mark>x</mark></details>",
    "<article>",
    "</article>",
    "<article/>",
    "<ARTICLE>",
    "<head>",
    "</head>",
    "<body>",
    "</body>",
    "<html>",
    "</html>",
    "<title>",
    "</title>",
    "<title>t</title>",
    '<meta name="memhtml-type" content="semantic">',
    '<meta name="memhtml-type" content="bogus">',
    '<meta name="memhtml-status" content="active">',
    '<meta name="memhtml-created" content="2026-02-30">',
    '<meta name="memhtml-confidence" content="NaN">',
    '<meta name="memhtml-importance" content="1e1">',
    '<meta name="memhtml-reprieves" content="-0">',
    '<meta name="memhtml-task-status" content="done">',
    '<meta name="memhtml-tag" content="x">',
    '<meta name="memhtml-bogus" content="x">',
    '<meta name="MEMHTML-TAG" content="x">',
    '<meta content="x" name="memhtml-tag" name="memhtml-entity">',
    '<link rel="memhtml-relates-to" href="//evil.example/x.html">',
    '<link rel="memhtml-relates-to" href="/a/../b.html">',
    '<link rel="memhtml-relates-to">',
    '<link rel="memhtml-nonsense" href="/a.html">',
    "<time>",
    "<time>soon</time>",
    '<time datetime="2026-13-45">x</time>',
    '<time datetime="">x</time>',
    '<time datetime="2026-01-02T03:04:05Z">x</time>',
    '<div data-lang="not a token">',
    '<code data-lang="">x</code>',
    '<code data-lang="C#">x</code>',
    '<q cite="javascript:x">q</q>',
    "<cite>c</cite>",
    "<dfn>term</dfn>",
    '<dl><dt>a<dd><data value="1e309">x</data></dl>',
    '<dl><dt>k</dt><dd><data value="0x10">v</data></dd></dl>',
    "<mark style=color:red class=x>",
    "<p/>",
    "<br/>",
    "</br>",
    "</p>",
    "<image>",
    "<isindex>",
    "<nobr><nobr>",
    "<ruby>a<rt>b</ruby>",
    "<font face=x>",
    "<span>",
    "<div>",
    "<figure><pre><code>x</code></pre></figure>",
    "<p\x00>",
    "<article\x0c>",
    "<p title=a title=b>",
    "<p =x>",
    "<p a=\"1\"b='2'c=3>",
)
hostile_markup = st.sampled_from(HOSTILE_MARKUP)

NESTING_TAGS: Final[tuple[str, ...]] = (
    "div",
    "span",
    "section",
    "ul",
    "li",
    "p",
    "b",
    "a",
    "table",
    "mark",
    "details",
    "aside",
    "q",
    "blockquote",
    "svg",
    "math",
    "template",
    "font",
    "nobr",
    "i",
    "article",
    "dl",
    "pre",
)


def nested(tag: str, depth: int, closed: bool) -> str:
    return f"<{tag}>" * depth + "x" + (f"</{tag}>" * depth if closed else "")


# Generated depths stay modest to keep the suite fast; the corpus holds the 100,000-deep cases.
deep_markup = st.builds(nested, st.sampled_from(NESTING_TAGS), st.integers(2, 400), st.booleans())


def huge_attribute(kind: int, size: int) -> str:
    if kind == 0:
        return f'<p title="{"x" * size}">'
    if kind == 1:
        return f'<meta name="memhtml-tag" content="{"y" * size}">'
    if kind == 2:
        return "<p " + " ".join(f"a{index}" for index in range(size // 8)) + ">"
    return f"<p {'n' * size}=v>"


huge_markup = st.builds(huge_attribute, st.integers(0, 3), st.integers(256, 20_000))

_SOUP_PIECES: Final[tuple[str, ...]] = (
    *"<>/!?-=\"'&;#[] \n\tx",
    "a",
    "p",
    "mark",
    "article",
    "meta",
    "head",
    "body",
    "title",
    "time",
    "script",
    "CDATA",
    "--",
    "&#",
    "on",
)
tag_soup = st.lists(st.sampled_from(_SOUP_PIECES), max_size=40).map("".join)

hostile_fragment = st.lists(
    st.one_of(
        st.text(ANY_CHARACTER, max_size=10),
        st.sampled_from(NASTY_CHARACTERS),
        hostile_markup,
        hostile_markup,
        tag_soup,
        deep_markup,
        huge_markup,
    ),
    max_size=10,
).map("".join)

# ---------------------------------------------------------------- near-valid memory files

EXAMPLE_FILES: Final[tuple[str, ...]] = (FILE_A, FILE_B_NEW, FILE_B_OLD, FILE_C)
_TAG_NAME: Final = re.compile(r"</?([a-zA-Z][a-zA-Z0-9-]*)")
_CONTENT_VALUE: Final = re.compile(r'(?:content|href)="([^"]*)"')
_RENAMED_TAGS: Final[tuple[str, ...]] = (
    "section",
    "div",
    "span",
    "mark",
    "article",
    "aside",
    "details",
    "p",
    "li",
    "template",
    "svg",
    "textarea",
    "noscript",
    "title",
    "script",
    "ARTICLE",
    "Mark",
    "article/",
    "mark/",
)
# Containers a line of the file can be wrapped in; each hides it from one parser or the other.
_WRAPPERS: Final[tuple[tuple[str, str], ...]] = (
    ("<template>", "</template>"),
    ("<noscript>", "</noscript>"),
    ("<noframes>", "</noframes>"),
    ("<noembed>", "</noembed>"),
    ("<textarea>", "</textarea>"),
    ("<title>", "</title>"),
    ("<xmp>", "</xmp>"),
    ("<style>", "</style>"),
    ("<script>", "</script>"),
    ("<!--", "-->"),
    ("<![CDATA[", "]]>"),
    ("<svg>", "</svg>"),
    ("<math>", "</math>"),
    ("<object>", "</object>"),
    ("<select>", "</select>"),
    ("<div>", "</div>"),
    ("<p>", "</p>"),
    ("<aside>", "</aside>"),
    ("<details>", "</details>"),
    ("<table>", "</table>"),
    ("x", ""),
    ("&nbsp;", ""),
    ("</br>", ""),
    ("</p>", ""),
    ("<br>", ""),
)
HOSTILE_VALUES: Final[tuple[str, ...]] = (
    "",
    " ",
    "\u00a0",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-0",
    "0x10",
    "0b1",
    " 0.5 ",
    "\u00a00.5",
    "1.0000000000000002",
    "10.0",
    "11",
    "1_0",
    "\uff11",
    "2026-02-30",
    "2026-01-02T03:04:05+01:00",
    "9999-99-99T99:99:99Z",
    "javascript:alert(1)",
    "/resources/x.html",
    "/resources/x.html?a#b",
    "//evil.example/x.html",
    "/a/../b.html",
    "/./x.html",
    "../../etc/passwd",
    "semantic",
    "task",
    "archived",
    "done",
    "todo",
    "true",
    "YES",
    "service:db",
    ":x",
    "x:",
    '"><script>x</script>',
    "&quot;",
    "&#0;",
)


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _drop_line(draw: st.DrawFn, text: str) -> str:
    lines = _lines(text)
    del lines[draw(st.integers(0, len(lines) - 1))]
    return "\n".join(lines)


def _duplicate_line(draw: st.DrawFn, text: str) -> str:
    lines = _lines(text)
    line = lines[draw(st.integers(0, len(lines) - 1))]
    lines.insert(draw(st.integers(0, len(lines))), line)
    return "\n".join(lines)


def _move_line(draw: st.DrawFn, text: str) -> str:
    lines = _lines(text)
    line = lines.pop(draw(st.integers(0, len(lines) - 1)))
    lines.insert(draw(st.integers(0, len(lines))), line)
    return "\n".join(lines)


def _wrap_line(draw: st.DrawFn, text: str) -> str:
    lines = _lines(text)
    index = draw(st.integers(0, len(lines) - 1))
    opener, closer = draw(st.sampled_from(_WRAPPERS))
    lines[index] = opener + lines[index] + closer
    return "\n".join(lines)


def _insert_anywhere(draw: st.DrawFn, text: str) -> str:
    at = draw(st.integers(0, len(text)))
    return text[:at] + draw(hostile_fragment) + text[at:]


def _insert_between_tags(draw: st.DrawFn, text: str) -> str:
    # At a tag boundary the rest of the file keeps its shape, so more mutants still validate.
    boundaries = [match.start() for match in re.finditer("<", text)] + [len(text)]
    at = draw(st.sampled_from(boundaries))
    piece = draw(st.one_of(hostile_markup, st.sampled_from(NASTY_CHARACTERS), deep_markup, huge_markup))
    return text[:at] + piece + text[at:]


def _rename_tag(draw: st.DrawFn, text: str) -> str:
    matches = list(_TAG_NAME.finditer(text))
    if not matches:
        return text
    match = draw(st.sampled_from(matches))
    return text[: match.start(1)] + draw(st.sampled_from(_RENAMED_TAGS)) + text[match.end(1) :]


def _replace_value(draw: st.DrawFn, text: str) -> str:
    matches = list(_CONTENT_VALUE.finditer(text))
    if not matches:
        return text
    match = draw(st.sampled_from(matches))
    value = draw(st.one_of(st.sampled_from(HOSTILE_VALUES), nasty_text, st.integers(256, 20_000).map("v".__mul__)))
    return text[: match.start(1)] + value + text[match.end(1) :]


def _add_attribute(draw: st.DrawFn, text: str) -> str:
    ends = [match.end(1) for match in _TAG_NAME.finditer(text) if not match.group(0).startswith("</")]
    if not ends:
        return text
    at = draw(st.sampled_from(ends))
    name = draw(
        st.sampled_from(
            [
                "onclick",
                "ONLOAD",
                "onx",
                "on",
                "style",
                "class",
                "data-lang",
                "href",
                "datetime",
                "title",
                "id",
                "xmlns",
                "content",
                "name",
                "rel",
            ]
        )
    )
    value = draw(st.one_of(st.sampled_from(HOSTILE_VALUES), nasty_text))
    quoted = '"' + value.replace('"', "&quot;") + '"'
    return text[:at] + f" {name}={quoted}" + text[at:]


def _edit_article_text(draw: st.DrawFn, text: str) -> str:
    start = text.find("<mark>")
    if start < 0:
        return text
    start += len("<mark>")
    piece = draw(
        st.one_of(nasty_text, hostile_markup, st.sampled_from(["&#160;", "&#x200B;", "&lt;", "&#13;", "&#0;"]))
    )
    return text[:start] + piece + text[start:]


def _truncate(draw: st.DrawFn, text: str) -> str:
    return text[: draw(st.integers(0, len(text)))]


def _line_endings(draw: st.DrawFn, text: str) -> str:
    return text.replace("\n", draw(st.sampled_from(["\r\n", "\r", "\n\n", " ", "\f", "\u2028"])))


def _nest_article(draw: st.DrawFn, text: str) -> str:
    start, end = text.find("<article>"), text.find("</article>")
    if start < 0 or end < start:
        return text
    start += len("<article>")
    tag, depth = draw(st.sampled_from(NESTING_TAGS)), draw(st.integers(2, 400))
    return text[:start] + f"<{tag}>" * depth + text[start:end] + f"</{tag}>" * depth + text[end:]


Mutation = Callable[[st.DrawFn, str], str]
MUTATIONS: Final[tuple[Mutation, ...]] = (
    _drop_line,
    _duplicate_line,
    _move_line,
    _wrap_line,
    _wrap_line,
    _insert_anywhere,
    _insert_between_tags,
    _insert_between_tags,
    _rename_tag,
    _replace_value,
    _replace_value,
    _add_attribute,
    _edit_article_text,
    _truncate,
    _line_endings,
    _nest_article,
)


@st.composite
def near_valid_files(draw: st.DrawFn) -> str:
    """A reference example with up to four mutations: many still validate, the rest fail near the line."""
    text = draw(st.sampled_from(EXAMPLE_FILES))
    for _ in range(draw(st.integers(0, 4))):
        text = draw(st.sampled_from(MUTATIONS))(draw, text)
    return text


memory_file_inputs = st.one_of(near_valid_files(), near_valid_files(), hostile_fragment, any_text, tag_soup)


def _article_of(text: str) -> str:
    return text[text.index("<article>") + len("<article>") : text.index("</article>")]


# Article markup a caller could hand `write --article-html`: the examples' articles and one that uses
# every derived field (facets, citations, definitions, code, time, folds).
EXAMPLE_ARTICLES: Final[tuple[str, ...]] = (
    *(_article_of(text) for text in EXAMPLE_FILES),
    '<p><mark>The <dfn>pool ceiling</dfn> is <data value="64">64</data>.</mark> Set on '
    '<time datetime="2026-11-30">30 November</time>, see <q cite="/resources/db/pool.html">the runbook</q>.</p>\n'
    '<dl><dt>ceiling</dt><dd><data value="64">64</data></dd></dl>\n'
    "<details><summary>Why</summary><p>Load tests <cite>staging</cite>.</p></details>\n"
    '<aside><p>Caveat: <code data-lang="sql">SHOW max_connections</code></p></aside>\n'
    "<ul><li>one</li><li>two</li></ul><table><tr><td>a</td></tr></table>",
)
_ARTICLE_MUTATIONS: Final[tuple[Mutation, ...]] = (
    _drop_line,
    _duplicate_line,
    _wrap_line,
    _insert_between_tags,
    _insert_between_tags,
    _insert_between_tags,
    _rename_tag,
    _add_attribute,
    _edit_article_text,
    _edit_article_text,
)


@st.composite
def near_valid_articles(draw: st.DrawFn) -> str:
    """An example article with up to three hostile mutations, as a write door would receive it."""
    markup = draw(st.sampled_from(EXAMPLE_ARTICLES))
    for _ in range(draw(st.integers(0, 3))):
        markup = draw(st.sampled_from(_ARTICLE_MUTATIONS))(draw, markup)
    return markup


# ---------------------------------------------------------------- paths

PATH_SEGMENTS: Final[tuple[str, ...]] = (
    *PARA_BUCKETS,
    "inbox",
    "db",
    "2026",
    "..",
    ".",
    "",
    ".git",
    ".GIT",
    ".hidden",
    "...",
    "index.html",
    "sitemap.xml",
    "x.html",
    "a b.html",
    "x.HTML",
    ".html",
    "x.html.",
    "%2e%2e",
    "%2F",
    "..\\x",
    "x\\..",
    "\x00",
    "\x1f",
    "\x7f",
    "\x85",
    "\u202e",
    "\u200b",
    "\ud800",
    "\udcff",
    "\uff0e\uff0e",
    "\u2215",
    " ",
    "\u3000",
    "a" * 256,
    "\u00e9" * 128,
    "~",
    "*",
    "?",
    "#",
    ":",
)
path_segment = st.one_of(
    st.sampled_from(PATH_SEGMENTS), st.text(ANY_CHARACTER, max_size=10), st.text("abc-./\\%2eE ", max_size=8)
)


@st.composite
def raw_paths(draw: st.DrawFn) -> str:
    """Path-like strings: bucket-rooted segment lists with stray slashes, whitespace and hostile segments."""
    segments = draw(st.lists(path_segment, max_size=6))
    if draw(st.booleans()):
        segments.insert(0, draw(st.sampled_from(PARA_BUCKETS)))
    if draw(st.booleans()) and segments:
        segments[-1] = segments[-1] + draw(st.sampled_from([".html", ".html/", ".html ", ".htm", ""]))
    separator = draw(st.sampled_from(["/", "/", "/", "//", "\\", "/./"]))
    path = separator.join(segments)
    prefix = draw(st.sampled_from(["", "", "/", "//", " ", "\t/", "./", "../", "~/", "C:\\"]))
    suffix = draw(st.sampled_from(["", "", "/", "//", " ", "\n", "\x00"]))
    return prefix + path + suffix


@st.composite
def plausible_paths(draw: st.DrawFn) -> str:
    """Paths a caller might well give (a bucket, folders, a `.html` name), with at most one hostile touch."""
    folders = draw(st.lists(st.text("abcdefghij0123456789-_ .\u00e9\u4e2d", min_size=1, max_size=12), max_size=3))
    name = draw(st.text("abcdefghij0123456789-_ .\u00e9", min_size=1, max_size=20)) + ".html"
    segments = [draw(st.sampled_from(PARA_BUCKETS)), *folders, name]
    if draw(st.booleans()):
        segments.insert(draw(st.integers(0, len(segments))), draw(path_segment))
    prefix = draw(st.sampled_from(["", "", "/", "//", " "]))
    return prefix + "/".join(segments) + draw(st.sampled_from(["", "", "/", " "]))


path_inputs = st.one_of(raw_paths(), plausible_paths(), plausible_paths(), any_text)


def _edge_slug(length: int, tail: int, filler: str) -> str:
    body = (filler * length)[: max(1, length - len(str(tail)) - 1)]
    return slugify(f"{body}-{tail}")


# Slugs at the 80-character budget with a numeric tail, where an ordinal suffix can rebuild the slug.
edge_slugs = st.builds(_edge_slug, st.integers(70, 82), st.integers(1, 1000), st.sampled_from(["a", "ab-", "x1-", "0"]))

# ---------------------------------------------------------------- secrets

_ALNUM: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _token(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=size)


secret_shapes = st.one_of(
    _token(_ALNUM, 36).map("ghp_".__add__),
    _token("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 16).map("AKIA".__add__),
    _token(_ALNUM + "-", 24).map("xoxb-".__add__),
    _token(_ALNUM + "_-", 22).map("glpat-".__add__),
    _token(_ALNUM + "_-", 35).map("AIza".__add__),
    _token(_ALNUM, 24).map("sk_live_".__add__),
    st.tuples(_token(_ALNUM + "_-", 16), _token(_ALNUM + "_-", 16)).map(lambda parts: f"eyJ{parts[0]}.{parts[1]}.sig"),
    _token(_ALNUM + "/+", 40).map("aws_secret_access_key = ".__add__),
    _token(_ALNUM, 20).map(lambda body: f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"),
    _token(_ALNUM + "!@", 14).map("password=".__add__),
    _token(_ALNUM, 16).map(lambda body: f"https://user:{body}@host.example/"),
    _token(_ALNUM + "._~+/-", 20).map("Bearer ".__add__),
    _token(_ALNUM, 16).map(lambda body: f'"apiKey": "{body}"'),
)
_SECRET_GLUE: Final[tuple[str, ...]] = (
    " ",
    "",
    "\n",
    "://",
    "@",
    "=",
    ":",
    '"',
    "'",
    "x://",
    "a://u:",
    "token=",
    "<",
    ">",
    "\u200b",
    "\u3000",
    "[",
    "]",
)
secret_text = st.lists(
    st.one_of(
        secret_shapes,
        st.sampled_from(_SECRET_GLUE),
        st.sampled_from(NASTY_CHARACTERS),
        st.text(ANY_CHARACTER, max_size=6),
    ),
    max_size=8,
).map("".join)

# ---------------------------------------------------------------- JSONL apply streams

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(),
    st.text(ANY_CHARACTER, max_size=20),
    st.sampled_from(HOSTILE_VALUES),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(ANY_CHARACTER, max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
_OP_TEXT_VALUES = st.one_of(
    st.sampled_from(["A claim.", "The pool ceiling is 64. Measured in staging.", "x", " ", "", "```\ncode\n```"]),
    nasty_text,
    hostile_fragment,
    secret_text,
)


_INSTANTS = st.sampled_from(["2026-07-01", "2026-07-01T12:00:00Z", "2026-02-30", "2026-07-01T25:00:00Z", "tomorrow"])
# For each known field, values of its own JSON type (hostile inside that type), so ops get past the shape
# check and reach the vocabulary checks, the notary and the renderer.
_TYPED_VALUES: Final[dict[str, st.SearchStrategy[Any]]] = {
    "title": st.one_of(st.just("Pool ceiling"), nasty_text, secret_text),
    "type": st.one_of(st.sampled_from(MEMORY_TYPES), st.sampled_from(HOSTILE_VALUES), secret_shapes),
    "body": _OP_TEXT_VALUES,
    "article_html": st.one_of(hostile_fragment, st.just("<p><mark>A claim.</mark></p>"), _OP_TEXT_VALUES),
    "path": raw_paths(),
    "workspace": st.one_of(st.sampled_from(["checkout-api", "../x", ".git", ""]), nasty_text),
    "status": st.one_of(st.sampled_from(TASK_STATUSES), st.sampled_from(HOSTILE_VALUES), secret_shapes),
    "due": st.one_of(_INSTANTS, secret_shapes),
    "event_at": st.one_of(_INSTANTS, secret_shapes),
    "importance": st.one_of(st.integers(-5, 15), st.floats(), st.sampled_from(HOSTILE_VALUES)),
    "confidence": st.one_of(st.floats(), st.integers(-2, 2), st.sampled_from(HOSTILE_VALUES)),
}


@st.composite
def op_objects(draw: st.DrawFn) -> dict[str, Any]:
    """A valid `write` op, then some fields set to hostile values of their own type, dropped, retyped to
    any JSON value, or added (unknown keys, secret-shaped keys)."""
    op: dict[str, Any] = {
        "op": "write",
        "title": draw(st.sampled_from(["Pool ceiling", "Rotate the deploy key", "x"])),
        "type": draw(st.sampled_from(MEMORY_TYPES)),
        draw(st.sampled_from(["body", "article_html"])): draw(_TYPED_VALUES["article_html"]),
    }
    for _ in range(draw(st.integers(0, 4))):
        action = draw(st.sampled_from(["typed", "typed", "typed", "drop", "retype", "unknown"]))
        if action == "drop" and len(op) > 1:
            del op[draw(st.sampled_from(sorted(op)))]
        elif action == "retype":
            op[draw(st.sampled_from(OP_FIELDS))] = draw(json_values)
        elif action == "unknown":
            op[draw(st.one_of(st.text(ANY_CHARACTER, max_size=8), secret_shapes))] = draw(json_scalars)
        else:
            key = draw(st.sampled_from(OP_FIELDS[1:]))  # `op` has one value; retyping covers the rest
            if key in ("tag", "tags", "entity", "entities"):
                texts = st.one_of(st.sampled_from(["db", "service:db", "x:", ":x", ""]), nasty_text, secret_text)
                op[key] = draw(st.one_of(texts, st.lists(texts, max_size=3)))
            elif key in ("strict_path", "redact", "strip_invisible"):
                op[key] = draw(st.booleans())
            else:
                op[key] = draw(_TYPED_VALUES.get(key, _OP_TEXT_VALUES))
    return op


# Raw JSON spellings `json.dumps` never writes: huge or odd numbers, deep nesting, duplicate keys.
RAW_NUMBERS: Final[tuple[str, ...]] = (
    "1" + "0" * 400,
    "-" + "9" * 400,
    "1" * 5000,
    "1e400",
    "-1e400",
    "1e-400",
    "NaN",
    "Infinity",
    "-Infinity",
    "-0",
    "7.0",
    "7.5",
    "1E1",
    "0.9999999999999999999999",
    "01",
    "1.",
    ".5",
    "+1",
    "0x7",
)


def _deep_json(depth: int, opener: str) -> str:
    closer = "]" if opener == "[" else "}"
    inner = opener + '"a":' if opener == "{" else opener
    return inner * depth + "1" + closer * depth


raw_op_lines = st.one_of(
    st.builds(
        lambda key, number: (
            '{"op":"write","title":"t","type":"semantic","body":"A claim.","' + key + '":' + number + "}"
        ),
        st.sampled_from(["importance", "confidence", "title", "tags", "redact", "unknown"]),
        st.sampled_from(RAW_NUMBERS),
    ),
    st.builds(
        lambda depth, opener, key: (
            '{"op":"write","title":"t","type":"semantic","body":"A claim.","'
            + key
            + '":'
            + _deep_json(depth, opener)
            + "}"
        ),
        st.integers(1, 3000),
        st.sampled_from(["[", "{"]),
        st.sampled_from(["tags", "importance", "unknown", "body"]),
    ),
    st.builds(lambda depth: "[" * depth, st.integers(1, 3000)),
    st.just('{"op":"write","op":"write","title":"t","title":7,"type":"semantic","body":"A claim."}'),
    st.just('{"op":"write","title":"t","type":"semantic","body":"A claim.","title":null}'),
    st.just('{"op":"write","title":"\\ud800","type":"semantic","body":"A claim."}'),
    st.just('{"op":"write","title":"t","type":"semantic","body":"\\udcff\\u0000\\u202e."}'),
    st.just("\ufeff" + '{"op":"write","title":"t","type":"semantic","body":"A claim."}'),
)


def _encoded(value: object, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only, allow_nan=True)


op_lines = st.one_of(
    st.builds(_encoded, op_objects(), st.booleans()),
    st.builds(_encoded, op_objects(), st.booleans()),
    st.builds(_encoded, op_objects(), st.booleans()),
    st.builds(_encoded, op_objects(), st.booleans()),
    st.builds(_encoded, json_values, st.booleans()),
    raw_op_lines,
    any_text.filter(lambda text: "\n" not in text),
    tag_soup,
)


@st.composite
def apply_streams(draw: st.DrawFn) -> str:
    """One to five lines (some blank, some mutated after encoding), joined as a stream."""
    lines = draw(
        st.lists(st.one_of(op_lines, st.sampled_from(["", " ", "\t", "\r", "\u3000", "\x1c"])), min_size=1, max_size=5)
    )
    if draw(st.booleans()):
        index = draw(st.integers(0, len(lines) - 1))
        line = lines[index]
        at = draw(st.integers(0, len(line)))
        lines[index] = (
            line[:at] + draw(st.one_of(st.sampled_from(NASTY_CHARACTERS), decoded_bytes, st.just(""))) + line[at:]
        )
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines)


# ---------------------------------------------------------------- the committed corpus

CORPUS_DIR: Final = Path(__file__).parent / "corpus"


def corpus_value(entry: dict[str, Any]) -> str:
    """An entry's input: `text`, `pieces` ([piece, times] pairs, for inputs too large to store flat),
    or `bytes_b64` decoded as `decoding` says (bytes a door turned into text)."""
    if "text" in entry:
        return str(entry["text"])
    if "pieces" in entry:
        return "".join(str(piece) * int(times) for piece, times in entry["pieces"])
    return decode_bytes(base64.b64decode(entry["bytes_b64"]), str(entry["decoding"]))


def corpus(name: str) -> list[Any]:
    """The entries of `corpus/<name>.json` as pytest params (id, then the entry). An entry with
    `known_bug` is a strict xfail: it documents an unfixed defect and turns red once that is fixed."""
    entries = json.loads((CORPUS_DIR / f"{name}.json").read_text(encoding="utf-8"))
    params = []
    for entry in entries:
        marks = [pytest.mark.xfail(strict=True, reason=entry["known_bug"])] if "known_bug" in entry else []
        params.append(pytest.param(entry, id=entry["id"], marks=marks))
    return params
