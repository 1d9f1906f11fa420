"""Byte-splice head edits: META_ORDER insertion, idempotent adds, escaping, and an untouched article."""

from __future__ import annotations

import pytest

from memhtml.html.document import parse_memory
from memhtml.html.headedit import add_link, add_meta, remove_link, remove_meta, scan_head, set_meta
from memhtml.html.validate import check_memory
from tests.html.memory_file_examples import FILE_A, FILE_C


def _article_bytes(text: str) -> str:
    return text[text.index("<body>") :]


def test_task_done_stamps_match_the_reference_diff() -> None:
    # Reference §1.6 (c): archived lands before task-status (its META_ORDER slot), one line per change.
    edited = set_meta(FILE_C, "memhtml-status", "archived")
    edited = set_meta(edited, "memhtml-updated", "2026-11-30T04:22:00Z")
    edited = set_meta(edited, "memhtml-archived", "2026-11-30T04:22:00Z")
    edited = set_meta(edited, "memhtml-task-status", "done")
    expected = (
        FILE_C.replace('content="active"', 'content="archived"')
        .replace("2026-11-30T04:21:53Z", "2026-11-30T04:22:00Z")
        .replace(
            '<meta name="memhtml-task-status" content="blocked">',
            '<meta name="memhtml-archived" content="2026-11-30T04:22:00Z">\n'
            '<meta name="memhtml-task-status" content="done">',
        )
    )
    assert edited == expected
    assert check_memory(edited).ok


def test_set_meta_replaces_in_place_and_is_a_no_op_when_unchanged() -> None:
    assert set_meta(FILE_A, "memhtml-importance", "8") is FILE_A
    edited = set_meta(FILE_A, "memhtml-importance", "3")
    assert edited == FILE_A.replace('"memhtml-importance" content="8"', '"memhtml-importance" content="3"')


def test_set_meta_ignores_names_outside_the_vocabulary() -> None:
    assert set_meta(FILE_A, "memhtml-bogus", "x") is FILE_A
    assert set_meta(FILE_A, "description", "x") is FILE_A


@pytest.mark.parametrize(
    ("name", "after"),
    [
        ("memhtml-author", '<meta name="memhtml-content-hash"'),  # between content-hash and session
        ("memhtml-valid-from", '<meta name="memhtml-turn"'),  # after the last earlier scalar
        ("memhtml-due", '<meta name="memhtml-turn"'),
    ],
)
def test_set_meta_inserts_at_its_meta_order_slot(name: str, after: str) -> None:
    edited = set_meta(FILE_A, name, "v")
    lines = edited.splitlines()
    new_index = lines.index(f'<meta name="{name}" content="v">')
    assert lines[new_index - 1].startswith(after)
    assert [line for line in lines if line != f'<meta name="{name}" content="v">'] == FILE_A.splitlines()


def test_set_meta_without_any_memhtml_meta_goes_before_head_end() -> None:
    text = "<!doctype html>\n<html>\n<head>\n<title>t</title>\n</head>\n<body><article></article></body>\n</html>\n"
    assert set_meta(text, "memhtml-type", "semantic") == text.replace(
        "</head>", '<meta name="memhtml-type" content="semantic">\n</head>'
    )


def test_add_meta_appends_after_the_last_same_name_and_is_idempotent() -> None:
    edited = add_meta(FILE_A, "memhtml-tag", "infra")
    assert '<meta name="memhtml-tag" content="oncall">\n<meta name="memhtml-tag" content="infra">\n<link' in edited
    assert add_meta(edited, "memhtml-tag", "infra") is edited
    first_alias = add_meta(FILE_A, "memhtml-alias", "Sanj")
    assert (
        '<meta name="memhtml-tag" content="oncall">\n<meta name="memhtml-alias" content="Sanj">\n<link' in first_alias
    )
    first_entity = add_meta(FILE_C, "memhtml-entity", "service:deploy")
    assert '<meta name="memhtml-due" content="2026-12-01">\n<meta name="memhtml-entity" content="service:deploy">' in (
        first_entity
    )
    with pytest.raises(ValueError, match="not repeatable"):
        add_meta(FILE_A, "memhtml-type", "semantic")


