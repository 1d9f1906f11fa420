"""Content hash and canonical text: the reference's golden vectors plus hashes observed from the original CLI."""

from __future__ import annotations

import pytest

from memhtml.html.hashing import canonical_text, content_hash
from memhtml.html.serialize import canonical_article
from memhtml.html.template import finish_article

# Reference §3.2: (article inner HTML as submitted, canonical text, sha256 hex, canonical re-serialization).
GOLDEN_VECTORS = [
    (
        "<p><mark>x &amp; y</mark> a<b>b</b>c</p>",
        "x & y a b c",
        "702c2bfd0da1cd3bdd9fb5111731e16ea9bb95e03dc4cf46fcda8a85d828ef4f",
        "<p><mark>x &amp; y</mark> a<b>b</b>c</p>",
    ),
    (
        "<p><mark>Claim.</mark></p><figure><pre>  indented\n\tline  </pre></figure>",
        "Claim.   indented\n\tline  ",
        "af3e5da2102cd93a010fe8e73b6057c14f08f87cc27c6266d1844c86fc9657ab",
        "<p><mark>Claim.</mark></p><figure><pre>  indented\n\tline  </pre></figure>",
    ),
    (
        "<p><mark>Claim.</mark></p><figure><pre>indented\n\tline</pre></figure>",
        "Claim. indented\n\tline",
        "aa3c67e75322c1e5433e4bf30671c1687b35a72b1d8029dd5d93751a42b3d1c7",
        "<p><mark>Claim.</mark></p><figure><pre>indented\n\tline</pre></figure>",
    ),
    (
        "<p><mark>a&nbsp;b</mark></p>",
        "a\u00a0b",
        "9507017c6d887511a5a6ac28ea7e3a438882576e1bd76fe3df27a336f49c263b",
        "<p><mark>a&nbsp;b</mark></p>",
    ),
    (
        "<p><mark>a<!-- c -->b</mark></p>",
        "ab",
        "fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603",
        "<p><mark>a<!-- c -->b</mark></p>",
    ),
    (
        "<ul><li><mark>one</mark></li><li>two</li></ul>",
        "one two",
        "8ab63e29a4ba14e4e1688f9c15e5af90895421358c945b0431f85d66977bd3d2",
        "<ul><li><mark>one</mark></li><li>two</li></ul>",
    ),
    (
        "<p><mark>Pre nl.</mark></p><pre>\n\nx</pre>",
        "Pre nl. \nx",
        "d17331e17e6de8e90bb330ba381c5a3695696061ade82328d5803aad04c31386",
        "<p><mark>Pre nl.</mark></p><pre>\n\nx</pre>",
    ),
    (
        "<p><mark>a<br>b</mark></p>",
        "a b",
        "c8687a08aa5d6ed2044328fa6a697ab8e96dc34291e8c2034ae8c38e6fcc6d65",
        "<p><mark>a<br>b</mark></p>",
    ),
    (
        "<p><mark>Tbl.</mark></p><table><tr><td>1</td><td>2</td></tr></table>",
        "Tbl. 1 2",
        "4eb1b9aa0d9792bfd429478f94311b0b5a87dde93c99ec035cf686454e7cce3d",
        "<p><mark>Tbl.</mark></p><table><tbody><tr><td>1</td><td>2</td></tr></tbody></table>",
    ),
    (
        "<p><mark>Code.</mark> <code>  a   b  </code></p>",
        "Code. a b",
        "caa41f2ac5b76f854b70a850008b3d4854e916640417879cd1100dbe1ead10d3",
        "<p><mark>Code.</mark> <code>  a   b  </code></p>",
    ),
    (
        "<p><mark>Dl.</mark></p><dl><dt>K</dt><dd>V1</dd><dd>V2</dd></dl>",
        "Dl. K V1 V2",
        "f527e8958c6c072cbf0f9afd9bf6d538b9048d6268cdf3eae630b6521a56879b",
        "<p><mark>Dl.</mark></p><dl><dt>K</dt><dd>V1</dd><dd>V2</dd></dl>",
    ),
]


def _wrap_in_file(inner: str) -> str:
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>T</title>\n</head>\n'
        f"<body>\n<article>\n{inner}\n</article>\n</body>\n</html>\n"
    )


@pytest.mark.parametrize(("inner", "text", "digest", "canonical"), GOLDEN_VECTORS)
def test_golden_vector_hash_and_canonical_text(inner: str, text: str, digest: str, canonical: str) -> None:
    assert canonical_text(inner) == text
    assert content_hash(inner) == "sha256:" + digest


@pytest.mark.parametrize(("inner", "text", "digest", "canonical"), GOLDEN_VECTORS)
def test_golden_vector_reserialization(inner: str, text: str, digest: str, canonical: str) -> None:
    assert canonical_article(inner) == canonical
    assert finish_article(inner) == (canonical, "sha256:" + digest)


@pytest.mark.parametrize(("inner", "text", "digest", "canonical"), GOLDEN_VECTORS)
def test_whole_file_and_fragment_hash_agree(inner: str, text: str, digest: str, canonical: str) -> None:
    whole_file = _wrap_in_file(canonical_article(inner))
    assert canonical_text(whole_file) == text
    assert content_hash(whole_file) == "sha256:" + digest


def test_pretty_printed_list_dedupes_onto_compact_one() -> None:
    pretty = "<ul>\n  <li><mark>one</mark></li>\n  <li>two</li>\n</ul>\n"
    assert content_hash(pretty) == content_hash("<ul><li><mark>one</mark></li><li>two</li></ul>")
    # The bytes differ (whitespace text is kept), only the hash is shared.
    assert canonical_article(pretty) == "<ul>\n  <li><mark>one</mark></li>\n  <li>two</li>\n</ul>"


