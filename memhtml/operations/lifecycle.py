"""The lifecycle use cases after a write: correct, archive, link, and the task commands.

Each validates its paths and screens its texts (the safety notary) before opening anything, lets the
store make exactly one commit, then indexes that commit (a failure there is an `index` warning, never
a failed command). Every answer says whether something was stored.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from memhtml.contracts.instants import format_instant
from memhtml.contracts.paths import confine_memory_path, is_archived_path, page_cursor, slugify
from memhtml.index.listing import task_page
from memhtml.index.session_links import SessionLink
from memhtml.operations.browse import resolve
from memhtml.operations.indexing import fresh_index, writable_index
from memhtml.operations.screening import ScreenedFields, merged, screen_request, screen_text
from memhtml.operations.write import WriteRequest, place_memory
from memhtml.operations.write_pipeline import staging_warning, store_planned
from memhtml.store.archiving import archived_text
from memhtml.store.batch import PlannedOp
from memhtml.store.commit import commit_message, commit_subject
from memhtml.store.lifecycle import (
    archive_memory,
    committed_memory,
    correct_memory,
    link_memories,
    move_task,
    refuse_archived,
)
from memhtml.store.repository import open_store
from memhtml.store.transaction import Committed

if TYPE_CHECKING:
    from memhtml.operations.indexing import CommandWarning


class LandedFields(TypedDict):
    """What every lifecycle answer ends with: the commit (None when nothing changed) and `stored`."""

    commitSha: str | None
    stored: bool
    index: NotRequired[CommandWarning]  # the commit landed, but the search or the git index lags


class ChangedFields(TypedDict, total=False):
    changed: list[str]  # the head fields an `updated` memory took from this write


class Archived(LandedFields):
    """The `memory.archived` data."""

    path: str
    archivePath: str
    outcome: str


class Corrected(ChangedFields, ScreenedFields, LandedFields):
    """The `memory.corrected` data: the successor, the archived target, and what dedupe found."""

    path: str
    archivedPath: str | None
    contentHash: str
    outcome: str
    deduped: bool
    existingPath: str | None


class Linked(LandedFields):
    """The `memory.linked` data: the edge, and whether the source file changed."""

    srcPath: str
    dstPath: str
    rel: str
    outcome: str


class TaskAdded(ScreenedFields, LandedFields):
    """The `task.added` data."""

    path: str | None
    created: bool
    deduped: bool
    existingPath: None
    taskStatus: str
    dueAt: str | None
    outcome: str


class TaskMoved(LandedFields):
    """The `task.status` data: the new status, and where a `done` task was archived."""

    path: str
    taskStatus: str
    archived: bool
    unchanged: bool
    archivePath: str | None
    outcome: str


class TaskEntry(TypedDict):
    """One task of `task list`, with the open tasks that still block it."""

    path: str
    title: str
    taskStatus: str | None
    dueAt: str | None
    workspace: str | None
    archived: bool
    updatedAt: str | None
    blockedBy: list[str]


class TaskPage(TypedDict):
    """The `task.list` data: a page of tasks, and the cursor of the next one (None on the last)."""

    tasks: list[TaskEntry]
    nextCursor: str | None


def _moment(now: dt.datetime | None) -> dt.datetime:
    return now or dt.datetime.now(dt.UTC)


def _landed(committed: Committed | None, warning: CommandWarning | None, paths: list[str]) -> LandedFields:
    """Commit sha, `stored`, and an `index` warning for the search index or the user's git index."""
    commit_sha = committed.landed.sha if committed is not None and committed.landed.created else None
    landed: LandedFields = {"commitSha": commit_sha, "stored": commit_sha is not None}
    if warning is not None:
        landed["index"] = warning
    elif committed is not None and not committed.index_synced:
        landed["index"] = staging_warning(paths)
    return landed


def _changed(changed: tuple[str, ...]) -> ChangedFields:
    return {"changed": list(changed)} if changed else {}


def _live_successor(root: Path, path: str) -> str | None:
    try:
        resolved = resolve(root, path)
    except Exception:  # the refusal must not depend on the index: naming the successor is a courtesy
        return None
    live = resolved.get("path")
    return str(live) if resolved.get("stopReason") == "live" and live else None


