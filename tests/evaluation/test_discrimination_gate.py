"""The discrimination gate: the fixture, the scoring, the real-path harness and the CLI answer."""

from __future__ import annotations

import re

import pytest

from memhtml.contracts.errors import DiscriminationFailed
from memhtml.domain.divergence import negations, numbers, qualifiers
from memhtml.evaluation.discrimination import (
    FAMILY_MARKERS,
    MAX_QUERY_TOKENS,
    Probe,
    build_fixture,
    probe_query,
    score_probe,
)
from memhtml.evaluation.discrimination_gate import discriminate
from tests.conftest import run_cli


def test_the_fixture_is_deterministic_and_every_twin_passes_its_own_family() -> None:
    first, second = build_fixture(seed=11, size=120, probes=20), build_fixture(seed=11, size=120, probes=20)
    assert first == second
    assert build_fixture(seed=12, size=120, probes=20) != first
    memories = {memory.key: memory for memory in first.memories}
    assert len(memories) == len(first.memories)  # keys are unique
    assert len({memory.body for memory in first.memories}) == len(first.memories)  # no two hashes collide
    assert len(first.probes) == 20
    for probe in first.probes:
        target = memories[probe.target_key]
        assert target.memory_type in ("semantic", "procedural")
        for key, family in zip(probe.control_keys, probe.families, strict=True):
            twin = memories[key]
            assert twin.target_key == target.key and twin.family == family
            assert twin.title.startswith(FAMILY_MARKERS[family])
            assert twin.event_at > target.event_at  # recency favours the twin
            predicate = {"negation": negations, "numeric": numbers, "variant": qualifiers}[family]
            assert predicate(twin.claim) != predicate(target.claim)
    accessed = {seed.key for seed in first.access}
    assert not accessed & {memory.key for memory in first.memories if memory.family}  # twins get no history


def test_the_query_is_the_claim_without_stop_words_capped_at_twelve_tokens() -> None:
    query = probe_query("The Kestrel gateway routes every ledger within 33 seconds in the amber0 lane of the west.")
    assert query == "kestrel gateway routes every ledger within 33 seconds amber0 lane west"
    long_claim = " ".join(f"word{number}" for number in range(30))
    assert len(probe_query(long_claim).split()) == MAX_QUERY_TOKENS


def test_scoring_counts_the_twins_the_target_fails_to_outrank() -> None:
    probe = Probe("t", ("n", "q"), ("negation", "numeric"), "query")
    assert score_probe(probe, ["t", "n", "q"], degraded=False).discrimination_rank == 1
    assert score_probe(probe, ["n", "t"], degraded=False).discrimination_rank == 2  # q absent: outranked
    assert score_probe(probe, ["n", "q"], degraded=False).discrimination_rank == 3  # absent target loses to all
    assert score_probe(probe, ["q", "n", "t"], degraded=False).inverted


def test_the_gate_passes_with_the_hash_embedder_through_the_real_write_path() -> None:
    data = discriminate(mode="fake", seed=20260802, size=200, probes=36, mrr_floor=0.85)
    assert data["passed"] is True
    assert data["probes"] == 36 and data["inversions"] == 0 and data["mrr"] >= 0.85
    assert data["embedModel"] == "fake-hash@1024" and data["degradedProbes"] == 0
    fixture = build_fixture(20260802, 200, 36)
    assert data["corpusSize"] == len(fixture.memories)
    twins = sum(len(probe.control_keys) for probe in fixture.probes)
    assert sum(family["controls"] for family in data["families"].values()) == twins
    assert all(result["targetRank"] is not None for result in data["results"])


def test_the_gate_fails_when_the_lexical_arm_is_broken(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the lexical vote, recency (the twin is a day newer) decides between a fact and its twin.
    monkeypatch.setattr("memhtml.index.search.WEIGHT_FTS", 0.0)
    with pytest.raises(DiscriminationFailed) as failure:
        discriminate(mode="fake", seed=20260802, size=120, probes=20, mrr_floor=0.85)
    data = failure.value.data
    assert data is not None and data["passed"] is False
    results = data["results"]
    assert isinstance(results, list)
    inverted = [result for result in results if result["inverted"]]
    assert data["inversions"] == len(inverted) > 0


def test_the_cli_answers_a_failed_gate_with_its_code_and_report() -> None:
    answer = run_cli("eval", "discriminate", "--size", "40", "--probes", "4", "--mrr-floor", "1")
    assert answer.status == 0, answer.stdout
    assert answer.data["passed"] is True and answer.data["probes"] == 4
    empty = run_cli("eval", "discriminate", "--size", "40", "--probes", "0")
    assert empty.status == 1
    assert empty.envelope["code"] == "ERR_DISCRIMINATION_FAILED"
    assert re.search(r"no probe ran", empty.envelope["error"])
    bad = run_cli("eval", "discriminate", "--mode", "cloud")
    assert bad.status == 2 and bad.envelope["code"] == "ERR_INVALID_FLAG"