def test_pre_leading_newline_round_trips_without_loss() -> None:
    once = canonical_article("<p><mark>Pre nl.</mark></p><pre>\n\nx</pre>")
    assert once == "<p><mark>Pre nl.</mark></p><pre>\n\nx</pre>"
    assert canonical_article(once) == once
    assert canonical_article(_wrap_in_file(once).split("<article>\n")[1].split("\n</article>")[0]) == once


def test_non_inline_elements_are_word_boundaries() -> None:
    # P5: unknown b/u/i/br break words; inline vocabulary elements do not.
    assert canonical_text("<p>a<b>b</b>c<u>d</u>e<i>f</i>g</p>") == "a b c d e f g"
    assert canonical_text("<p>a<em>b</em>c<span>d</span>e<code>f</code>g</p>") == "abcdefg"


def test_whitespace_rules() -> None:
    # P6: ASCII-only collapse, NBSP and U+3000 are content, <pre> verbatim, only collapsible edges trimmed.
    assert canonical_text("<p>  a \t\n b  </p>") == "a b"
    assert canonical_text("<p>a\u00a0\u00a0b</p>") == "a\u00a0\u00a0b"
    assert canonical_text("<pre>  lead</pre>") != canonical_text("<pre>lead</pre>")
    assert canonical_text("<p>\u3000x</p>") == "\u3000x"


def test_whole_file_uses_the_first_article_and_ignores_the_head() -> None:
    file_text = _wrap_in_file("<p><mark>x</mark></p>")
    edited = file_text.replace("<title>T</title>", '<title>Other</title>\n<meta name="memhtml-tag" content="t">')
    assert content_hash(edited) == content_hash(file_text) == content_hash("<p><mark>x</mark></p>")
    assert canonical_text("<!doctype html><html><body><p>no article here</p></body></html>") == ("no article here"), (
        "no `<article` token means bare markup"
    )
    assert canonical_text("<html><body><!-- <article> --><p>x</p></body></html>") == ""


# Hashes and bytes observed by writing these articles with the installed original CLI (0.15.1).
OBSERVED_WRITES = [
    (
        "<p><mark>C</mark>b<template>zzz</template>c</p>",
        "<p><mark>C</mark>b<template>zzz</template>c</p>",
        "9a3e40b52c66d82ae0f1b45aa626f4b13d504f72907c394114f7354002876473",
    ),
    (
        "<p><mark>C</mark></p><pre>  a\n\tb  </pre>",
        "<p><mark>C</mark></p><pre>  a\n\tb  </pre>",
        "589d50d7ff5c9dfc11fa1124072b573bee73bb0885d5666b26f0ecfdaf40f1ea",
    ),
    (
        "<p><mark>C</mark></p><listing>  a\n\tb  </listing>",
        "<p><mark>C</mark></p><listing>  a\n\tb  </listing>",
        "fc51a358f17751db8c2f64f2c37823b4b88877427eb37f24d1df77eda9e499a5",
    ),
    (
        "<p><mark>C</mark></p><pre>  a<b> x  y </b><code>  q  </code>  </pre>",
        "<p><mark>C</mark></p><pre>  a<b> x  y </b><code>  q  </code>  </pre>",
        "da27bed02150dbf4294a3f791e45d09fdd86c72200eb72d811cdca9d3eb31e84",
    ),
    (
        "<p><mark>C\u00a0</mark>\u00a0</p>",
        "<p><mark>C&nbsp;</mark>&nbsp;</p>",
        "83edac35258a71165493b3bda5d5c86e132bf27a2c903565edb6a96b0bb0a3ad",
    ),
    (
        "<p><mark>C</mark></p><p>a\r\nb\rc\x0cd\x0be</p>",
        "<p><mark>C</mark></p><p>a\nb\nc\x0cd\x0be</p>",
        "32b91ed2b8024dad351a6a665d51a79a99dbf7e9f956de882d3fbbbb570d36f8",
    ),
    (
        "<p><mark>C\u3000</mark> \u3000x</p>",
        "<p><mark>C\u3000</mark> \u3000x</p>",
        "bd0ea748d1c3f941dcfb7a2f6bfc996df4a93ffee631ddf51027f7d5bb72a165",
    ),
    (
        # JS trim strips U+3000/U+2028/U+FEFF at the article's edges before hashing.
        "\u3000\u2028 <p><mark>ideo</mark></p>\ufeff",
        "<p><mark>ideo</mark></p>",
        "15c2c15ec8faf2eb483b4836c4de8ae3697128a7e399ab7613babfe939e48648",
    ),
    (
        "<p><mark>pi probe</mark>a<?pi x?>b<!x y>c<!-- a -- b --!>d</p>",
        "<p><mark>pi probe</mark>a<!--?pi x?-->b<!--x y-->c<!-- a -- b -->d</p>",
        "d4522efb8efbf17449cdfe5c41afe463d899fa999b3256e2c29ed729697ef1f2",
    ),
]


@pytest.mark.parametrize(("submitted", "on_disk", "digest"), OBSERVED_WRITES)
def test_matches_original_cli_writes(submitted: str, on_disk: str, digest: str) -> None:
    assert finish_article(submitted) == (on_disk, "sha256:" + digest)
    assert content_hash(_wrap_in_file(on_disk)) == "sha256:" + digest


def test_textarea_collapses_like_listing() -> None:
    # Observed: the original deduped a <textarea> article onto the identical <listing> one.
    textarea = "<p><mark>C</mark></p><textarea>  a\n\tb  </textarea>"
    listing = "<p><mark>C</mark></p><listing>  a\n\tb  </listing>"
    assert content_hash(textarea) == content_hash(listing)
