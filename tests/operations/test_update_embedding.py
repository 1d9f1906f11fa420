"""An `index update` that embeds one short memory tokenizes it by searching the shipped vocabulary's text
and never builds the whole token table (37M instructions, ≈9 ms of a fresh process, which a 2-core
machine takes from the update itself); the vector it stores is the one the batch path gives."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from memhtml.index.database import open_database
from memhtml.index.embedders import ShippedStaticEmbedder
from memhtml.index.static_embedder import load_static_embedder
from memhtml.operations import embedding
from memhtml.operations.indexing import update_index
from tests.conftest import git, run_cli

CLAIM = "The token expiry of auth-gateway is 60 minutes."
BODY = "This was confirmed against the production dashboards. Source: CHG-base-2691."


def test_an_update_after_one_short_memory_embeds_it_without_the_token_table(
    store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The memory is rendered by a write into another store and committed here with plain git, as a
    # memory arriving by `git pull` would be: the update is the first to project and embed it.
    other = tmp_path / "other"
    assert run_cli("init", "--repo", str(other)).status == 0
    written = run_cli(
        "write", "--repo", str(other), "--title", "Token expiry", "--type", "semantic", "--claim", CLAIM, "--body", BODY
    )
    assert written.status == 0, written.stdout + written.stderr
    path = written.data["path"]
    (store_root / path).parent.mkdir(parents=True, exist_ok=True)
    (store_root / path).write_bytes((other / path).read_bytes())
    git(store_root, "add", "--", path)
    git(store_root, "commit", "-qm", "a memory from elsewhere")
    monkeypatch.setattr(embedding, "_loaded", {})
    monkeypatch.setenv("MEMHTML_EMBED", "on")
    report = update_index(store_root)
    assert report["embeddingsWritten"] == 1, report
    loaded = embedding.configured_embedder()
    assert isinstance(loaded, ShippedStaticEmbedder)
    assert loaded._model._vocabulary._ids._table is None
    with open_database(store_root, read_only=True) as database:
        (stored,) = database.rows("SELECT vector FROM chunk_vectors")
        body_text = database.value("SELECT body_text FROM files")
    expected = [float(value) for value in load_static_embedder().embed([body_text])[0]]
    cosine = math.fsum(a * b for a, b in zip(stored[0], expected, strict=True))
    assert cosine > 0.9999
    assert git(store_root, "status", "--porcelain") == ""
