"""Pages of the index for the listing commands: memories in path order (`list`), tasks with their live
blockers (`task list`), and entities by latest activity (`entity activity`).

A page is read one row longer than asked, so the caller knows whether a next page exists without a
second count; the cursor is the last path of the page before.
"""

from __future__ import annotations

import string
from typing import Any, NamedTuple

from memhtml.index.database import Database
from memhtml.index.scope import Scope, fold_entity, scope_filter


class ListedMemory(NamedTuple):
    path: str
    title: str
    memory_type: str
    gist: str
    workspace: str | None
    para: str | None
    confidence: float | None
    importance: int | None
    archived: bool
    updated_at: str


class ListedTask(NamedTuple):
    path: str
    title: str
    task_status: str | None
    due_at: str | None
    workspace: str | None
    archived: bool
    updated_at: str
    blocked_by: list[str]


class EntityActivity(NamedTuple):
    entity_type: str
    entity_name: str
    file_count: int
    last_updated_at: str | None
    last_event_at: str | None
    last_created_at: str | None


def memory_page(
    database: Database, scope: Scope, *, para: str | None, after: str | None, rows: int
) -> list[ListedMemory]:
    """Up to `rows` memories in `scope` (every type when it names none), of `para` when given, with paths
    after `after`."""
    where, parameters = scope_filter(scope)
    if para:
        where += " AND f.para = $para"
        parameters["para"] = para
    if after is not None:
        where += " AND f.path > $cursor"
        parameters["cursor"] = after
    parameters["page"] = rows
    found = database.rows(
        f"""
        SELECT f.path, f.title, f.memory_type, f.gist, f.workspace, f.para, f.confidence, f.importance,
               f.archived, f.updated_at
        FROM files f WHERE {where} ORDER BY f.path LIMIT $page
        """,
        parameters,
    )
    return [
        ListedMemory(path, title, memory_type, gist, workspace, para, confidence, importance, bool(archived), updated)
        for path, title, memory_type, gist, workspace, para, confidence, importance, archived, updated in found
    ]


def task_page(
    database: Database,
    *,
    status: str | None,
    workspace: str | None,
    due_before: str | None,
    after: str | None,
    include_archived: bool,
    rows: int,
) -> list[ListedTask]:
    """Up to `rows` tasks in path order after `after`, each with the tasks that still block it (a blocker
    that is done or archived no longer blocks)."""
    found = database.rows(
        """
        SELECT f.path, f.title, f.task_status, f.due_at, f.workspace, f.archived, f.updated_at,
               list(b.path ORDER BY b.path) FILTER (WHERE b.path IS NOT NULL) AS blockers
        FROM files f
        LEFT JOIN edges e ON e.dst_path = f.path AND e.rel = 'blocks'
        LEFT JOIN files b ON b.path = e.src_path AND NOT b.archived AND b.task_status IS DISTINCT FROM 'done'
        WHERE f.memory_type = 'task'
          AND ($include_archived OR NOT f.archived)
          AND ($status IS NULL OR f.task_status = $status)
          AND ($workspace IS NULL OR f.workspace = $workspace)
          AND ($due_before IS NULL OR f.due_at < $due_before)
          AND ($cursor IS NULL OR f.path > $cursor)
        GROUP BY ALL ORDER BY f.path LIMIT $page
        """,
        {
            "status": status,
            "workspace": workspace,
            "due_before": due_before,
            "cursor": after,
            "include_archived": include_archived,
            "page": rows,
        },
    )
    return [
        ListedTask(path, title, status, due_at, workspace, bool(archived), updated, list(blockers or []))
        for path, title, status, due_at, workspace, archived, updated, blockers in found
    ]


def entity_activity(
    database: Database, entity_type: str | None, *, include_archived: bool, limit: int
) -> tuple[list[EntityActivity], int]:
    """Up to `limit` entities (of `entity_type`, compared as an entity scope compares: trimmed, ASCII
    letters folded), newest activity first, and how many there are in all."""
    found = database.rows(
        """
        SELECT e.entity_type, e.entity_name, count(DISTINCT f.path), max(f.updated_at), max(f.event_at),
               max(f.created_at), count(*) OVER ()
        FROM file_entities e JOIN files f ON f.path = e.path
        WHERE ($include_archived OR NOT f.archived)
          AND ($entity_type IS NULL OR translate(e.entity_type, $upper, $lower) = $entity_type)
        GROUP BY e.entity_type, e.entity_name
        ORDER BY max(greatest(f.updated_at, coalesce(f.event_at, ''))) DESC, e.entity_type, e.entity_name
        LIMIT $limit
        """,
        {
            "entity_type": fold_entity(entity_type) if entity_type is not None else None,
            "include_archived": include_archived,
            "limit": limit,
            "upper": string.ascii_uppercase,
            "lower": string.ascii_lowercase,
        },
    )
    total: Any = found[0][6] if found else 0
    return [EntityActivity(*row[:6]) for row in found], int(total)
