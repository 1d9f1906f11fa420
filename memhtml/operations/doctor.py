"""`doctor`: is this store healthy, and if not, what exactly is wrong and what fixes it.

It reads every file under the buckets (HEAD's version, or the working tree's where that differs), checks
each with the validator and the safety notary, compares the index with what it found, and asks the index
about links, state rows, inboxes and tasks. `--fix` repairs what has one safe repair (dangling links in
one commit, orphan state rows, index drift by a rebuild, git lock files a killed git left) and then
checks again, so the report always describes the store as it now is. An unhealthy store exits 1.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple, NotRequired, TypedDict, cast

from memhtml.contracts.errors import DamagedFile, DamagedStateDatabase, MemhtmlError
from memhtml.contracts.instants import format_instant
from memhtml.index import health
from memhtml.index.database import open_database
from memhtml.index.parallel import CHUNK_FILES, in_order, projection_pool
from memhtml.index.setaside import set_aside_state
from memhtml.index.vectors import vector_state
from memhtml.index.watermark import watermark
from memhtml.operations.config import load_config
from memhtml.operations.embedding import configured_space
from memhtml.operations.filecheck import FileItem, FileVerdict, UnsafeFinding, inspect_files
from memhtml.operations.indexing import PhaseProgress, fresh_index, progress_phase, rebuild_index
from memhtml.operations.statefile import export_state, import_state, sidecar_problem
from memhtml.store.commit import commit_message, commit_subject
from memhtml.store.gitcmd import detached_head, head_sha
from memhtml.store.gitindex import examine_index, repair_index
from memhtml.store.health_listing import (
    BucketFile,
    bucket_files,
    file_contents,
    interrupted_writes,
    leftover_git_locks,
    missing_objects,
    remove_git_lock,
    write_lock_held,
)
from memhtml.store.repair import DanglingLink, repair_dangling_links
from memhtml.store.repository import Store, open_store
from memhtml.store.supportdir import (
    refuse_damaged_support_directory,
    repair_support_directory,
    support_directory_damaged,
)


class DanglingEdge(TypedDict):
    """An authored link to no file of the tree, and the archived copy of its destination it can point at."""

    srcPath: str
    rel: str
    dstPath: str
    rewriteTo: str | None


class OverdueTask(TypedDict):
    """An active task, not done, past its due date."""

    path: str
    taskStatus: str
    dueAt: str


class StaleBlocker(TypedDict):
    """An open task still blocked by a task that is archived or gone."""

    path: str
    blockerPath: str
    blockerState: str


class UntypedEntity(TypedDict):
    """An entity written without a usable `type:` prefix, and how many files name it."""

    entityName: str
    files: int


class IndexDriftReport(TypedDict):
    """The index rows that disagree with the tree: memories with no row, rows with no file, stale rows."""

    missing: list[str]
    extra: list[str]
    stale: list[str]


class UnparseableFile(TypedDict):
    """A memory file that fails validation, and every violation, joined."""

    path: str
    reason: str


class FileWarnings(TypedDict):
    """A memory file's validation warnings."""

    path: str
    warnings: Sequence[str]


class UnsafeFile(TypedDict):
    """A file the safety notary flags, and its findings (never a secret's value)."""

    path: str
    findings: Sequence[UnsafeFinding]


class StrayFile(TypedDict):
    """A file in a bucket that is no memory (an `.html` file at no memory path, a symlink)."""

    path: str
    reason: str | None


class StatusMismatch(TypedDict):
    """A memory whose stated status does not fit the bucket it lies in."""

    path: str
    status: str | None
    bucket: str


class StaleContentHash(TypedDict):
    """A memory whose stated content hash is not the hash of its content."""

    path: str
    stated: str
    actual: str


class DuplicateActiveHash(TypedDict):
    """Active memories that hold the same content (the index keeps one of them)."""

    contentHash: str
    paths: list[str]


