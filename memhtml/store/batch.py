"""Storing a batch of rendered memories under one lock as one commit: dedupe, two-level identity, paths.

Every op gets an outcome before anything touches the tree: `unchanged` (the same article with nothing
new to say), `updated` (the same article with a changed semantic head, applied to that file),
`written` (a new file at a claimed path), or `refused`. Atomic batches stop at the first refusal and
report every other op `skipped`; nothing is written. A single `write` is a batch of one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, NamedTuple, Protocol

from memhtml.contracts.errors import FollowsRefusal, GitFailure, MemhtmlError, StorageFailure, WriteConflict
from memhtml.contracts.paths import MAX_COLLISION_ORDINAL, memory_filename
from memhtml.html.document import parse_memory
from memhtml.html.headedit import set_meta
from memhtml.html.identity import Restatement, SemanticHead, restate
from memhtml.store.archiving import archive_destination, archived_text, superseding_text
from memhtml.store.files import linked_component, linked_refusal
from memhtml.store.gitcmd import missing_object, run_git
from memhtml.store.repository import Store
from memhtml.store.transaction import (
    Committed,
    FileChange,
    ModificationGuard,
    commit_changes,
    exclusive,
    read_committed,
)

# Ops checked between two progress reports: a report per op would cost more than a person can read.
PROGRESS_OPS: Final[int] = 100


class ActiveOwner(NamedTuple):
    """The active, non-task memory holding a content hash, and its semantic head when the index knows
    it (None: compare with the file)."""

    path: str
    head: SemanticHead | None = None


# Answers "which active, non-task memory has each of these content hashes?" (the index, or a scan).
ActiveOwners = Callable[[Sequence[str]], dict[str, ActiveOwner]]


class PlacedMemory(NamedTuple):
    """A rendered, validated memory file and the rules that will give it a path."""

    file_text: str
    content_hash: str
    memory_type: str
    directory: str
    slug: str
    date_prefix: str | None
    explicit_path: str | None


class PlannedOp(NamedTuple):
    """One op as the store receives it: rendered and checked, or already refused by its door.

    `consolidated_into` names the later op of the batch that takes this op's slot (last-wins), so this
    one stores nothing; `supersedes` lists active memories this op's slot displaces, archived in the
    batch's commit with the winner linked to them.
    """

    placed: PlacedMemory | None
    restatement: Restatement | None = None
    refusal: MemhtmlError | None = None
    consolidated_into: int | None = None
    supersedes: tuple[str, ...] = ()


class OpOutcome:
    """What became of one op; the batch settles it as the plan goes (a refusal can turn the rest to
    `skipped`, a later op can supersede what an earlier one wrote)."""

    __slots__ = ("changed", "error", "outcome", "path", "superseded")

    def __init__(
        self,
        outcome: str,  # written | unchanged | updated | refused | skipped | consolidated
        path: str | None = None,
        changed: tuple[str, ...] = (),
        error: MemhtmlError | None = None,
    ) -> None:
        self.outcome = outcome
        self.path = path
        self.changed = changed
        self.error = error
        self.superseded: list[str] = []  # archive paths of the memories this op displaced

    def __repr__(self) -> str:
        return f"OpOutcome({self.outcome!r}, path={self.path!r}, changed={self.changed!r})"

    @property
    def stored(self) -> bool:
        return self.outcome in ("written", "updated")


class BatchStored(NamedTuple):
    outcomes: list[OpOutcome]
    committed: Committed | None  # None: nothing to commit (all unchanged, refused, a dry run)
    touched: Sequence[str] = ()  # paths written or rewritten, in first-touch order


class BatchHooks(Protocol):
    """What a batch asks of its caller while the store plans and commits it."""

    def owners(self, content_hashes: Sequence[str]) -> dict[str, ActiveOwner]:
        """The active, non-task memory holding each of `content_hashes` (asked once, under the lock)."""
        ...

    def message(self, outcomes: list[OpOutcome], touched: list[str]) -> str:
        """The commit message for the batch as planned."""
        ...

    def planned(self) -> None:
        """The plan no longer needs `owners`: what answered it may be let go of."""
        ...

    def progress(self, phase: str, done: int, of: int) -> None:
        """("checking", ops checked, ops): (0, ops) before the write lock is taken, so a wait for it
        shows, then as the ops are checked under it; ("writing", files written, files) while a large
        batch is written."""
        ...


def store_batch(
    store: Store,
    ops: Sequence[PlannedOp],
    hooks: BatchHooks,
    *,
    instant: str,
    atomic: bool = True,
    dry_run: bool = False,
) -> BatchStored:
    """Plan every op under the write lock, then (unless refused atomically or dry) commit them as one."""

    def checking(done: int, of: int) -> None:
        hooks.progress("checking", done, of)

    def writing(done: int, of: int) -> None:
        hooks.progress("writing", done, of)

    checking(0, len(ops))
    with exclusive(store):
        plan = _Plan(store, ops, hooks.owners, instant)
        outcomes = plan.run(stop_at_refusal=atomic, progress=checking)
        if atomic and any(outcome.outcome == "refused" for outcome in outcomes):
            for outcome in outcomes:
                if outcome.outcome != "refused":
                    outcome.outcome, outcome.path, outcome.changed, outcome.superseded = "skipped", None, (), []
            return BatchStored(outcomes, None)
        plan.settle()
        plan.supersede(outcomes)
        changes = plan.changes()
        hooks.planned()
        if dry_run or not changes:
            return BatchStored(outcomes, None, plan.touched)
        committed = commit_changes(store, changes, hooks.message(outcomes, plan.touched), progress=writing)
    return BatchStored(outcomes, committed, plan.touched)


class _Plan:
    """The batch's view of the store while it is being planned: pending texts, claimed paths, hashes."""

    def __init__(self, store: Store, ops: Sequence[PlannedOp], owners: ActiveOwners, instant: str) -> None:
        self.store = store
        self.ops = ops
        self.instant = instant
        self.claimer = PathClaimer(store.root)
        hashes = [op.placed.content_hash for op in ops if op.placed is not None and op.placed.memory_type != "task"]
        found = owners(list(dict.fromkeys(hashes))) if hashes else {}
        # A restatement the index shows changes nothing needs no file read; the others are compared
        # with the committed file, which also proves the owner is committed (an uncommitted leftover
        # must not swallow a write).
        self.covered: set[int] = set()
        to_read = [path for op in ops for path in op.supersedes]
        for position, op in enumerate(ops):
            owner = found.get(op.placed.content_hash) if op.placed is not None else None
            if owner is None:
                continue
            if owner.head is not None and op.restatement is not None and owner.head.covers(op.restatement):
                self.covered.add(position)
            else:
                to_read.append(owner.path)
        self.committed = read_committed(store, to_read)
        self.owner_of = {
            digest: owner.path
            for digest, owner in found.items()
            if owner.path in self.committed or owner.head is not None
        }
        self.moves: list[FileChange] = []
        self.guard = ModificationGuard(store)
        self.pending: dict[str, str] = {}  # path -> text this batch will leave there
        self.new_paths: set[str] = set()
        self.batch_owner: dict[str, str] = {}  # content hash -> path, for ops later in the batch
        self.restated_by: dict[str, list[OpOutcome]] = {}  # committed path -> the ops that updated it
        self.touched: list[str] = []

    def run(self, *, stop_at_refusal: bool, progress: Callable[[int, int], None] | None = None) -> list[OpOutcome]:
        outcomes: list[OpOutcome] = []
        for position, op in enumerate(self.ops):
            try:
                outcome = self._one(op, covered=position in self.covered)
            except MemhtmlError as error:
                outcome = OpOutcome("refused", error=error)
            outcomes.append(outcome)
            if progress is not None and (len(outcomes) % PROGRESS_OPS == 0 or len(outcomes) == len(self.ops)):
                progress(len(outcomes), len(self.ops))
            if outcome.outcome == "refused" and stop_at_refusal:
                outcomes += [OpOutcome("skipped") for _ in self.ops[len(outcomes) :]]
                break
        # An op that gave its slot to a later op shares that op's fate: it kept nothing if that failed.
        for op, outcome in zip(self.ops, outcomes, strict=True):
            if op.consolidated_into is None or outcome.outcome != "consolidated":
                continue
            keeper = outcomes[op.consolidated_into]
            if keeper.outcome == "refused" and keeper.error is not None and not stop_at_refusal:
                message = f"its slot's value was to be kept by op {op.consolidated_into}, which was refused"
                outcome.outcome, outcome.error = "refused", FollowsRefusal(keeper.error, message)
            elif keeper.outcome == "skipped":
                outcome.outcome = "skipped"
        return outcomes

    def _one(self, op: PlannedOp, *, covered: bool) -> OpOutcome:
        if op.consolidated_into is not None:
            return OpOutcome("consolidated")
        if op.refusal is not None or op.placed is None:
            raise op.refusal or StorageFailure("an op reached the store without a rendered file", [])
        for displaced in op.supersedes:
            # The memories this op's slot displaces are moved in the same commit: check them now, so a
            # refusal names this op (and --continue-on-error still stores the others).
            if displaced in self.committed:
                self.guard.check(displaced, self.committed[displaced])
        placed = op.placed
        owner = self._owner(placed)
        if owner is not None:
            if covered and owner not in self.pending:
                return OpOutcome("unchanged", owner)
            return self._restate(owner, op.restatement)
        path = self._claim(placed)
        self.pending[path] = placed.file_text
        self.new_paths.add(path)
        self.touched.append(path)
        if placed.memory_type != "task":
            self.batch_owner[placed.content_hash] = path
        return OpOutcome("written", path)

    def _owner(self, placed: PlacedMemory) -> str | None:
        if placed.memory_type == "task":  # tasks are never deduped, in either direction
            return None
        if placed.content_hash in self.batch_owner:
            return self.batch_owner[placed.content_hash]
        return self.owner_of.get(placed.content_hash)

    def _restate(self, path: str, restatement: Restatement | None) -> OpOutcome:
        if path not in self.pending and path not in self.committed:
            # Covered by the index for an earlier op, and now restated differently: read it.
            self.committed.update(read_committed(self.store, [path]))
        current = self.pending.get(path, self.committed.get(path))
        if restatement is None or current is None:
            return OpOutcome("unchanged", path)
        restated = restate(current, restatement, self.instant)
        if not restated.changed:
            return OpOutcome("unchanged", path)
        if path not in self.new_paths and path not in self.pending:
            self.guard.check(path, self.committed[path])
        self.pending[path] = restated.text
        if path not in self.touched:
            self.touched.append(path)
        outcome = OpOutcome("updated", path, restated.changed)
        self.restated_by.setdefault(path, []).append(outcome)
        return outcome

    def settle(self) -> None:
        """Ops of one batch that restate a stored memory back to what it already says (A sets 0.9,
        B sets it back to 0.5) change nothing in the end: no rewrite, and their outcomes say so, so
        re-applying a landed batch commits nothing."""
        for path, restated in self.restated_by.items():
            committed = self.committed.get(path)
            if committed is None or path in self.new_paths:
                continue
            stamp = parse_memory(committed).updated or ""
            if set_meta(self.pending[path], "memhtml-updated", stamp) != committed:
                continue
            del self.pending[path]
            self.touched.remove(path)
            for outcome in restated:
                outcome.outcome, outcome.changed = "unchanged", ()

    def _claim(self, placed: PlacedMemory) -> str:
        if placed.explicit_path is None:
            return self.claimer.claim(placed.directory, placed.slug, placed.date_prefix)
        path = placed.explicit_path
        if not self.claimer.take(path):
            raise WriteConflict(
                f"write conflict on {path}: a memory already occupies this path; nothing was written",
                [f"memhtml read {path}", "drop the explicit path and let placement pick a free one"],
            )
        return path

    def supersede(self, outcomes: list[OpOutcome]) -> None:
        """Archive the memories each surviving op displaces and link the op's file to them (last-wins)."""
        retired: set[str] = set()
        for op, outcome in zip(self.ops, outcomes, strict=True):
            if outcome.path is None or outcome.outcome not in ("written", "updated", "unchanged"):
                continue
            for displaced in op.supersedes:
                if displaced == outcome.path or displaced in retired or displaced not in self.committed:
                    continue
                self.guard.check(displaced, self.committed[displaced])
                retired.add(displaced)
                winner = outcome.path
                text = self.pending.get(winner, self.committed.get(winner))
                if text is None:
                    continue
                destination = archive_destination(self.claimer, displaced, int(self.instant[:4]))
                text, valid_from = superseding_text(text, destination, self.instant)
                if winner not in self.new_paths:
                    text = set_meta(text, "memhtml-updated", self.instant)
                    if outcome.outcome == "unchanged":
                        self.guard.check(winner, self.committed[winner])
                        outcome.outcome, outcome.changed = "updated", ("supersedes",)
                self.pending[winner] = text
                if winner not in self.touched:
                    self.touched.append(winner)
                archived = archived_text(self.committed[displaced], self.instant, winner, valid_from)
                self.moves.append(FileChange(destination, archived, source=displaced))
                outcome.superseded.append(destination)

    def changes(self) -> list[FileChange]:
        return [*self.moves] + [
            FileChange(path, self.pending[path], rewrite=path not in self.new_paths)
            for path in self.touched
            if path in self.new_paths or self.pending[path] != self.committed.get(path)
        ]


