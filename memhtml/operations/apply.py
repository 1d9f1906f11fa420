"""The `apply` use case: a JSONL batch of writes as one commit and one index pass, with per-op answers.

Every op is decoded, rendered and checked first; the store then plans each one under its lock
(dedupe against the store and the batch, two-level identity, claimed paths) and commits the batch
once. Atomic by default: one refused op stores nothing and the batch fails with that op's code and
every result. With --continue-on-error the rest land and the answer is partial.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple, NotRequired, TypedDict

from memhtml.contracts.errors import BatchAborted, MemhtmlError, envelope_code
from memhtml.contracts.instants import format_instant
from memhtml.domain.conflicts import ClaimFacts
from memhtml.index.claims import StoredClaim
from memhtml.operations.batchinput import Cleaning, DecodedOp, Provenance, decode_ops
from memhtml.operations.conflicts import ConflictEntry, batch_findings
from memhtml.operations.indexing import (
    PhaseProgress,
    indexed_active_hashes,
    progress_phase,
)
from memhtml.operations.planning import PARALLEL_MINIMUM_OPS, PickledProjections, plan_all
from memhtml.operations.screening import ScreenedFields
from memhtml.operations.write_pipeline import Assists, staging_warning, store_planned
from memhtml.store.batch import OpOutcome, PlannedOp
from memhtml.store.commit import commit_message, commit_subject
from memhtml.store.repository import open_store

if TYPE_CHECKING:
    from memhtml.operations.indexing import CommandWarning
    from memhtml.operations.nearduplicates import NearDuplicateFinding


@dataclass(frozen=True, slots=True)
class ApplyOptions:
    continue_on_error: bool = False
    dry_run: bool = False
    detect_conflicts: bool = False
    detect_near_duplicates: bool = False
    consolidate: str | None = None
    provenance: Provenance = field(default_factory=Provenance)
    cleaning: Cleaning = field(default_factory=Cleaning)  # --redact, --strip-invisible


class ConflictSummary(TypedDict):
    """The original's `conflict` of an op: the first finding, without its class."""

    path: str | None
    batch_index: int | None
    claim: str


class OpResult(ScreenedFields):
    """One op's answer in `batch.applied`: the original's twelve fields (snake_case, as it spells them),
    then ours; `conflicts` only when they were asked for."""

    index: int
    ok: bool
    path: str | None
    deduped: bool
    existing_path: str | None
    code: str | None
    error: str | None
    skipped: bool
    conflict: ConflictSummary | None
    near_duplicates: list[NearDuplicateFinding] | None
    consolidated_into: int | None
    superseded_path: str | None
    stored: bool
    outcome: str
    retryable: bool
    changed: list[str] | None
    line: int
    conflicts: NotRequired[list[ConflictEntry] | None]  # None: the index could not be read, not checked


class BatchApplied(TypedDict):
    """The `batch.applied` data: every op's result, the original's summary, and what landed."""

    results: list[OpResult]
    summary: dict[str, int]
    commit_sha: str | None
    near_duplicates_degraded: bool
    partial: bool
    stored: bool
    preview: NotRequired[Literal[True]]  # --dry-run: planned, nothing stored
    index: NotRequired[CommandWarning]  # the commit landed, but the search or the git index lags


class ApplyAnswer(NamedTuple):
    """The `batch.applied` data and whether it is a partial success (exit 3)."""

    data: BatchApplied
    partial: bool


def apply(
    root: Path,
    stream: str,
    options: ApplyOptions,
    now: dt.datetime | None = None,
    *,
    progress: PhaseProgress | None = None,
) -> ApplyAnswer:
    """Apply every op of `stream`; raises BatchAborted when an atomic batch stored nothing because of
    a refused op, and when every op was refused. `progress` hears ("planning", ops, of), ("checking",
    ops, of), ("writing", files, of), ("indexing", files, of) and ("embedding", texts, of), each phase
    when it is long enough to report."""
    decoded = decode_ops(stream, options.provenance, options.cleaning)
    moment = now or dt.datetime.now(dt.UTC)
    requests = [op.request for op in decoded]
    # Only a batch big enough to plan on every core gains more than the extra open of the index costs.
    stored_hashes = indexed_active_hashes(root) if len(requests) >= PARALLEL_MINIMUM_OPS else frozenset()
    rendered = plan_all(requests, moment, stored_hashes, progress=progress_phase(progress, "planning"))
    planned = [
        plan[0] if plan is not None else PlannedOp(None, refusal=op.refusal)
        for op, plan in zip(decoded, rendered, strict=True)
    ]
    # Index rows of every rendered file, by blob id: the index pass after the commit reuses them.
    known = PickledProjections(dict(plan[1] for plan in rendered if plan is not None and plan[1] is not None))
    assists = Assists(options.detect_conflicts, options.detect_near_duplicates, options.consolidate)
    run = store_planned(
        open_store(root),
        requests,
        planned,
        instant=format_instant(moment),
        message_for=lambda outcomes, touched: _message(decoded, outcomes, touched),
        assists=assists,
        atomic=not options.continue_on_error,
        dry_run=options.dry_run,
        known=known,
        progress=progress,
    )
    stored, near, index_warning = run.stored, run.near_duplicates, run.index_warning
    committed = stored.committed
    results = [
        _result(position, op, outcome, plan.consolidated_into, preview=options.dry_run)
        for position, (op, outcome, plan) in enumerate(zip(decoded, stored.outcomes, run.planned, strict=True))
    ]
    if options.detect_conflicts:
        _attach_conflicts(results, run.claims, run.candidates, stored.outcomes)
    if near is not None:
        for result, found in zip(results, near.findings, strict=True):
            result["near_duplicates"] = found
    refused = [outcome for outcome in stored.outcomes if outcome.outcome == "refused"]
    succeeded = [
        outcome for outcome in stored.outcomes if outcome.outcome in ("written", "updated", "unchanged", "consolidated")
    ]
    data: BatchApplied = {
        "results": results,
        "summary": _summary(stored.outcomes),
        "commit_sha": committed.landed.sha if committed is not None and committed.landed.created else None,
        "near_duplicates_degraded": near is not None and near.degraded,
        "partial": bool(refused and succeeded),
        "stored": any(outcome.stored for outcome in stored.outcomes) and not options.dry_run,
    }
    if options.dry_run:
        data["preview"] = True
    if index_warning is not None:
        data["index"] = index_warning
    elif committed is not None and not committed.index_synced:
        data["index"] = staging_warning(stored.touched)
    if refused and not succeeded:
        first = refused[0]
        assert first.error is not None
        position = stored.outcomes.index(first)
        nothing = "nothing was written" if not options.continue_on_error else "every op was refused"
        raise BatchAborted(
            first.error,
            f"apply: op {position} (line {decoded[position].line}) was refused, {nothing}: {first.error.message}",
            data,
        )
    return ApplyAnswer(data, partial=data["partial"])


