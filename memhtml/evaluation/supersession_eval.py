"""`eval supersession`: does search answer with the value valid now, or then, and keep contradictions together?

The seeded benchmark (`memhtml.evaluation.supersession`) is written into a fresh store in a temporary
directory: every plain chain, the first version of every corrected chain and both sides of every
contradiction with one `apply` (each fact with its event time); each later version of a corrected
chain through `correct`; each contradiction recorded with a `contradicts` link. Every probe then
goes through `search` (with `as_of` when it asks about the past; a multi-hop probe searches twice,
the second question naming the first hop's top answer) and is scored per case. It never opens the
user's store.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from memhtml.evaluation.supersession import (
    DEFAULT_CONTRADICTIONS,
    DEFAULT_SERVICES,
    DEFAULT_TEAMS,
    Benchmark,
    Fact,
    Probe,
    ProbeOutcome,
    accuracy_by_case,
    build_benchmark,
    first_hop_value,
    score_probe,
)
from memhtml.index.database import open_database
from memhtml.index.vectors import recorded_space
from memhtml.operations.apply import ApplyOptions, apply
from memhtml.operations.config import isolated_git
from memhtml.operations.embedding import embedding_override
from memhtml.operations.init import init
from memhtml.operations.lifecycle import correct, link
from memhtml.operations.retrieval import RetrievalRequest, search
from memhtml.operations.write import WriteRequest

MODES: Final[dict[str, str]] = {"fake": "hash", "live": "on"}
PROBE_LIMIT: Final[int] = 10
MEMORY_TYPE: Final[str] = "semantic"


def eval_supersession(
    *,
    seed: int,
    mode: str = "live",
    teams: int = DEFAULT_TEAMS,
    services: int = DEFAULT_SERVICES,
    contradictions: int = DEFAULT_CONTRADICTIONS,
) -> dict[str, Any]:
    """The `eval.supersession` data: accuracy per case and every probe's outcome."""
    started = time.perf_counter()
    benchmark = build_benchmark(seed, teams, services, contradictions)
    with (
        isolated_git("memhtml eval", "eval@memhtml.invalid"),
        tempfile.TemporaryDirectory(prefix="memhtml-supersession-") as directory,
        embedding_override(MODES[mode]),
    ):
        root = Path(directory) / "store"
        init(root)
        keys = _write(root, benchmark)
        with open_database(root, read_only=True) as database:
            space = recorded_space(database)
        outcomes = [_run(root, probe, keys, benchmark.facts) for probe in benchmark.probes]
    return {
        "mode": mode,
        "embedModel": space,
        "seed": seed,
        "facts": len(benchmark.facts),
        "chains": {
            method: sum(1 for chain in benchmark.chains if chain.method == method) for method in ("correct", "plain")
        },
        "contradictions": len(benchmark.contradictions),
        "cases": accuracy_by_case(outcomes),
        "failures": [
            {"case": outcome.case, "query": outcome.query, "expectedRank": outcome.expected_rank}
            for outcome in outcomes
            if not outcome.passed
        ],
        "seconds": round(time.perf_counter() - started, 2),
    }


def _op(fact: Fact) -> str:
    return json.dumps(
        {
            "op": "write",
            "title": fact.title,
            "type": MEMORY_TYPE,
            "body": fact.claim,
            "entities": [fact.entity],
            "event_at": fact.event_at,
        }
    )


def _write(root: Path, benchmark: Benchmark) -> dict[str, str]:
    """Write the benchmark; the fact key of every stored path (archived versions included)."""
    first: list[Fact] = []
    for chain in benchmark.chains:
        first += list(chain.facts) if chain.method == "plain" else [chain.facts[0]]
    for pair in benchmark.contradictions:
        first += [pair.left, pair.right]
    answer = apply(root, "\n".join(_op(fact) for fact in first) + "\n", ApplyOptions())
    path_of: dict[str, str] = {}
    for fact, result in zip(first, answer.data["results"], strict=True):
        if result["path"] is None or result["outcome"] != "written":
            raise RuntimeError(f"the benchmark fact {fact.key} was not written: {result}")
        path_of[fact.key] = str(result["path"])
    keys = {path: key for key, path in path_of.items()}
    for chain in benchmark.chains:
        if chain.method != "correct":
            continue
        for older, newer in zip(chain.facts, chain.facts[1:], strict=False):
            request = WriteRequest(
                title=newer.title,
                memory_type=MEMORY_TYPE,
                claim=newer.claim,
                entities=[newer.entity],
                event_at=newer.event_at,
            )
            corrected = correct(root, path_of[older.key], request, f"{newer.subject} {newer.attribute} changed")
            if corrected["outcome"] != "written" or not corrected["archivedPath"]:
                raise RuntimeError(f"the correction to {newer.key} did not supersede {older.key}: {corrected}")
            keys[str(corrected["archivedPath"])] = older.key
            path_of[newer.key] = str(corrected["path"])
            keys[path_of[newer.key]] = newer.key
    for pair in benchmark.contradictions:
        link(root, path_of[pair.left.key], "contradicts", path_of[pair.right.key])
    return keys


def _ranked(root: Path, query: str, as_of: str | None, keys: dict[str, str]) -> list[str]:
    answer = search(root, RetrievalRequest(query, as_of=as_of, limit=PROBE_LIMIT))
    return [keys.get(hit["path"], hit["path"]) for hit in answer["hits"]]


def _run(root: Path, probe: Probe, keys: dict[str, str], facts: dict[str, Fact]) -> ProbeOutcome:
    first = _ranked(root, probe.query, probe.as_of, keys)
    if probe.follow_up is None:
        return score_probe(probe, first)
    value = first_hop_value(first, facts)
    if value is None:
        return score_probe(probe, [], first_hop=first)
    return score_probe(probe, _ranked(root, probe.follow_up.format(value=value), probe.as_of, keys), first_hop=first)
