"""What a search hit says about its memory beyond the score: its entities and what supersedes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memhtml.domain.recall_fold import MAX_PER_ENTITY
from tests.conftest import run_cli


def _write(store_root: Path, title: str, claim: str, *extra: str) -> str:
    answer = run_cli(
        "write", "--repo", str(store_root), "--title", title, "--type", "semantic", "--claim", claim, *extra
    )
    assert answer.status == 0, answer.stdout + answer.stderr
    return str(answer.data["path"])


def _hits(store_root: Path, query: str) -> dict[str, dict[str, Any]]:
    answer = run_cli("search", "--repo", str(store_root), query)
    assert answer.status == 0, answer.stdout + answer.stderr
    return {hit["path"]: hit for hit in answer.data["hits"]}


def test_a_hit_lists_its_own_entities_sorted_and_once(store_root: Path) -> None:
    tagged = _write(
        store_root,
        "Billing retry budget",
        "The billing retry budget is 3 attempts.",
        "--entity",
        "service:billing",
        "--entity",
        "person:ada",
        "--entity",
        "person:ada",
    )
    plain = _write(store_root, "Search retry budget", "The search retry budget is 5 attempts.")
    hits = _hits(store_root, "retry budget")
    assert set(hits) == {tagged, plain}
    entities = hits[tagged]["entities"]
    assert entities == sorted(set(entities))
    assert {"person:ada", "service:billing"} <= set(entities)
    assert not {"person:ada", "service:billing"} & set(hits[plain]["entities"])


def test_a_supersedes_link_names_the_newer_memory_on_the_older_hit(store_root: Path) -> None:
    older = _write(store_root, "Deploy window", "Deploys run on Tuesdays.")
    newer = _write(store_root, "Deploy window moved", "Deploys run on Thursdays since the freeze.")
    linked = run_cli("link", "--repo", str(store_root), newer, "supersedes", older)
    assert linked.status == 0, linked.stdout + linked.stderr
    hits = _hits(store_root, "deploys run")
    assert hits[older]["supersededBy"] == newer
    assert hits[newer]["supersededBy"] is None


def test_recall_quotes_at_most_the_per_entity_cap_of_memories_naming_one_entity(store_root: Path) -> None:
    about_ada = [
        _write(
            store_root,
            f"Ada on retries {number}",
            f"Ada set retry rule {number} for billing.",
            "--entity",
            "person:ada",
        )
        for number in range(MAX_PER_ENTITY + 2)
    ]
    answer = run_cli("recall", "--repo", str(store_root), "retry rule billing")
    assert answer.status == 0, answer.stdout + answer.stderr
    memories = answer.data["memories"]
    quoted = {item["path"] for item in memories["disclosed"]}
    listed = {item["path"] for item in memories["indexLines"]}
    assert quoted | listed == set(about_ada)  # the budget fits them all: only the cap holds some back
    assert len(quoted) == MAX_PER_ENTITY


def test_a_query_with_no_term_reports_the_index_s_vector_coverage_not_a_degraded_zero(store_root: Path) -> None:
    _write(store_root, "Pool ceiling", "The connection pool ceiling is 64.")
    for query in ("!!!", "..."):
        answer = run_cli("search", "--repo", str(store_root), query)
        assert answer.status == 0, answer.stdout + answer.stderr
        assert answer.data["hits"] == []
        assert (answer.data["degraded"], answer.data["vectorCoverage"]) == (False, 1.0)  # the one memory is embedded
    off = run_cli("search", "--repo", str(store_root), "!!!", env={"MEMHTML_EMBED": "off"})
    assert (off.data["degraded"], off.data["hits"]) == (True, [])  # embeddings off: degraded, as for any query
