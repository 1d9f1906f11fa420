"""The vector arm of the fused search, with chosen vectors: a memory's similarity is its best chunk's, the
similarity floor admits memories by meaning alone after the scope has narrowed them, and every lexical
match that has a vector is ranked by it whatever its cosine.

The index is built for real; only the vectors are replaced, in two dimensions, so that each chunk's cosine
with the query vector (1, 0) is exactly the value the test names.
"""

from __future__ import annotations

import math
from pathlib import Path

from memhtml.domain.ranking import ARM_LIMIT
from memhtml.domain.tokens import parse_query
from memhtml.index.database import open_database
from memhtml.index.scope import Scope
from memhtml.index.search import FusedHit, QueryVector, fused_search
from tests.conftest import run_cli
from tests.index.test_search import commit_files, memory_file

QUERY = QueryVector([1.0, 0.0], similarity_floor=0.5)


def unit(cosine: float) -> list[float]:
    return [cosine, math.sqrt(1 - cosine * cosine)]


def index_with_vectors(root: Path, cosines: dict[str, list[float]]) -> None:
    """Build the index of the committed memories, then give each named memory one chunk per cosine and
    every other memory none."""
    assert run_cli("index", "rebuild", "--repo", str(root)).status == 0
    with open_database(root) as database:
        hashes = dict(database.rows("SELECT path, content_hash FROM files"))
        database.run("DELETE FROM chunk_vectors")
        for path, chunk_cosines in cosines.items():
            for ordinal, cosine in enumerate(chunk_cosines):
                database.run(
                    "INSERT INTO chunk_vectors VALUES ($hash, $ordinal, 10, $vector)",
                    {"hash": hashes[path], "ordinal": ordinal, "vector": unit(cosine)},
                )


def search(root: Path, query: str, scope: Scope | None = None) -> dict[str, FusedHit]:
    with open_database(root, read_only=True) as database:
        hits, _ = fused_search(database, parse_query(query), scope or Scope(), pool=100, vector=QUERY)
    assert len(hits) == len({hit.path for hit in hits}), "a memory is fused once"
    return {hit.path: hit for hit in hits}


def test_a_memory_is_as_similar_as_its_best_chunk(store_root: Path) -> None:
    claims = {
        "areas/inbox/two-chunks.html": "Kestrels hover over the verge.",
        "areas/inbox/one-chunk.html": "Swifts sleep on the wing.",
        "areas/inbox/dissimilar.html": "Owls hunt by sound.",
    }
    commit_files(store_root, {path: memory_file("Bird", claim) for path, claim in claims.items()})
    index_with_vectors(
        store_root,
        {
            # Its first chunk is below the floor and below every other chunk: only the best one counts.
            "areas/inbox/two-chunks.html": [0.2, 0.95],
            "areas/inbox/one-chunk.html": [0.8],
            "areas/inbox/dissimilar.html": [0.3],
        },
    )
    # No memory has the word: every hit is found by meaning alone.
    hits = search(store_root, "aerodynamics")
    assert list(hits) == ["areas/inbox/two-chunks.html", "areas/inbox/one-chunk.html"]
    assert hits["areas/inbox/two-chunks.html"].arm_ranks == {"vector": 1}
    assert hits["areas/inbox/one-chunk.html"].arm_ranks == {"vector": 2}


def test_the_scope_narrows_before_the_most_similar_are_kept(store_root: Path) -> None:
    # More memories out of the scope than the arm keeps, all more similar than the one in it.
    crowd = {
        f"areas/inbox/episode-{number}.html": f"Episode {number} of the ferry log." for number in range(ARM_LIMIT + 5)
    }
    files = {path: memory_file("Episode", claim, memory_type="episodic") for path, claim in crowd.items()}
    files["areas/inbox/fact.html"] = memory_file("Fact", "The ferry runs on the hour.")
    commit_files(store_root, files)
    index_with_vectors(store_root, {**{path: [0.99] for path in crowd}, "areas/inbox/fact.html": [0.6]})
    assert list(search(store_root, "timetable", Scope(memory_types=("semantic",)))) == ["areas/inbox/fact.html"]
    # Unscoped, the arm keeps its limit of the most similar, and the fact is not among them.
    unscoped = search(store_root, "timetable")
    assert len(unscoped) == ARM_LIMIT
    assert "areas/inbox/fact.html" not in unscoped


def test_every_lexical_match_with_a_vector_is_ranked_by_it_below_the_floor_too(store_root: Path) -> None:
    claims = {
        "areas/inbox/close.html": "The heron nests by the weir.",
        "areas/inbox/far.html": "A heron stood in the car park.",
        "areas/inbox/unembedded.html": "Heron feathers are grey.",
    }
    commit_files(store_root, {path: memory_file("Heron", claim) for path, claim in claims.items()})
    index_with_vectors(store_root, {"areas/inbox/close.html": [0.9], "areas/inbox/far.html": [0.1]})
    hits = search(store_root, "heron")
    assert set(hits) == set(claims)
    assert hits["areas/inbox/close.html"].arm_ranks["vector"] == 1
    assert hits["areas/inbox/far.html"].arm_ranks["vector"] == 2
    assert "vector" not in hits["areas/inbox/unembedded.html"].arm_ranks