class LeftoverLockEntry(TypedDict):
    """A git lock file a killed git left, and how old it is."""

    name: str
    ageSeconds: float


class MissingObjectEntry(TypedDict):
    """An object git's history refers to that the repository does not hold."""

    kind: str
    object: str


class SetAside(TypedDict):
    """What `doctor --fix` renamed aside before examining: a `.memhtml` that is no directory, a damaged
    state database, and the counters restored into the new one (or why they could not be)."""

    supportDirectory: str | None
    stateDatabase: str | None
    stateRestored: int | str | None


class DoctorRepairs(TypedDict):
    """What `doctor --fix` repaired: links rewritten or dropped, state rows pruned, index rebuilt, locks removed."""

    rewritten: int
    dropped: int
    failedWrites: list[dict[str, str]]  # {path, reason} of link sources left as they were
    commitSha: str | None
    prunedAccessRows: int
    indexRebuilt: bool
    removedLocks: list[str]
    gitIndexEntries: int
    stateSidecarCommitSha: str | None
    setAside: NotRequired[SetAside]


class DoctorReport(TypedDict):
    """The `doctor.report` data: every finding about the store, whether it is healthy, what fixes it.

    Each key after `headSha` is filled in as the examination goes, so all are declared NotRequired; by
    the time `examine` returns every one is there except the index's own findings (the inbox, task and
    entity counts and the vector keys, left out when the index cannot be opened), `indexError` and
    `indexErrorRemedy` (only then), and `repaired` (only with `--fix`).
    """

    root: str
    headSha: str | None
    dangling: NotRequired[list[DanglingEdge]]
    orphanAccessRows: NotRequired[list[str]]
    inboxDepth: NotRequired[int]
    inboxCrowded: NotRequired[bool]
    inboxTaskDepth: NotRequired[int]
    inboxTasksCrowded: NotRequired[bool]
    overdueTasks: NotRequired[list[OverdueTask]]
    staleBlockers: NotRequired[list[StaleBlocker]]
    untypedEntities: NotRequired[list[UntypedEntity]]
    untypedEntityTotal: NotRequired[int]
    indexFresh: NotRequired[bool]
    indexHeadSha: NotRequired[str | None]
    indexDrift: NotRequired[IndexDriftReport | None]
    indexErrorRemedy: NotRequired[str]
    embedModelMatches: NotRequired[bool]
    storedEmbedModel: NotRequired[str | None]
    configuredEmbedModel: NotRequired[str | None]
    vectorCoverage: NotRequired[float]
    vectorCoverageFloor: NotRequired[float]
    vectorCoverageLow: NotRequired[bool]
    chunks: NotRequired[int]
    embeddings: NotRequired[int]
    vectorCoverageRemedy: NotRequired[str | None]
    filesChecked: NotRequired[int]
    unparseable: NotRequired[list[UnparseableFile]]
    warnings: NotRequired[list[FileWarnings]]
    unsafeContent: NotRequired[list[UnsafeFile]]
    strayFiles: NotRequired[list[StrayFile]]
    statusMismatch: NotRequired[list[StatusMismatch]]
    staleContentHashes: NotRequired[list[StaleContentHash]]
    duplicateActiveHashes: NotRequired[list[DuplicateActiveHash]]
    dirty: NotRequired[list[str]]
    interruptedWrites: NotRequired[list[str]]
    leftoverLocks: NotRequired[list[LeftoverLockEntry]]
    stuckSleepRuns: NotRequired[list[str]]  # always empty: doctor reports none yet
    missingObjects: NotRequired[list[MissingObjectEntry]]
    stateSidecarProblem: NotRequired[str | None]
    detachedHead: NotRequired[str | None]
    gitIndex: NotRequired[str]
    staleIndexEntries: NotRequired[list[str]]
    indexError: NotRequired[str]
    healthy: NotRequired[bool]
    remedies: NotRequired[list[str]]
    repaired: NotRequired[DoctorRepairs]


