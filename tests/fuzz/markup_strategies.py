"""Hostile markup for the fuzz suite: a vocabulary of dangerous and parser-confusing constructs, deep
nesting, huge attributes, and near-valid memory files and articles mutated from the reference examples.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from hypothesis import strategies as st

from tests.fuzz.strategies import ANY_CHARACTER, NASTY_CHARACTERS, any_text, nasty_text
from tests.html.memory_file_examples import FILE_A, FILE_B_NEW, FILE_B_OLD, FILE_C

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
