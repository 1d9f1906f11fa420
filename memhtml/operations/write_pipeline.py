"""The one write pipeline: planned ops in, one commit and one index pass out, with the assists asked for.

`write`, `task add` and `apply` all store through `store_planned`: open the index, read what the
assists need before the write lock (last-wins slots, near-duplicates, conflict candidates), let the
store plan and commit the batch under its lock (`store.batch`), then index that commit with the
session links it carries. A write is a batch of one; what differs between the doors is only how ops
are decoded and rendered before, and how the outcome is answered after.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, NamedTuple

from memhtml.domain.frames import frame_key
from memhtml.index.file_lookups import active_paths_by_frame_key
from memhtml.index.session_links import SessionLink
from memhtml.operations.indexing import CommandWarning, IndexSession, PhaseProgress, writable_index
from memhtml.store.batch import ActiveOwner, BatchStored, OpOutcome, PlannedOp, store_batch
from memhtml.store.repository import Store

if TYPE_CHECKING:
    from memhtml.domain.conflicts import ClaimFacts
    from memhtml.index.claims import StoredClaim
    from memhtml.index.database import Database
    from memhtml.index.projection import FileProjection
    from memhtml.operations.nearduplicates import NearDuplicateReport
    from memhtml.operations.write import WriteRequest

# From this many ops on, the index is closed while the batch writes its files, so concurrent readers
# are not kept waiting for the whole batch; smaller batches keep it open (reopening has a cost of its own).
RELEASE_INDEX_OPS: Final[int] = 200

# The commit message of a batch as the store planned it: (outcomes, paths touched) -> message.
MessageFor = Callable[[list[OpOutcome], list[str]], str]


class Assists(NamedTuple):
    """The report-only assists a write asks for, and `consolidate` (the one that changes the plan)."""

    detect_conflicts: bool = False
    detect_near_duplicates: bool = False
    consolidate: str | None = None  # "last-wins": one memory per frame slot


NO_ASSISTS: Final[Assists] = Assists()


class PipelineRun(NamedTuple):
    """What the pipeline did: the ops as stored (last-wins may have consolidated some), the store's
    outcomes and commit, and what the assists found."""

    planned: list[PlannedOp]
    stored: BatchStored
    claims: list[ClaimFacts | None]  # per op, what the conflict classifier knows (None: a task, refused)
    candidates: list[StoredClaim] | None  # None: conflicts not asked for, or the index unreadable
    near_duplicates: NearDuplicateReport | None  # None: not asked for
    index_warning: CommandWarning | None  # the commit landed but the index pass did not


def store_planned(
    store: Store,
    requests: Sequence[WriteRequest | None],
    planned: Sequence[PlannedOp],
    *,
    instant: str,
    message_for: MessageFor,
    assists: Assists = NO_ASSISTS,
    atomic: bool = True,
    dry_run: bool = False,
    known: Mapping[str, FileProjection] | None = None,
    progress: PhaseProgress | None = None,
) -> PipelineRun:
    """Store `planned` (one op per request; a request is None where its op was refused before
    rendering) as one commit, then index it. `known`: index rows of the rendered files by blob id,
    reused by the index pass; `progress` as `apply` takes it."""
    reads_first = assists.detect_conflicts or assists.detect_near_duplicates or assists.consolidate is not None
    with writable_index(store, read_before_the_lock=reads_first) as index:
        claims = _claims(requests, planned) if assists.detect_conflicts or assists.consolidate else []
        ops = list(planned)
        if assists.consolidate == "last-wins":
            ops = _last_wins(ops, claims, index.database)
        near = None
        if assists.detect_near_duplicates:
            near = _near_duplicates(index.database, requests, ops)
        candidates = None
        if assists.detect_conflicts and index.database is not None:
            from memhtml.operations.conflicts import stored_candidates

            candidates = stored_candidates(index.database, [claim for claim in claims if claim is not None])
        hooks = _Hooks(index, message_for, release=len(ops) >= RELEASE_INDEX_OPS, progress=progress)
        stored = store_batch(store, ops, hooks, instant=instant, atomic=atomic, dry_run=dry_run)
        index_warning = None
        if stored.committed is not None:
            index_warning = index.follow_commit(_session_links(requests, stored.outcomes), known, progress)
    return PipelineRun(ops, stored, claims, candidates, near, index_warning)


def staging_warning(paths: Sequence[str]) -> CommandWarning:
    """The commit landed, but the user's git index still shows the old state of `paths` (git refused
    the entries, or the index file is missing): a plain `git commit` would undo them until the index is
    brought in line with HEAD, which `doctor --fix` does for every memory path."""
    shown = " ".join(paths) if len(paths) <= 3 else "the paths in this answer"
    return {
        "ok": False,
        "warning": f"committed, but the git index entries of {shown} could not be brought in line with the commit",
        "remedy": "memhtml doctor --fix",
    }


class _Hooks:
    """The store's questions answered from the index session (`store.batch.BatchHooks`)."""

    def __init__(
        self, index: IndexSession, message_for: MessageFor, *, release: bool, progress: PhaseProgress | None
    ) -> None:
        self._index = index
        self._message_for = message_for
        self._release = release
        self._progress = progress

    def owners(self, content_hashes: Sequence[str]) -> dict[str, ActiveOwner]:
        return self._index.owners(content_hashes)

    def message(self, outcomes: list[OpOutcome], touched: list[str]) -> str:
        return self._message_for(outcomes, touched)

    def planned(self) -> None:
        if self._release:
            self._index.release()

    def progress(self, phase: str, done: int, of: int) -> None:
        if self._progress is not None:
            self._progress(phase, done, of)


