"""The near-duplicate assist of `write` and `apply` (`--detect-near-duplicates`): report-only, cosine at least
0.92, never across a negation, number or qualifier flip, never an exact duplicate (that is the dedupe's),
and null with a degraded flag when nothing could be checked.

With the hash embedder (the tests' default) two texts are cosine 1.0 exactly when they have the same words,
so "near-identical" is the same words with other punctuation and case; each expectation below is checked
against a cosine computed here, independently of the command.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from memhtml.domain.divergence import diverges
from memhtml.index.embedders import HashEmbedder
from memhtml.operations.apply import ApplyOptions, apply
from memhtml.operations.init import init
from memhtml.operations.nearduplicates import NEAR_DUPLICATE_THRESHOLD
from memhtml.operations.write import WriteRequest, write
from tests.conftest import memory_files, run_cli

BASE = (
    "The staging cluster in the Frankfurt region keeps 12 replicas of the billing database behind the internal "
    "load balancer and rotates their credentials through the vault agent sidecar every night."
)
NEAR = (
    "the STAGING cluster, in the Frankfurt region, keeps 12 replicas of the billing database behind the internal "
    "load balancer; and rotates their credentials through the vault agent sidecar every night!"
)
FLIPS = {
    "number": BASE.replace("12 replicas", "16 replicas"),
    "negation": BASE.replace("keeps 12", "does not keep 12"),
    "contracted negation": BASE.replace("keeps 12", "doesn't keep 12"),
    "qualifier": BASE.replace("the billing database", "the legacy billing database"),
}
UNRELATED = "Alice drinks her espresso without sugar every morning."
DETECT = ApplyOptions(detect_near_duplicates=True)


def cosine(left: str, right: str) -> float:
    embedder = HashEmbedder()
    a, b = embedder.embed_query(left), embedder.embed_query(right)
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    init(root)
    return root


def note(title: str, claim: str, **fields: Any) -> WriteRequest:
    return WriteRequest(title=title, memory_type=fields.pop("memory_type", "semantic"), claim=claim, **fields)


def detect(root: Path, title: str, claim: str, **fields: Any) -> dict[str, Any]:
    return write(root, note(title, claim, **fields), detect_near_duplicates=True).as_data()


def batch(root: Path, *claims: str) -> dict[str, Any]:
    stream = "".join(
        json.dumps({"op": "write", "title": f"Op {number}", "type": "semantic", "body": claim}) + "\n"
        for number, claim in enumerate(claims)
    )
    return apply(root, stream, DETECT).data


def test_the_fixture_texts_are_what_the_tests_say() -> None:
    assert cosine(BASE, NEAR) == pytest.approx(1.0) and NEAR != BASE and not diverges(BASE, NEAR)
    for name, flipped in FLIPS.items():
        # Close enough to be reported but for the veto: the veto is what keeps them out.
        assert cosine(BASE, flipped) >= NEAR_DUPLICATE_THRESHOLD, name
        assert diverges(BASE, flipped), name
    assert cosine(BASE, UNRELATED) < NEAR_DUPLICATE_THRESHOLD


def test_a_near_identical_write_names_the_stored_memory(store: Path) -> None:
    first = write(store, note("Staging replicas", BASE)).path
    answer = detect(store, "Replica count", NEAR)
    assert answer["outcome"] == "written" and answer["stored"] is True  # report-only: it is still written
    assert sorted(memory_files(store)) == sorted([first, str(answer["path"])])
    assert answer["nearDuplicatesDegraded"] is False
    assert answer["nearDuplicates"] == [
        {"path": first, "batch_index": None, "similarity": round(cosine(NEAR, BASE), 4), "claim": BASE}
    ]
    assert answer["nearDuplicates"][0]["similarity"] >= NEAR_DUPLICATE_THRESHOLD


def test_an_unrelated_write_has_no_near_duplicate(store: Path) -> None:
    write(store, note("Staging replicas", BASE))
    answer = detect(store, "Alice espresso", UNRELATED)
    assert answer["nearDuplicates"] == [] and answer["nearDuplicatesDegraded"] is False


@pytest.mark.parametrize("flip", sorted(FLIPS))
def test_a_flipped_fact_is_vetoed(store: Path, flip: str) -> None:
    write(store, note("Staging replicas", BASE))
    answer = detect(store, "Replica count", FLIPS[flip])
    assert answer["outcome"] == "written"
    assert answer["nearDuplicates"] == [] and answer["nearDuplicatesDegraded"] is False


def test_the_veto_drops_only_the_diverging_neighbour(store: Path) -> None:
    base = write(store, note("Staging replicas", BASE)).path
    write(store, note("Replica count", FLIPS["number"]))
    found = detect(store, "Replicas again", NEAR)["nearDuplicates"]
    assert [finding["path"] for finding in found] == [base]


def test_an_exact_duplicate_is_a_dedupe_not_a_near_duplicate(store: Path) -> None:
    first = write(store, note("Staging replicas", BASE)).path
    answer = detect(store, "Staging replicas", BASE)
    assert answer["deduped"] is True and answer["existingPath"] == first and answer["stored"] is False
    assert answer["nearDuplicates"] == [] and answer["nearDuplicatesDegraded"] is False


def test_tasks_are_not_compared(store: Path) -> None:
    write(store, note("Staging replicas", BASE))
    answer = detect(store, "Check replicas", NEAR, memory_type="task", task_status="todo")
    assert answer["nearDuplicates"] == [] and answer["nearDuplicatesDegraded"] is False


def test_without_the_flag_nothing_is_reported(store: Path) -> None:
    write(store, note("Staging replicas", BASE))
    answer = write(store, note("Replica count", NEAR)).as_data()
    assert "nearDuplicates" not in answer and "nearDuplicatesDegraded" not in answer
    data = apply(
        store, json.dumps({"op": "write", "title": "T", "type": "semantic", "body": NEAR}), ApplyOptions()
    ).data
    assert data["results"][0]["near_duplicates"] is None and data["near_duplicates_degraded"] is False


def test_a_batch_op_that_repeats_an_earlier_op_names_its_index(store: Path) -> None:
    data = batch(store, UNRELATED, BASE, NEAR)
    assert data["near_duplicates_degraded"] is False
    first, second, third = data["results"]
    assert first["near_duplicates"] == [] and second["near_duplicates"] == []
    assert third["near_duplicates"] == [
        {"path": None, "batch_index": 1, "similarity": round(cosine(NEAR, BASE), 4), "claim": BASE}
    ]
    assert all(result["stored"] for result in data["results"])


def test_a_batch_op_is_compared_with_stored_memories_and_the_veto_holds_in_a_batch(store: Path) -> None:
    stored = write(store, note("Staging replicas", BASE)).path
    data = batch(store, NEAR, FLIPS["qualifier"])
    near, flipped = data["results"]
    assert [(finding["path"], finding["batch_index"]) for finding in near["near_duplicates"]] == [(stored, None)]
    # The flip is close to the stored memory and to op 0, and vetoed against both.
    assert flipped["near_duplicates"] == []


def test_an_exact_repeat_within_a_batch_is_not_a_near_duplicate(store: Path) -> None:
    data = batch(store, BASE, BASE)
    assert data["results"][1]["near_duplicates"] == []
    assert data["summary"]["written"] == 1


def test_with_embeddings_off_nothing_is_checked(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(store, note("Staging replicas", BASE))
    monkeypatch.setenv("MEMHTML_EMBED", "off")
    answer = detect(store, "Replica count", NEAR)
    assert answer["outcome"] == "written"
    assert answer["nearDuplicates"] is None and answer["nearDuplicatesDegraded"] is True
    data = batch(store, UNRELATED, FLIPS["number"])
    assert data["near_duplicates_degraded"] is True
    assert [result["near_duplicates"] for result in data["results"]] == [None, None]


def test_a_memory_without_a_vector_is_compared_or_the_answer_says_unchecked(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMHTML_EMBED", "off")
    first = write(store, note("Staging replicas", BASE)).path
    monkeypatch.setenv("MEMHTML_EMBED", "hash")
    answer = detect(store, "Replica count", NEAR)
    found = [finding["path"] for finding in answer["nearDuplicates"] or []]
    unchecked = answer["nearDuplicates"] is None and answer["nearDuplicatesDegraded"] is True
    assert found == [first] or unchecked, answer


def test_another_vector_space_is_not_checked(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(store, note("Staging replicas", BASE))  # hash vectors
    monkeypatch.setenv("MEMHTML_EMBED", "on")
    answer = detect(store, "Replica count", NEAR)
    assert answer["outcome"] == "written"
    assert answer["nearDuplicates"] is None and answer["nearDuplicatesDegraded"] is True


def test_the_cli_flag_reports_near_duplicates(store: Path) -> None:
    first = write(store, note("Staging replicas", BASE)).path
    answer = run_cli(
        "write", "--repo", str(store), "--title", "Replica count", "--type", "semantic", "--claim", NEAR,
        "--detect-near-duplicates",
    )  # fmt: skip
    assert answer.status == 0, answer.stdout + answer.stderr
    assert answer.data["nearDuplicatesDegraded"] is False
    assert [finding["path"] for finding in answer.data["nearDuplicates"]] == [first]