class DoctorAnswer(NamedTuple):
    data: DoctorReport
    healthy: bool


def doctor(
    root: Path, *, fix: bool = False, now: dt.datetime | None = None, progress: PhaseProgress | None = None
) -> DoctorAnswer:
    """`doctor`: examine the store (and with `fix`, repair it and examine it again); `progress` hears
    ("checking", files, of), and ("checking again", files, of) after a repair."""
    moment = now or dt.datetime.now(dt.UTC)
    # Replays what a killed writer left, when no writer is live; a `.memhtml` that is not a directory is
    # this command's to repair (with `fix`) or to name.
    store = open_store(root, support_directory_checked=False)
    set_aside: SetAside = {"supportDirectory": None, "stateDatabase": None, "stateRestored": None}
    if support_directory_damaged(store.root):
        if not fix:
            refuse_damaged_support_directory(store.root)
        set_aside["supportDirectory"] = repair_support_directory(store.root, format_instant(moment))
    if fix:
        _set_aside_damaged_state(store, moment, set_aside)
    # Every listing of the working tree reads git's index: one git cannot read is put right first.
    rebuilt_index = 0
    damaged = examine_index(store.root)
    if damaged.state == "damaged":
        if not fix:
            raise DamagedFile(
                "git's index (.git/index) cannot be read, so the working tree cannot be examined; the memories "
                "themselves are safe in HEAD",
                [f"memhtml doctor --fix --repo {store.root}"],
            )
        rebuilt_index = repair_index(store.root, store.git_dir, damaged)
    found = examine(store, moment, progress=progress_phase(progress, "checking"))
    if not fix:
        return DoctorAnswer(found, found["healthy"])
    repaired = _repair(store, found, moment)
    repaired["gitIndexEntries"] += rebuilt_index
    repaired["setAside"] = set_aside
    after = examine(store, moment, progress=progress_phase(progress, "checking again"))
    after["repaired"] = repaired
    return DoctorAnswer(after, after["healthy"])


def _set_aside_damaged_state(store: Store, moment: dt.datetime, set_aside: SetAside) -> None:
    """A state database that cannot be opened is renamed aside, and the counters `state export` last
    committed are restored into the empty one the next open creates (a damaged index is the rebuild's
    to set aside: everything in it comes back from git)."""
    try:
        with open_database(store.root):
            return
    except DamagedStateDatabase:
        aside = set_aside_state(store.root, format_instant(moment))
    except MemhtmlError:
        return  # not the state database's damage: the examination names it
    set_aside["stateDatabase"] = None if aside is None else aside.relative_to(store.root).as_posix()
    try:
        set_aside["stateRestored"] = import_state(store.root)["restored"]
    except MemhtmlError as failure:
        set_aside["stateRestored"] = f"{failure.code}: {failure.message}"


def examine(store: Store, moment: dt.datetime, *, progress: Callable[[int, int], None] | None = None) -> DoctorReport:
    """The `doctor.report` data of the store as it stands (`healthy` included); `progress` hears
    (files checked, of) as the checks come in."""
    survey = bucket_files(store)
    files = survey.files
    verdicts = _inspected(store, files, progress)
    head = head_sha(store.root)
    data: DoctorReport = {"root": str(store.root), "headSha": head}
    present = frozenset(item.path for item in files)
    # A second active copy of an article is left out of the index on purpose (and reported on its own).
    twins = {path for group in _duplicate_active_hashes(verdicts) for path in group["paths"]}
    valid_at_head = {
        verdict.path: verdict.blob
        for verdict in verdicts
        if verdict.memory and not verdict.violations and not verdict.in_worktree_only and verdict.path not in twins
    }
    # The index may hold either version of an uncommitted path (`index update` projects the working tree).
    index_problem = _examine_index(
        store, data, present, valid_at_head, overlay=frozenset(twins) | survey.uncommitted, moment=moment
    )
    _report_files(data, verdicts)
    data["dirty"] = sorted(survey.uncommitted)
    journals = [] if write_lock_held(store) else interrupted_writes(store)
    data["interruptedWrites"] = journals
    data["leftoverLocks"] = [{"name": lock.name, "ageSeconds": lock.age_seconds} for lock in leftover_git_locks(store)]
    data["stuckSleepRuns"] = []
    _examine_repository(store, data)
    if index_problem is not None:
        data["indexError"] = index_problem
    data["healthy"] = _healthy(data)
    data["remedies"] = _remedies(data)
    return data