def test_add_link_placement_and_idempotence() -> None:
    after_link = add_link(FILE_A, "memhtml-supports", "/a.html")
    assert (
        '<link rel="memhtml-relates-to" href="/resources/people/sanju-owns-the-checkout-api.html">\n'
        '<link rel="memhtml-supports" href="/a.html">\n</head>'
    ) in after_link
    assert add_link(after_link, "memhtml-supports", "/a.html") is after_link
    no_links = remove_link(FILE_A, "memhtml-relates-to")
    assert '<meta name="memhtml-tag" content="oncall">\n</head>' in no_links
    after_meta = add_link(no_links, "memhtml-blocks", "/t.html")
    assert (
        '<meta name="memhtml-tag" content="oncall">\n<link rel="memhtml-blocks" href="/t.html">\n</head>' in after_meta
    )
    bare = "<html><head>\n<title>t</title>\n</head><body></body></html>"
    assert add_link(bare, "memhtml-supports", "/x.html") == bare.replace(
        "</head>", '<link rel="memhtml-supports" href="/x.html">\n</head>'
    )


def test_values_are_escaped_onto_one_line() -> None:
    edited = set_meta(FILE_A, "memhtml-session", 'line1\nline2\r"&\u00a0')
    assert '<meta name="memhtml-session" content="line1&#10;line2&#13;&quot;&amp;&nbsp;">' in edited
    assert len(edited.splitlines()) == len(FILE_A.splitlines())
    assert parse_memory(edited).session == 'line1\nline2\r"&\u00a0'
    # The scanner decodes what it wrote, so setting the same value again is a no-op.
    assert set_meta(edited, "memhtml-session", 'line1\nline2\r"&\u00a0') is edited


def test_remove_meta_and_link() -> None:
    no_tags = remove_meta(FILE_A, "memhtml-tag")
    assert "memhtml-tag" not in no_tags
    assert len(no_tags.splitlines()) == len(FILE_A.splitlines()) - 2
    one_entity = remove_meta(FILE_A, "memhtml-entity", "person:sanju")
    assert parse_memory(one_entity).entities == ["service:checkout-api"]
    assert remove_link(FILE_A, "memhtml-relates-to", "/elsewhere.html") == FILE_A


def test_edits_never_touch_the_article() -> None:
    edited = add_link(
        add_meta(set_meta(FILE_A, "memhtml-updated", "2027-01-01T00:00:00Z"), "memhtml-tag", "x"),
        "memhtml-supports",
        "/y.html",
    )
    assert _article_bytes(edited) == _article_bytes(FILE_A)


def test_one_line_head_is_edited_without_swallowing_the_file() -> None:
    # The reference appends after the whole (single) line, i.e. after </html>, where readers never see it.
    one_line = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>One line</title>'
        '<meta name="memhtml-type" content="semantic"><meta name="memhtml-status" content="active">'
        '<meta name="memhtml-created" content="2026-01-01T00:00:00Z"><meta name="memhtml-updated" content="2026-01-01T00:00:00Z">'
        '<meta name="memhtml-tag" content="x"></head><body><article><p><mark>One line head file.</mark></p></article></body></html>\n'
    )
    linked = add_link(one_line, "memhtml-relates-to", "/resources/x/two.html")
    assert parse_memory(linked).links == [("relates_to", "/resources/x/two.html")]
    stamped = set_meta(linked, "memhtml-archived", "2026-02-01")
    assert parse_memory(stamped).archived_at == "2026-02-01"
    removed = remove_meta(stamped, "memhtml-tag")
    assert parse_memory(removed).tags == []
    assert check_memory(removed).ok
    assert "<article><p><mark>One line head file.</mark></p></article>" in removed


