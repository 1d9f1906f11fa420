"""The warm-up a pass does while DuckDB opens (`warm_pass_code`) is optional work: it builds the shipped
model's token table when it can, and whatever goes wrong in it is left to the pass, never raised."""

from __future__ import annotations

import pytest

from memhtml.index.embedders import ShippedStaticEmbedder
from memhtml.operations import embedding
from memhtml.operations.indexing import warm_pass_code


def test_the_warm_up_builds_the_token_table_a_document_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding, "_loaded", {})
    monkeypatch.setenv("MEMHTML_EMBED", "on")
    loaded = embedding.configured_embedder()
    assert isinstance(loaded, ShippedStaticEmbedder)
    ids = loaded._model._vocabulary._ids
    assert ids._table is None  # loading reads the vocabulary's text only
    warm_pass_code(embed=True)
    assert ids._table is not None and len(ids._table) == ids.size
    before = loaded.embed_documents(["The gateway retry budget is 3 attempts."])
    assert loaded.embed_documents(["The gateway retry budget is 3 attempts."]) == before


@pytest.mark.parametrize("failure", [ValueError("the vocabulary lists a token twice"), OSError("unreadable")])
def test_a_failing_warm_up_is_left_to_the_pass(monkeypatch: pytest.MonkeyPatch, failure: Exception) -> None:
    def broken() -> None:
        raise failure

    monkeypatch.setattr(embedding, "configured_embedder", broken)
    warm_pass_code(embed=True)  # returns; the pass meets the failure again and reports it


def test_no_warm_up_when_the_pass_embeds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(embedding, "configured_embedder", lambda: calls.append("loaded"))
    warm_pass_code(embed=False)
    assert calls == []