def _examine_repository(store: Store, data: DoctorReport) -> None:
    """What git itself must hold for the store to be safe to write: every object its history refers
    to, a branch checked out, and git's index in line with HEAD for the memory paths (a plain `git
    commit` records the index, so a stale entry there deletes or reverts a memory)."""
    data["missingObjects"] = [{"kind": item.kind, "object": item.object_id} for item in missing_objects(store)]
    data["stateSidecarProblem"] = sidecar_problem(store.root)
    data["detachedHead"] = detached_head(store.git_dir)
    examination = examine_index(store.root)
    data["gitIndex"] = examination.state
    data["staleIndexEntries"] = sorted(examination.stale)


def _inspected(
    store: Store, files: Sequence[BucketFile], progress: Callable[[int, int], None] | None = None
) -> list[FileVerdict]:
    """Every file checked, in workers for a large store (parsing is pure Python and CPU-bound)."""

    def chunks() -> Iterator[list[FileItem]]:
        for slice_ in file_contents(store, files):
            items = [(item.path, item.blob, item.in_worktree_only, item.symlink, content) for item, content in slice_]
            for start in range(0, len(items), CHUNK_FILES):
                yield items[start : start + CHUNK_FILES]

    verdicts: list[FileVerdict] = []
    checked = 0
    with projection_pool(len(files)) as pool:
        # A few chunks read ahead of the checking, never every file's bytes at once.
        for chunk, found in in_order(pool, chunks(), inspect_files):
            verdicts.extend(found)  # files that are not ours to judge (`.gitkeep`) have no verdict
            checked += len(chunk)
            if progress is not None:
                progress(checked, len(files))
    return verdicts


def _examine_index(
    store: Store,
    data: DoctorReport,
    present: frozenset[str],
    valid_at_head: dict[str, str],
    *,
    overlay: frozenset[str],
    moment: dt.datetime,
) -> str | None:
    try:
        with fresh_index(store) as database:
            indexed_head, indexed_overlay = watermark(database)[:2]
            inbox, inbox_tasks = health.inbox_depths(database)
            untyped, untyped_total = health.untyped_entities(database)
            drift = health.index_drift(database, valid_at_head, frozenset(indexed_overlay) | overlay)
            # `memhtml.index.health` answers untyped rows: these are their shapes.
            data.update(
                {
                    "dangling": cast("list[DanglingEdge]", health.dangling_edges(database, present)),
                    "orphanAccessRows": health.orphan_access_rows(database),
                    "inboxDepth": inbox,
                    "inboxCrowded": inbox > health.INBOX_CROWDED_ABOVE,
                    "inboxTaskDepth": inbox_tasks,
                    "inboxTasksCrowded": inbox_tasks > health.INBOX_TASKS_CROWDED_ABOVE,
                    "overdueTasks": cast(
                        "list[OverdueTask]", health.overdue_tasks(database, format_instant(moment)[:10])
                    ),
                    "staleBlockers": cast("list[StaleBlocker]", health.stale_blockers(database)),
                    "untypedEntities": cast("list[UntypedEntity]", untyped),
                    "untypedEntityTotal": untyped_total,
                    "indexFresh": indexed_head == data["headSha"],
                    "indexHeadSha": indexed_head,
                    "indexDrift": cast("IndexDriftReport", drift.as_data()),
                }
            )
            vectors = vector_state(database)
    except MemhtmlError as failure:
        data.update(
            {"indexFresh": False, "indexHeadSha": None, "dangling": [], "orphanAccessRows": [], "indexDrift": None}
        )
        if not failure.retryable and failure.suggestions:
            data["indexErrorRemedy"] = failure.suggestions[0]
        return f"{failure.code}: {failure.message}"
    configured = configured_space()
    floor = load_config().coverage_floor()
    low = configured is not None and vectors.coverage < floor
    data.update(
        {
            "embedModelMatches": vectors.space is None or vectors.space == configured,
            "storedEmbedModel": vectors.space,
            "configuredEmbedModel": configured,
            "vectorCoverage": vectors.coverage,
            "vectorCoverageFloor": floor,
            "vectorCoverageLow": low,
            "chunks": vectors.chunks,
            "embeddings": vectors.embeddings,
            "vectorCoverageRemedy": "memhtml index embed" if low else None,
        }
    )
    return None