def _attach_conflicts(
    results: list[OpResult],
    claims: Sequence[ClaimFacts | None],
    candidates: Sequence[StoredClaim] | None,
    outcomes: Sequence[OpOutcome],
) -> None:
    """Per-op `conflicts` (typed findings) and the original's `conflict` (the first one); null for every
    op when the index could not be read, meaning "not checked"."""
    if candidates is None:
        for result in results:
            result["conflicts"] = None
        return
    own = [outcome.path if outcome.outcome in ("unchanged", "updated", "written") else None for outcome in outcomes]
    for result, found in zip(results, batch_findings(claims, candidates, own), strict=True):
        result["conflicts"] = found
        if found:
            first = found[0]
            result["conflict"] = {"path": first["path"], "batch_index": first["batch_index"], "claim": first["claim"]}


def _message(decoded: Sequence[DecodedOp], outcomes: list[OpOutcome], touched: list[str]) -> str:
    """`memhtml(batch): <title>` when one memory changed, else `N memories`; provenance trailers from
    the first op that carries any."""
    if len(touched) == 1:
        first = next(
            op for op, outcome in zip(decoded, outcomes, strict=True) if outcome.path == touched[0] and outcome.stored
        )
        subject = commit_subject("batch", first.title)
    else:
        subject = commit_subject("batch", f"{len(touched)} memories")
    source = next(
        (op.request for op in decoded if op.request is not None and (op.request.session_id or op.request.prompt_id)),
        None,
    )
    trailers = [] if source is None else [("Memhtml-Session", source.session_id), ("Memhtml-Prompt", source.prompt_id)]
    return commit_message(subject, trailers)


def _result(
    position: int, op: DecodedOp, outcome: OpOutcome, consolidated_into: int | None, *, preview: bool
) -> OpResult:
    """One op's answer: the original's twelve fields, then `stored`, `outcome`, `retryable`, `changed`,
    `line`, and `redacted`/`stripped` when the notary cleaned the op."""
    error: MemhtmlError | None = outcome.error
    ok = outcome.outcome in ("written", "updated", "unchanged", "consolidated")
    result: OpResult = {
        "index": position,
        "ok": ok,
        "path": outcome.path,
        "deduped": outcome.outcome in ("updated", "unchanged"),
        "existing_path": outcome.path if outcome.outcome in ("updated", "unchanged") else None,
        "code": envelope_code(error) if error is not None else None,
        "error": error.message if error is not None else None,
        "skipped": outcome.outcome == "skipped",
        "conflict": None,
        "near_duplicates": None,
        "consolidated_into": consolidated_into,
        "superseded_path": outcome.superseded[0] if outcome.superseded else None,
        "stored": outcome.stored and not preview,  # a preview stores nothing, whatever it plans
        "outcome": outcome.outcome,
        "retryable": error.retryable if error is not None else False,
        "changed": list(outcome.changed) if outcome.outcome == "updated" else None,
        "line": op.line,
    }
    op.screened.add_to(result)
    return result


def _summary(outcomes: Sequence[OpOutcome]) -> dict[str, int]:
    """The original's strict partition (total = written + deduped + failed + skipped + consolidated),
    then the outcome counts, which partition the ops by what happened to them."""
    counts = {name: 0 for name in ("written", "updated", "unchanged", "refused", "failed", "skipped", "consolidated")}
    for outcome in outcomes:
        counts[outcome.outcome] = counts.get(outcome.outcome, 0) + 1
    return {
        "total": len(outcomes),
        "written": counts["written"],
        "deduped": counts["updated"] + counts["unchanged"],
        "failed": counts["refused"] + counts["failed"],
        "skipped": counts["skipped"],
        "consolidated": counts["consolidated"],
        "updated": counts["updated"],
        "unchanged": counts["unchanged"],
        "refused": counts["refused"],
    }