def _claims(requests: Sequence[WriteRequest | None], planned: Sequence[PlannedOp]) -> list[ClaimFacts | None]:
    from memhtml.operations.conflicts import op_claim

    return [
        op_claim(request, plan.placed) if request is not None and plan.placed is not None else None
        for request, plan in zip(requests, planned, strict=True)
    ]


def _near_duplicates(
    database: Database | None, requests: Sequence[WriteRequest | None], planned: Sequence[PlannedOp]
) -> NearDuplicateReport:
    # Imported here: the embedder loads only for the writes that ask for the assist.
    from memhtml.html.document import parse_memory
    from memhtml.operations.nearduplicates import NearDuplicateText, find_near_duplicates

    items = [
        NearDuplicateText(
            request.claim if request.claim is not None else parse_memory(plan.placed.file_text).gist,
            request.memory_type,
            plan.placed.content_hash,
        )
        if request is not None and plan.placed is not None
        else None
        for request, plan in zip(requests, planned, strict=True)
    ]
    return find_near_duplicates(database, items)


def _last_wins(
    planned: list[PlannedOp], claims: Sequence[ClaimFacts | None], database: Database | None
) -> list[PlannedOp]:
    """One memory per frame slot: every op but the last on a slot is consolidated into the last, and
    the active memories on that slot are superseded by it (archived in the batch's one commit)."""
    slots: dict[str, list[int]] = {}
    for position, (plan, claim) in enumerate(zip(planned, claims, strict=True)):
        key = frame_key(claim.claim) if claim is not None and plan.refusal is None else None
        if key is not None:
            slots.setdefault(key, []).append(position)
    stored: dict[str, list[str]] = {}
    if slots and database is not None:
        stored = active_paths_by_frame_key(database, slots)
    result = list(planned)
    for key, positions in slots.items():
        winner = positions[-1]
        for loser in positions[:-1]:
            result[loser] = result[loser]._replace(consolidated_into=winner)
        result[winner] = result[winner]._replace(supersedes=tuple(stored.get(key, ())))
    return result


def _session_links(requests: Sequence[WriteRequest | None], outcomes: Sequence[OpOutcome]) -> list[SessionLink]:
    return [
        SessionLink(outcome.path, "wrote", request.session_id or "", request.prompt_id, request.turn_uuid)
        for request, outcome in zip(requests, outcomes, strict=True)
        if outcome.stored and outcome.path and request is not None and request.session_id
    ]