def _report_files(data: DoctorReport, verdicts: Sequence[FileVerdict]) -> None:
    data["filesChecked"] = len(verdicts)
    data["unparseable"] = [
        {"path": verdict.path, "reason": "; ".join(verdict.violations)}
        for verdict in verdicts
        if verdict.memory and verdict.violations
    ]
    data["warnings"] = [
        {"path": verdict.path, "warnings": verdict.warnings}
        for verdict in verdicts
        if verdict.memory and verdict.warnings
    ]
    data["unsafeContent"] = [
        {"path": verdict.path, "findings": verdict.unsafe} for verdict in verdicts if verdict.unsafe
    ]
    data["strayFiles"] = [
        {"path": verdict.path, "reason": verdict.stray_reason}
        for verdict in verdicts
        if verdict.stray_reason is not None
    ]
    data["statusMismatch"] = [
        {"path": verdict.path, "status": verdict.status, "bucket": verdict.path.split("/", 1)[0]}
        for verdict in verdicts
        if verdict.status_mismatch
    ]
    data["staleContentHashes"] = [
        {"path": verdict.path, "stated": verdict.stated_hash, "actual": verdict.content_hash}
        for verdict in verdicts
        if verdict.stated_hash is not None
        and verdict.content_hash is not None
        and verdict.stated_hash != verdict.content_hash
    ]
    data["duplicateActiveHashes"] = _duplicate_active_hashes(verdicts)


def _duplicate_active_hashes(verdicts: Sequence[FileVerdict]) -> list[DuplicateActiveHash]:
    owners: dict[str, list[str]] = defaultdict(list)
    for verdict in verdicts:
        if verdict.dedupes and verdict.content_hash is not None:
            owners[verdict.content_hash].append(verdict.path)
    return [
        {"contentHash": content_hash, "paths": paths}
        for content_hash, paths in sorted(owners.items())
        if len(paths) > 1
    ]


# What makes a store unhealthy: a finding a user must act on. Overdue tasks, stale blockers, untyped
# entities and stated hashes that went stale are reported but are the normal life of a store.
PROBLEM_LISTS = (
    "dangling",
    "orphanAccessRows",
    "stuckSleepRuns",
    "warnings",
    "unparseable",
    "unsafeContent",
    "strayFiles",
    "statusMismatch",
    "duplicateActiveHashes",
    "interruptedWrites",
    "leftoverLocks",
    "missingObjects",
    "staleIndexEntries",
)


def _healthy(data: DoctorReport) -> bool:
    drift = data.get("indexDrift")
    return (
        not any(data.get(name) for name in PROBLEM_LISTS)
        and not data.get("inboxCrowded")
        and not data.get("inboxTasksCrowded")
        and bool(data.get("indexFresh"))
        and drift is not None
        and not any(drift.values())
        and bool(data.get("embedModelMatches", True))
        and not data.get("vectorCoverageLow")
        and "indexError" not in data
        and data.get("detachedHead") is None
        and data.get("gitIndex") == "ok"
        and data.get("stateSidecarProblem") is None
    )


