"""The single-parse render of prose must give exactly the bytes, hash and parse of the canonical
two-parse render, for any text (the byte contract with the original rests on the canonical one)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.contracts.errors import InvalidMemory
from memhtml.operations.write import WriteRequest, render_checked

NOW = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC)
# Text that stresses escaping and the parser's rewrites: markup characters, CR/NUL, NBSP, Unicode
# spaces at the edges, backticks that may form fences, and ordinary words.
PIECES = st.sampled_from(
    ["a", "word", " ", "\n", "\n\n", "<", ">", "&", "&amp;", '"', "\r", "\r\n", "\0", "\u00a0", "\u3000",
     "\u2028", "```", "```py\nx = 1\n```", "`", ".", "!", "?", "é", "漢字", "\t", "<mark>", "</p>"]
)  # fmt: skip
TEXT = st.lists(PIECES, max_size=12).map("".join)


def outcome(request: WriteRequest, *, single_parse: bool) -> tuple[str, ...]:
    try:
        placed, parsed = render_checked(request, NOW, single_parse=single_parse)
    except InvalidMemory as refusal:
        return ("refused", refusal.message)
    return ("placed", placed.file_text, placed.content_hash, parsed.content_hash, str(parsed.stated_content_hash),
            repr(parsed.metas), parsed.article_inner_html, parsed.gist)  # fmt: skip


@settings(max_examples=300)
@given(claim=TEXT, bodies=st.lists(TEXT, max_size=3), event=st.sampled_from([None, "2025-07-01"]))
def test_single_parse_prose_equals_the_canonical_render(claim: str, bodies: list[str], event: str | None) -> None:
    request = WriteRequest(title="T", memory_type="semantic", claim=claim, bodies=bodies, event_at=event)
    assert outcome(request, single_parse=True) == outcome(request, single_parse=False)


def test_the_single_parse_path_is_taken_for_plain_prose(monkeypatch: pytest.MonkeyPatch) -> None:
    from memhtml.operations import write as write_module

    def no_canonical_render(markup: str) -> tuple[str, str]:
        raise AssertionError("plain prose took the two-parse render")

    monkeypatch.setattr(write_module, "finish_article", no_canonical_render)
    request = WriteRequest(title="T", memory_type="semantic", claim="A fact.", bodies=["More.", "```sh\nls\n```"])
    placed, parsed = render_checked(request, NOW)
    assert "sha256:" + "0" * 64 not in placed.file_text
    assert parsed.stated_content_hash == parsed.content_hash == placed.content_hash