def archive(root: Path, raw_path: str, reason: str, now: dt.datetime | None = None) -> Archived:
    """`archive`: move one active memory into archive/<YYYY>/ with its stamps, as one commit."""
    path = confine_memory_path(raw_path, "archive")
    screen_text("reason", reason)  # the reason is committed: refused like a memory's text
    store = open_store(root)
    if is_archived_path(path):
        raise refuse_archived(path, _live_successor(root, path), "archive")
    instant = format_instant(_moment(now))
    message = commit_message(commit_subject("archive", f"{path} — {reason}"))
    with writable_index(store) as index:
        retired = archive_memory(store, path, instant, message)
        warning = index.follow_commit()
    return {
        "path": path,
        "archivePath": retired.archive_path,
        "outcome": "updated",
        **_landed(retired.committed, warning, [path, retired.archive_path]),
    }


def correct(
    root: Path, raw_target: str, request: WriteRequest, reason: str | None, now: dt.datetime | None = None
) -> Corrected:
    """`correct`: write the corrected memory beside the target (carrying its tags, entities, workspace,
    importance and confidence), archive the target as superseded, one commit. See `correct_memory` for dedupe.
    The caller's texts and the reason (a commit trailer) are screened before the store is opened, the
    carried tags and entities once they are read."""
    target = confine_memory_path(raw_target, "correct")
    request, screened = screen_request(request)
    reason, screened_reason = screen_text(
        "reason", reason, redact=request.redact, strip_invisible=request.strip_invisible
    )
    store = open_store(root)
    if is_archived_path(target):
        raise refuse_archived(target, _live_successor(root, target), "correct")
    moment = _moment(now)
    instant = format_instant(moment)
    _, current = committed_memory(store, target)
    carried = request._replace(
        memory_type=request.memory_type or (current.memory_type or "semantic"),
        tags=list(dict.fromkeys([*current.tags, *request.tags])),
        entities=list(dict.fromkeys([*current.entities, *request.entities])),
        # A correction restates one fact: how sure and how important it is carry unless it says anew.
        importance=request.importance if request.importance is not None else current.importance,
        confidence=request.confidence if request.confidence is not None else current.confidence,
    )
    carried, screened_carried = screen_request(carried)
    screened = merged(merged(screened, screened_reason), screened_carried)
    placed = place_memory(carried, moment)._replace(
        directory=str(PurePosixPath(target).parent),
        slug=slugify(carried.title),
        explicit_path=None,
    )
    message = commit_message(
        commit_subject("correct", carried.title),
        [
            ("Memhtml-Session", carried.session_id),
            ("Memhtml-Prompt", carried.prompt_id),
            ("Memhtml-Reason", reason),
        ],
    )
    with writable_index(store) as index:
        corrected = correct_memory(
            store,
            target,
            placed=placed,
            restatement=carried.restatement(),
            owners=index.owners,
            instant=instant,
            message=message,
            explicit_type=bool(request.memory_type),
        )
        warning = None
        if corrected.committed is not None:
            links = [
                SessionLink(corrected.path, "corrected", session, carried.prompt_id, carried.turn_uuid)
                for session in [carried.session_id]
                if session
            ]
            # The counters are the corrected memory's, archived now; its successor starts without any. Git
            # sees no rename when the successor takes the target's path (the same title), or may pair
            # the target with the successor when it does not.
            archived = corrected.archive_path
            moved = [(target, archived), (corrected.path, archived)] if archived else []
            warning = index.follow_commit(links, counters_moved=moved)
    touched = [corrected.path] + ([corrected.archive_path, target] if corrected.archive_path else [])
    return {
        "path": corrected.path,
        "archivedPath": corrected.archive_path,
        "contentHash": placed.content_hash,
        "outcome": corrected.outcome,
        "deduped": corrected.outcome != "written",
        "existingPath": None if corrected.outcome == "written" else corrected.path,
        **_changed(corrected.changed),
        **screened.report(),
        **_landed(corrected.committed, warning, touched),
    }


