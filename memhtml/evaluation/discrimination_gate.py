"""`eval discriminate`: the retrieval gate, run through the real write path and the real search.

The seeded fixture (`memhtml.evaluation.discrimination`) is written into a fresh store in a temporary
directory with one `apply`, its access history is seeded into the state plane, and every probe's
query goes through `search` with the chosen embedder (`fake`: the deterministic hash embedder;
`live`: the shipped static model). It never opens the user's store. A failed gate raises
`DiscriminationFailed` carrying the whole report; a run with no probe never passes.
"""

from __future__ import annotations

import datetime as dt
import json
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from memhtml.contracts.errors import DiscriminationFailed
from memhtml.evaluation.discrimination import (
    PROBE_LIMIT,
    AccessSeed,
    Fixture,
    GateResult,
    ProbeResult,
    build_fixture,
    score_probe,
)
from memhtml.index.access import seed_access_rows
from memhtml.index.database import open_database
from memhtml.index.vectors import recorded_space
from memhtml.operations.apply import ApplyOptions, apply
from memhtml.operations.config import isolated_git
from memhtml.operations.embedding import embedding_override
from memhtml.operations.init import init
from memhtml.operations.retrieval import RetrievalRequest, search

MODES: Final[dict[str, str]] = {"fake": "hash", "live": "on"}


def discriminate(
    *, mode: str, seed: int, size: int, probes: int, mrr_floor: float, now: dt.datetime | None = None
) -> dict[str, Any]:
    """Run the gate; the `eval.discrimination` data, or `DiscriminationFailed` carrying it."""
    started = time.perf_counter()
    fixture = build_fixture(seed, size, probes, now)
    with (
        isolated_git("memhtml eval", "eval@memhtml.invalid"),
        tempfile.TemporaryDirectory(prefix="memhtml-eval-") as directory,
    ):
        root = Path(directory) / "store"
        with embedding_override(MODES[mode]):
            init(root)
            paths = _write(root, fixture)
            _seed_access(root, fixture.access, paths)
            keys = {path: key for key, path in paths.items()}
            results, space = _run_probes(root, fixture, keys)
    gate = GateResult(tuple(results), mrr_floor, corpus_size=len(fixture.memories))
    data = _report(gate, mode=mode, seed=seed, space=space, seconds=time.perf_counter() - started)
    if not gate.passed:
        reason = (
            "no probe ran"
            if gate.probes == 0
            else f"{gate.inversions} inversion(s), MRR {gate.mrr} against a floor of {mrr_floor}"
        )
        error = DiscriminationFailed(
            f"the discrimination gate failed: {reason}",
            ["memhtml eval discriminate --mode fake", "memhtml index status"],
        )
        error.data = data
        raise error
    return data


def _write(root: Path, fixture: Fixture) -> dict[str, str]:
    """Write every fixture memory with one `apply`; the stored path of each key."""
    lines = [
        json.dumps(
            {
                "op": "write",
                "title": memory.title,
                "type": memory.memory_type,
                "body": memory.body,
                "workspace": memory.workspace,
                "tags": list(memory.tags),
                "entities": list(memory.entities),
                "event_at": memory.event_at,
            }
        )
        for memory in fixture.memories
    ]
    answer = apply(root, "\n".join(lines) + "\n", ApplyOptions())
    paths: dict[str, str] = {}
    for memory, result in zip(fixture.memories, answer.data["results"], strict=True):
        if result["path"] is None:
            raise RuntimeError(f"the fixture memory {memory.key} was not stored: {result.get('error')}")
        paths[memory.key] = str(result["path"])
    return paths


def _seed_access(root: Path, seeds: tuple[AccessSeed, ...], paths: dict[str, str]) -> None:
    if not seeds:
        return
    with open_database(root) as database, database.transaction():
        seed_access_rows(
            database,
            paths=[paths[seed.key] for seed in seeds],
            counts=[seed.access_count for seed in seeds],
            reinforced=[seed.reinforce_count for seed in seeds],
            outcomes=[seed.outcome_score for seed in seeds],
            accessed_at=[seed.last_accessed_at for seed in seeds],
        )


def _run_probes(root: Path, fixture: Fixture, keys: dict[str, str]) -> tuple[list[ProbeResult], str | None]:
    results: list[ProbeResult] = []
    with open_database(root, read_only=True) as database:
        space = recorded_space(database)
    for probe in fixture.probes:
        answer = search(root, RetrievalRequest(probe.query, limit=PROBE_LIMIT))
        ranked = [keys.get(hit["path"], hit["path"]) for hit in answer["hits"]]
        results.append(score_probe(probe, ranked, degraded=bool(answer["degraded"])))
    return results, space


def _report(gate: GateResult, *, mode: str, seed: int, space: str | None, seconds: float) -> dict[str, Any]:
    families: dict[str, dict[str, int]] = {}
    for result in gate.results:
        for family, rank in result.control_ranks.items():
            counts = families.setdefault(family, {"controls": 0, "outranked": 0})
            counts["controls"] += 1
            target = result.target_rank
            counts["outranked"] += int(target is not None and (rank is None or target < rank))
    return {
        "mode": mode,
        "embedModel": space,
        "seed": seed,
        "passed": gate.passed,
        "probes": gate.probes,
        "discriminated": gate.probes - gate.inversions,
        "inversions": gate.inversions,
        "mrr": gate.mrr,
        "mrrFloor": gate.mrr_floor,
        "corpusMrr": gate.corpus_mrr,
        "corpusSize": gate.corpus_size,
        "degradedProbes": sum(1 for result in gate.results if result.degraded),
        "families": families,
        "results": [
            {
                "target": result.target_key,
                "query": result.query,
                "targetRank": result.target_rank,
                "controlRanks": result.control_ranks,
                "discriminationRank": result.discrimination_rank,
                "inverted": result.inverted,
            }
            for result in gate.results
        ],
        "seconds": round(seconds, 2),
    }