def _remedies(data: DoctorReport) -> list[str]:
    remedies: list[str] = []
    root = data["root"]
    if data.get("missingObjects"):
        remedies.append(f"git -C {root} fsck --full")
    if data.get("detachedHead") is not None:
        remedies.append(f"git -C {root} switch -")
    if data.get("stateSidecarProblem") is not None:
        remedies.append("memhtml state export")
    fixable = ("dangling", "orphanAccessRows", "leftoverLocks", "staleIndexEntries")
    if any(data.get(name) for name in fixable) or data.get("gitIndex", "ok") != "ok":
        remedies.append("memhtml doctor --fix")
    if data.get("indexErrorRemedy") and data["indexErrorRemedy"] not in remedies:
        remedies.append(data["indexErrorRemedy"])
    elif "indexError" in data or not data.get("indexFresh") or any((data.get("indexDrift") or {}).values()):
        remedies.append("memhtml index rebuild")
    if data.get("vectorCoverageLow") or not data.get("embedModelMatches", True):
        remedies.append("memhtml index embed")
    if data.get("unsafeContent"):
        remedies.append(
            "rewrite the files named in unsafeContent by hand; a secret that was committed stays in git "
            "history until the history is rewritten and the secret is rotated"
        )
    if data.get("unparseable") or data.get("strayFiles") or data.get("statusMismatch"):
        remedies.append("memhtml validate <path> names every violation of a file")
    if data.get("inboxCrowded") or data.get("inboxTasksCrowded"):
        remedies.append("memhtml list --under areas/inbox, then archive or move what is settled")
    return remedies


def _repair(store: Store, found: DoctorReport, moment: dt.datetime) -> DoctorRepairs:
    repaired: DoctorRepairs = {
        "rewritten": 0,
        "dropped": 0,
        "failedWrites": [],
        "commitSha": None,
        "prunedAccessRows": 0,
        "indexRebuilt": False,
        "removedLocks": [],
        "gitIndexEntries": 0,
        "stateSidecarCommitSha": None,
    }
    for lock in leftover_git_locks(store):
        if remove_git_lock(store, lock):
            repaired["removedLocks"].append(lock.name)
    if found["gitIndex"] != "ok" or found["staleIndexEntries"]:
        # Examined again: a lock just removed may have kept a write from bringing its entries in line.
        repaired["gitIndexEntries"] = repair_index(store.root, store.git_dir, examine_index(store.root))
    if "indexError" in found or any((found["indexDrift"] or {}).values()):
        rebuild_index(store.root)
        repaired["indexRebuilt"] = True
    if found["dangling"]:
        links = [
            DanglingLink(item["srcPath"], item["rel"], item["dstPath"], item["rewriteTo"]) for item in found["dangling"]
        ]
        count = len(links)
        noun = "link" if count == 1 else "links"
        message = commit_message(commit_subject("link", f"repair {count} dangling {noun}"))
        outcome = repair_dangling_links(store, links, format_instant(moment), message)
        repaired.update({"rewritten": outcome.rewritten, "dropped": outcome.dropped, "failedWrites": outcome.failed})
        if outcome.committed is not None:
            repaired["commitSha"] = outcome.committed.landed.sha
    if found["stateSidecarProblem"] is not None:
        # Nothing in an unreadable sidecar can be imported; it is written anew from the state database
        # (its old bytes stay in git's history).
        repaired["stateSidecarCommitSha"] = export_state(store.root)["commitSha"]
    if found["orphanAccessRows"]:
        with fresh_index(store, writable=True) as database:
            repaired["prunedAccessRows"] = health.prune_access_rows(database, found["orphanAccessRows"])
    return repaired
