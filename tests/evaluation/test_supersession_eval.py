"""The supersession benchmark: the seeded generator, the scoring, and a small run through the real path."""

from __future__ import annotations

from memhtml.evaluation.supersession import (
    CASES,
    Probe,
    accuracy_by_case,
    build_benchmark,
    first_hop_value,
    score_probe,
    value_at,
)
from memhtml.evaluation.supersession_eval import eval_supersession
from tests.conftest import run_cli


def test_the_benchmark_is_deterministic_and_its_chains_move_forward_in_time() -> None:
    first, second = build_benchmark(seed=5), build_benchmark(seed=5)
    assert first == second
    assert build_benchmark(seed=6) != first
    assert {chain.method for chain in first.chains} == {"correct", "plain"}
    for chain in first.chains:
        times = [fact.event_at for fact in chain.facts]
        assert times == sorted(times) and len(set(times)) == len(times)
        assert len({fact.value for fact in chain.facts}) == len(chain.facts)  # no value comes back
    assert {probe.case for probe in first.probes} == set(CASES)
    facts = first.facts
    for probe in first.probes:
        assert probe.expected in facts
        if probe.case.startswith("as-of/"):
            chain = next(chain for chain in first.chains if probe.expected in {fact.key for fact in chain.facts})
            assert value_at(chain, probe.as_of or "").key == probe.expected
            assert chain.facts[-1].key != probe.expected  # the past, not the present


def test_scoring_by_case() -> None:
    single = Probe("current/plain", "q", "new")
    assert score_probe(single, ["new", "old"]).passed
    assert not score_probe(single, ["old", "new"]).passed
    assert score_probe(single, ["old", "new"]).expected_rank == 2
    together = Probe("contradiction", "q", "a", together=("a", "b"))
    assert score_probe(together, ["b", "a", "x"]).passed
    assert not score_probe(together, ["a", "x", "b"]).passed
    hop = Probe("multi-hop/current", "q1", "office", follow_up="where {value}", expected_first="owner")
    assert score_probe(hop, ["office"], first_hop=["owner"]).passed
    wrong_first = score_probe(hop, ["office"], first_hop=["other"])
    assert not wrong_first.passed and wrong_first.first_hop_passed is False
    table = accuracy_by_case([score_probe(single, ["new"]), score_probe(single, ["old"])])
    assert table["current/plain"] == {"probes": 2, "passed": 1, "accuracy": 0.5}
    assert table["contradiction"] == {"probes": 0, "passed": 0, "accuracy": 0.0}
    assert table["overall"]["probes"] == 2


def test_the_first_hop_answer_is_the_value_its_top_hit_states() -> None:
    benchmark = build_benchmark(seed=5)
    owner = next(chain for chain in benchmark.chains if chain.facts[0].attribute == "owner")
    assert first_hop_value([owner.facts[-1].key], benchmark.facts) == owner.facts[-1].value
    assert first_hop_value(["unknown-path.html"], benchmark.facts) is None


def test_a_small_seeded_run_scores_every_case_through_the_real_write_path() -> None:
    # Seed 20 at this size has a probe in every case, with one correction and one contradiction.
    data = eval_supersession(seed=20, mode="fake", teams=2, services=1, contradictions=1)
    assert data["embedModel"] == "fake-hash@1024" and data["seed"] == 20
    cases = data["cases"]
    assert list(cases) == [*CASES, "overall"]
    benchmark = build_benchmark(20, 2, 1, 1)
    assert all(cases[case]["probes"] > 0 for case in CASES)
    assert cases["overall"]["probes"] == len(benchmark.probes)
    assert sum(cases[case]["probes"] for case in CASES) == len(benchmark.probes)
    assert cases["overall"]["passed"] == len(benchmark.probes) - len(data["failures"])
    # The corrected chains keep one active version: its current value has nothing newer to lose to.
    assert cases["current/correct"]["probes"] > 0 and cases["current/correct"]["accuracy"] == 1.0
    assert cases["contradiction"]["accuracy"] == 1.0
    again = eval_supersession(seed=20, mode="fake", teams=2, services=1, contradictions=1)
    assert again["cases"] == cases and again["failures"] == data["failures"]


def test_the_cli_refuses_an_unknown_mode() -> None:
    bad = run_cli("eval", "supersession", "--mode", "cloud")
    assert bad.status == 2 and bad.envelope["code"] == "ERR_INVALID_FLAG"
