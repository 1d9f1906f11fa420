"""Vectors are keyed by content: a rename, an archive move, a head-only edit and a rebuild embed nothing
new; an edited body embeds exactly its new text; a deleted memory's vectors are pruned.

The operations run in this process with the embedder the process caches wrapped in a counter, so every
text handed to the model is seen. Vector rows are counted straight from DuckDB.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

from memhtml.domain.chunking import chunk_text
from memhtml.index.database import database_paths, open_database
from memhtml.index.embedders import HASH_SPACE, HashEmbedder, VectorRows
from memhtml.index.vectors import pending_texts
from memhtml.operations import embedding
from memhtml.operations.indexing import index_status, rebuild_index, update_index
from memhtml.operations.init import init
from memhtml.operations.lifecycle import archive
from memhtml.operations.write import WriteRequest, write
from tests.conftest import git
from tests.index.test_search import commit_files, memory_file


class CountingEmbedder:
    """The hash embedder, recording every text it is asked to embed."""

    def __init__(self) -> None:
        self.inner = HashEmbedder()
        self.documents: list[str] = []
        self.queries: list[str] = []

    @property
    def space(self) -> str:
        return self.inner.space

    @property
    def similarity_floor(self) -> float:
        return self.inner.similarity_floor

    def embed_documents(self, texts: Sequence[str]) -> VectorRows:
        self.documents.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self.inner.embed_query(text)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingEmbedder:
    embedder = CountingEmbedder()
    monkeypatch.setitem(embedding._loaded, "hash", embedder)
    return embedder


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    init(root)
    return root


def vector_rows(root: Path) -> list[tuple[str, int, int]]:
    """(content_hash, ordinal, vector length) of every stored vector, read from the index file directly."""
    connection = duckdb.connect(str(database_paths(root)[0]), read_only=True)
    try:
        rows = connection.sql("SELECT content_hash, ordinal, len(vector) FROM chunk_vectors").fetchall()
    finally:
        connection.close()
    return sorted((str(row[0]), int(row[1]), int(row[2])) for row in rows)


def file_hashes(root: Path) -> dict[str, str]:
    connection = duckdb.connect(str(database_paths(root)[0]), read_only=True)
    try:
        rows = connection.sql("SELECT path, content_hash FROM files").fetchall()
    finally:
        connection.close()
    return {str(row[0]): str(row[1]) for row in rows}


def note(title: str, claim: str, *bodies: str, **fields: Any) -> WriteRequest:
    return WriteRequest(title=title, memory_type="semantic", claim=claim, bodies=list(bodies), **fields)


TIMEOUT = note("API timeout", "The API timeout is 30 seconds.", "Set by the gateway.")
POOL = note("Pool ceiling", "The connection pool ceiling is 64.")
# A body of about 4000 characters in sentences: more than one chunk.
LONG_BODY = " ".join(
    f"Runbook step {number} restarts the worker pool and checks the queue depth." for number in range(55)
)
RUNBOOK = note("Runbook", "The outage runbook has many steps.", LONG_BODY)


@pytest.fixture
def corpus(store: Path, counting: CountingEmbedder) -> dict[str, str]:
    """Three memories written in-process, one of them longer than a chunk: path -> body text."""
    written: dict[str, str] = {}
    for request in (TIMEOUT, POOL, RUNBOOK):
        report = write(store, request)
        assert report.stored and report.outcome == "written"
        written[report.path] = " ".join([request.claim or "", *request.bodies])
    return written


def test_a_write_embeds_its_own_chunks_and_nothing_else(store: Path, counting: CountingEmbedder) -> None:
    first = write(store, TIMEOUT)
    assert counting.documents == ["The API timeout is 30 seconds. Set by the gateway."]
    second = write(store, RUNBOOK)
    runbook_chunks = chunk_text(f"{RUNBOOK.claim} {LONG_BODY}")
    assert len(runbook_chunks) == 3
    assert counting.documents[1:] == runbook_chunks
    assert vector_rows(store) == sorted(
        [(first.content_hash, 0, 1024)] + [(second.content_hash, ordinal, 1024) for ordinal in range(3)]
    )
    status = index_status(store)
    assert (status["embedModel"], status["chunks"], status["embeddings"]) == (HASH_SPACE, 4, 4)
    assert status["vectorCoverage"] == 1.0


def test_a_rename_embeds_nothing_new(store: Path, corpus: dict[str, str], counting: CountingEmbedder) -> None:
    before = vector_rows(store)
    assert len(before) == 5 and counting.documents  # the corpus went through the counter
    counting.documents.clear()
    old = "areas/inbox/api-timeout.html"
    assert old in corpus
    git(store, "mv", old, "areas/inbox/gateway-timeout.html")
    dirty = update_index(store)  # the rename is only staged: projected from the working tree
    assert dirty["embeddingsWritten"] == 0
    git(store, "commit", "-q", "-m", "rename a memory")
    committed = update_index(store)
    assert committed["embeddingsWritten"] == 0
    assert counting.documents == []
    assert vector_rows(store) == before
    hashes = file_hashes(store)
    assert old not in hashes
    # The renamed memory still has its vector, found through its content hash.
    assert (hashes["areas/inbox/gateway-timeout.html"], 0, 1024) in before


def test_an_archive_and_a_head_only_edit_embed_nothing_new(
    store: Path, corpus: dict[str, str], counting: CountingEmbedder
) -> None:
    before = vector_rows(store)
    counting.documents.clear()
    restated = write(store, note("Pool ceiling", "The connection pool ceiling is 64.", importance=9))
    assert restated.outcome == "updated"
    moved = archive(store, "areas/inbox/api-timeout.html", "replaced by the gateway setting")
    assert counting.documents == []
    assert vector_rows(store) == before
    assert file_hashes(store)[moved["archivePath"]] in {row[0] for row in before}


def test_a_rebuild_keeps_every_surviving_vector_and_embeds_only_the_missing(
    store: Path, corpus: dict[str, str], counting: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = vector_rows(store)
    counting.documents.clear()
    report = rebuild_index(store)
    assert report["embeddingsPreserved"] == len(before) == 5
    assert report["embeddingsWritten"] == 0
    assert counting.documents == []
    assert vector_rows(store) == before

    # A memory written with embeddings off has no vector: the next rebuild keeps the rest, embeds it.
    monkeypatch.setenv("MEMHTML_EMBED", "off")
    unembedded = write(store, note("Cache", "The cache holds 500 entries."))
    assert counting.documents == [] and vector_rows(store) == before
    monkeypatch.setenv("MEMHTML_EMBED", "hash")
    report = rebuild_index(store)
    assert report["embeddingsPreserved"] == len(before)
    assert report["embeddingsWritten"] == 1
    assert counting.documents == ["The cache holds 500 entries."]
    assert vector_rows(store) == sorted([*before, (unembedded.content_hash, 0, 1024)])


def test_an_edited_body_embeds_exactly_its_new_text_and_drops_the_old(
    store: Path, corpus: dict[str, str], counting: CountingEmbedder
) -> None:
    path = "areas/inbox/pool-ceiling.html"
    old_hash = file_hashes(store)[path]
    before = vector_rows(store)
    counting.documents.clear()
    commit_files(store, {path: memory_file("Pool ceiling", "The connection pool ceiling is 128.")}, "raise the pool")
    report = update_index(store)
    assert report["modified"] == 1 and report["embeddingsWritten"] == 1
    assert counting.documents == ["The connection pool ceiling is 128."]
    new_hash = file_hashes(store)[path]
    assert new_hash != old_hash
    after = vector_rows(store)
    assert [row for row in after if row[0] == old_hash] == []
    assert after == sorted([*(row for row in before if row[0] != old_hash), (new_hash, 0, 1024)])


def test_a_deleted_memory_loses_its_vectors(store: Path, corpus: dict[str, str], counting: CountingEmbedder) -> None:
    path = "areas/inbox/runbook.html"
    gone = file_hashes(store)[path]
    before = vector_rows(store)
    assert sum(1 for row in before if row[0] == gone) == 3
    counting.documents.clear()
    git(store, "rm", "-q", path)
    git(store, "commit", "-q", "-m", "drop the runbook")
    report = update_index(store)
    assert report["removed"] == 1 and report["embeddingsWritten"] == 0
    assert counting.documents == []
    assert vector_rows(store) == [row for row in before if row[0] != gone]
    status = index_status(store)
    assert (status["chunks"], status["embeddings"], status["vectorCoverage"]) == (2, 2, 1.0)


def test_pending_texts_narrowed_to_paths_name_only_those_memories_texts_without_a_vector(
    store: Path, corpus: dict[str, str], counting: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMHTML_EMBED", "off")
    cache = write(store, note("Cache", "The cache holds 500 entries."))
    # The same bytes under archive/: a second path with the same content hash, projected from the tree.
    archived_copy = "archive/2026/areas/inbox/cache.html"
    (store / archived_copy).parent.mkdir(parents=True)
    (store / archived_copy).write_bytes((store / cache.path).read_bytes())
    update_index(store)
    hashes = file_hashes(store)
    assert hashes[archived_copy] == hashes[cache.path] == cache.content_hash
    text = "The cache holds 500 entries."
    with open_database(store, read_only=True) as database:
        assert pending_texts(database) == [(cache.content_hash, text)]
        assert pending_texts(database, {cache.path}) == [(cache.content_hash, text)]
        assert pending_texts(database, {cache.path, archived_copy}) == [(cache.content_hash, text)]
        # Memories that have their vectors, a path the index does not hold, and no path at all.
        assert pending_texts(database, set(corpus)) == []
        assert pending_texts(database, {"areas/inbox/never-written.html"}) == []
        assert pending_texts(database, set()) == []


@pytest.mark.parametrize("as_matrix", [False, True], ids=["as lists", "as a NumPy matrix"])
def test_stored_vector_components_are_rounded_to_their_decimals(store: Path, as_matrix: bool) -> None:
    import numpy

    from memhtml.index.database import VECTOR_DECIMALS

    vectors = HashEmbedder().embed_documents([f"Probe text {number} about the weir." for number in range(3)])
    rows: Any = numpy.asarray(vectors, dtype=numpy.float32) if as_matrix else [list(row) for row in vectors]
    with open_database(store) as database:
        database.run("DELETE FROM chunk_vectors")
        database.insert_vectors(["a", "b", "c"], [0, 0, 0], [10, 10, 10], rows)
        stored = {row[0]: row[1] for row in database.rows("SELECT content_hash, vector FROM chunk_vectors")}
    step = 10.0**-VECTOR_DECIMALS
    for key, given in zip(["a", "b", "c"], vectors, strict=True):
        assert len(stored[key]) == len(given)
        for value, original in zip(stored[key], given, strict=True):
            # The nearest float to a decimal of VECTOR_DECIMALS places, within half a step of the value given.
            assert value == float(numpy.float32(round(value, VECTOR_DECIMALS)))
            assert abs(value - original) <= step / 2 + 1e-7
        assert any(value != float(numpy.float32(original)) for value, original in zip(stored[key], given, strict=True))


def recorded_space(root: Path) -> tuple[str | None, int | None]:
    """The vector space and dimensions `index_state` records, read from the index file directly."""
    connection = duckdb.connect(str(database_paths(root)[0]), read_only=True)
    try:
        space, dims = connection.sql("SELECT embed_model, embed_dim FROM index_state").fetchall()[0]
    finally:
        connection.close()
    return space, dims


def test_the_first_vectors_record_their_space_and_later_writes_keep_it(store: Path, counting: CountingEmbedder) -> None:
    expected = (counting.space, int(counting.space.rsplit("@", 1)[1]))
    assert write(store, TIMEOUT).stored
    assert recorded_space(store) == expected
    assert write(store, POOL).stored
    assert recorded_space(store) == expected
    assert len({row[0] for row in vector_rows(store)}) == 2


def test_a_space_recorded_without_a_vector_left_gives_way_to_the_configured_one(
    store: Path, counting: CountingEmbedder
) -> None:
    assert write(store, TIMEOUT).stored
    # The index's vectors gone, and another space recorded in their place: nothing is left in it.
    connection = duckdb.connect(str(database_paths(store)[0]))
    try:
        connection.execute("DELETE FROM chunk_vectors")
        connection.execute("UPDATE index_state SET embed_model = 'elsewhere@8', embed_dim = 8")
    finally:
        connection.close()
    pooled = write(store, POOL)
    assert pooled.stored
    assert recorded_space(store) == (counting.space, int(counting.space.rsplit("@", 1)[1]))
    pool_hash = file_hashes(store)[pooled.path]
    assert {row[0] for row in vector_rows(store)} == {pool_hash}


class InterruptedEmbedder(CountingEmbedder):
    """An embedder whose process is told to stop while it embeds (a signal after the write's commit)."""

    def embed_documents(self, texts: Sequence[str]) -> VectorRows:
        raise KeyboardInterrupt


def test_texts_stored_by_a_pass_cut_short_before_its_vectors_are_embedded_by_the_next_command(
    store: Path, counting: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write(store, TIMEOUT)
    monkeypatch.setitem(embedding._loaded, "hash", InterruptedEmbedder())
    cut_short = write(store, POOL)
    assert cut_short.stored  # the commit landed before the signal: only the vectors are missing
    assert cut_short.content_hash not in {row[0] for row in vector_rows(store)}

    monkeypatch.setitem(embedding._loaded, "hash", counting)
    counting.documents.clear()
    update_index(store)  # HEAD is indexed already: only the owed vectors make this pass embed anything
    assert counting.documents == [POOL.claim]
    assert {row[0] for row in vector_rows(store)} == {first.content_hash, cut_short.content_hash}
    counting.documents.clear()
    update_index(store)
    assert counting.documents == []  # settled: nothing is owed any more