def test_crlf_and_indented_heads_keep_their_style() -> None:
    crlf = FILE_C.replace("\n", "\r\n")
    edited = set_meta(crlf, "memhtml-archived", "2026-12-02")
    assert '<meta name="memhtml-archived" content="2026-12-02">\r\n<meta name="memhtml-task-status"' in edited
    indented = FILE_C.replace("\n<meta", "\n  <meta").replace("\n<link", "\n  <link")
    edited = add_link(set_meta(indented, "memhtml-archived", "2026-12-02"), "memhtml-blocks", "/z.html")
    assert '\n  <meta name="memhtml-archived" content="2026-12-02">\n  <meta name="memhtml-task-status"' in edited
    assert '\n  <link rel="memhtml-blocks" href="/z.html">\n</head>' in edited


def test_scanner_ignores_look_alikes() -> None:
    tricky = FILE_C.replace(
        "<title>Rotate the deploy key</title>",
        '<title>a <meta name="memhtml-tag" content="t"></title>\n<!-- <meta name="memhtml-tag" content="c"> -->',
    ).replace("<p><mark>", '<p><meta name="memhtml-tag" content="in-body"><mark>')
    names = [tag.key for tag in scan_head(tricky).tags]
    assert "memhtml-tag" not in names
    assert names[0] == "memhtml-type"


def test_archive_stamps_on_a_hand_edited_head_match_the_original() -> None:
    # Observed with `memhtml archive` on the original: the span is replaced in canonical form, in place,
    # keeping the line's indent and trailing comment; the new line goes to its META_ORDER slot.
    hand_edited = (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Reordered</title>\n'
        '<meta name="memhtml-type" content="semantic">\n  <meta content="active"   name="memhtml-status"><!-- keep -->\n'
        '<meta name="memhtml-created" content="2026-01-01T00:00:00Z">\n<meta name="memhtml-updated" content="2026-01-01T00:00:00Z">\n'
        '<meta name="memhtml-tag" content="x">\n</head>\n<body>\n<article>\n<p><mark>Reordered attrs file.</mark></p>\n'
        "</article>\n</body>\n</html>\n"
    )
    stamped = set_meta(hand_edited, "memhtml-status", "archived")
    stamped = set_meta(stamped, "memhtml-updated", "2026-11-30T06:18:28Z")
    stamped = set_meta(stamped, "memhtml-archived", "2026-11-30T06:18:28Z")
    assert stamped == (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Reordered</title>\n'
        '<meta name="memhtml-type" content="semantic">\n  <meta name="memhtml-status" content="archived"><!-- keep -->\n'
        '<meta name="memhtml-created" content="2026-01-01T00:00:00Z">\n<meta name="memhtml-updated" content="2026-11-30T06:18:28Z">\n'
        '<meta name="memhtml-archived" content="2026-11-30T06:18:28Z">\n<meta name="memhtml-tag" content="x">\n</head>\n'
        "<body>\n<article>\n<p><mark>Reordered attrs file.</mark></p>\n</article>\n</body>\n</html>\n"
    )


def test_a_restatement_compares_values_as_the_parser_reads_them() -> None:
    from memhtml.html.identity import Restatement, SemanticHead, restate
    from memhtml.html.prose import prose_article
    from memhtml.html.template import MemoryHead, finish_article, render_memory_file

    article, digest = finish_article(prose_article("A fact.", []))
    head = MemoryHead(
        title="t", memory_type="semantic", created="2026-01-01", updated="2026-01-01", content_hash=digest
    )
    text = render_memory_file(head, article).replace(
        '<meta name="memhtml-content-hash"',
        '<meta name="memhtml-confidence" content="0.9">\n<meta name="memhtml-content-hash"',
    )
    statement = Restatement("semantic", confidence=0.9)
    indexed = SemanticHead("semantic", 0.9, None, None, frozenset(), frozenset())
    # The file's "0.9" already says 0.90: both the index fast path and the file agree it is unchanged.
    assert indexed.covers(statement)
    assert restate(text, statement, "2026-02-02").changed == ()
    assert restate(text, Restatement("semantic", confidence=0.8), "2026-02-02").changed == ("confidence",)