class PathClaimer:
    """Free paths for one transaction. A path is taken if a file is there, if HEAD has it (even when
    deleted from disk), if an archived copy of it exists (so old hrefs never point at an unrelated
    memory), or if this transaction already claimed it. Each directory is listed in HEAD once."""

    def __init__(self, root: Path, vacating: frozenset[str] = frozenset()) -> None:
        self.root = root
        self.vacating = vacating  # paths this transaction moves away, free to be refilled
        self.claimed: set[str] = set()
        self._head_names: dict[str, frozenset[str]] = {}
        self._archive_years: list[str] | None = None
        self._checked_directories: set[str] = set()

    def claim(self, directory: str, slug: str, date_prefix: str | None) -> str:
        for ordinal in range(1, MAX_COLLISION_ORDINAL + 1):
            candidate = f"{directory}/{memory_filename(slug, ordinal, date_prefix)}"
            if self.take(candidate):
                return candidate
        raise StorageFailure(f"no free path for `{slug}` in {directory} after {MAX_COLLISION_ORDINAL} tries", [])

    def take(self, candidate: str) -> bool:
        """Claim `candidate` if it is free; False when something holds it."""
        if candidate in self.claimed or (candidate not in self.vacating and self.occupied(candidate)):
            return False
        self.claimed.add(candidate)
        return True

    def occupied(self, candidate: str) -> bool:
        # Refused before any lookup through a link: whether a file exists out there is none of ours.
        directory = candidate.rsplit("/", 1)[0]
        if directory not in self._checked_directories:
            linked = linked_component(self.root, directory)
            if linked is not None:
                raise linked_refusal(linked, "written")
            self._checked_directories.add(directory)
        if os.path.lexists(self.root / candidate) or candidate in self._names_in_head(candidate):
            return True
        return any(os.path.lexists(self.root / "archive" / year / candidate) for year in self.archive_years())

    def archive_years(self) -> list[str]:
        if self._archive_years is None:
            try:
                entries = os.scandir(self.root / "archive")
            except FileNotFoundError:
                self._archive_years = []
            else:
                with entries:
                    self._archive_years = [entry.name for entry in entries if entry.is_dir() and entry.name.isdigit()]
        return self._archive_years

    def _names_in_head(self, path: str) -> frozenset[str]:
        directory = path.rsplit("/", 1)[0] + "/"
        if directory not in self._head_names:
            try:
                listing = ["ls-tree", "-z", "--name-only", "--full-tree", "HEAD", "--", directory]
                output = run_git(self.root, listing).stdout
            except GitFailure as failure:
                # A store always has a HEAD; listing one of its directories fails only on a tree git cannot read.
                if type(failure) is GitFailure:
                    shown = directory.rstrip("/")
                    raise missing_object(self.root, f"a tree on the way to {shown} in HEAD") from failure
                raise
            self._head_names[directory] = frozenset(
                name.decode("utf-8", "surrogateescape") for name in output.split(b"\0") if name
            )
        return self._head_names[directory]