def link(root: Path, raw_source: str, rel: str, raw_destination: str) -> Linked:
    """`link`: add a typed edge to the source file, one commit; an edge already there changes nothing."""
    source = confine_memory_path(raw_source, "link")
    destination = confine_memory_path(raw_destination, "link")
    store = open_store(root)
    message = commit_message(commit_subject("link", f"{rel} {source} -> {destination}"))
    with writable_index(store) as index:
        committed = link_memories(store, source, rel, destination, message)
        warning = index.follow_commit() if committed is not None else None
    return {
        "srcPath": source,
        "dstPath": destination,
        "rel": rel,
        "outcome": "updated" if committed else "unchanged",
        **_landed(committed, warning, [source]),
    }


def task_add(root: Path, request: WriteRequest, now: dt.datetime | None = None) -> TaskAdded:
    """`task add`: a task memory (never deduped); one opened `done` is written straight into the archive."""
    request, screened = screen_request(request)
    moment = _moment(now)
    instant = format_instant(moment)
    placed = place_memory(request, moment)
    if request.task_status == "done":
        placed = placed._replace(
            file_text=archived_text(placed.file_text, instant),
            directory=f"archive/{instant[:4]}/{placed.directory}",
        )
    store = open_store(root)
    message = commit_message(
        commit_subject("write", request.title),
        [("Memhtml-Session", request.session_id), ("Memhtml-Prompt", request.prompt_id)],
    )
    run = store_planned(store, [request], [PlannedOp(placed)], instant=instant, message_for=lambda *_: message)
    outcome = run.stored.outcomes[0]
    if outcome.error is not None:
        raise outcome.error
    return {
        "path": outcome.path,
        "created": True,
        "deduped": False,
        "existingPath": None,
        "taskStatus": request.task_status or "todo",
        "dueAt": request.due,
        "outcome": outcome.outcome,
        **screened.report(),
        **_landed(run.stored.committed, run.index_warning, [outcome.path or ""]),
    }


def task_status(
    root: Path, raw_path: str, status: str, reason: str | None, now: dt.datetime | None = None
) -> TaskMoved:
    """`task status`: move a task's status; `done` archives it in the same commit."""
    path = confine_memory_path(raw_path, "task status")
    screen_text("reason", reason)  # the reason is committed: refused like a memory's text
    store = open_store(root)
    instant = format_instant(_moment(now))
    messages = {
        "task": commit_message(commit_subject("task", f"{status} {path}")),
        "archive": commit_message(commit_subject("archive", f"{path} — {reason or 'task done'}")),
    }
    with writable_index(store) as index:
        moved = move_task(store, path, status, instant, messages)
        warning = index.follow_commit() if moved.committed is not None else None
    touched = [path] + ([moved.archive_path] if moved.archive_path else [])
    return {
        "path": path,
        "taskStatus": status,
        "archived": moved.archive_path is not None,
        "unchanged": moved.committed is None,
        "archivePath": moved.archive_path,
        "outcome": "unchanged" if moved.committed is None else "updated",
        **_landed(moved.committed, warning, touched),
    }


def task_request(title: str, claim: str | None, bodies: list[str], status: str, **fields: Any) -> WriteRequest:
    """A task write: the claim defaults to the title; status and due are task metas."""
    return WriteRequest(
        title=title,
        memory_type="task",
        claim=claim if claim and claim.strip() else title,
        bodies=bodies,
        task_status=status,
        **fields,
    )


def task_list(
    root: Path,
    *,
    status: str | None = None,
    workspace: str | None = None,
    due_before: str | None = None,
    limit: int = 50,
    cursor: str | None = None,
    include_archived: bool = False,
) -> TaskPage:
    """`task list`: tasks in path order with their live blockers (a blocker that is done or archived
    no longer blocks)."""
    store = open_store(root)
    with fresh_index(store) as database:
        rows = task_page(
            database,
            status=status,
            workspace=slugify(workspace) if workspace and workspace.strip() else None,
            due_before=due_before,
            after=page_cursor(cursor),
            include_archived=include_archived,
            rows=limit + 1,
        )
    page = rows[:limit]
    tasks: list[TaskEntry] = [
        {
            "path": row.path,
            "title": row.title,
            "taskStatus": row.task_status,
            "dueAt": row.due_at,
            "workspace": row.workspace,
            "archived": row.archived,
            "updatedAt": row.updated_at,
            "blockedBy": row.blocked_by,
        }
        for row in page
    ]
    return {"tasks": tasks, "nextCursor": page[-1].path if len(rows) > limit else None}
