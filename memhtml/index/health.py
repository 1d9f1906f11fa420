"""The index's side of a health check: links to nothing, state rows about nothing, crowded inboxes,
overdue and blocked tasks, untyped entities, and the rows that disagree with the tree they came from.

Each query reads the index as it stands; the caller decides whether it is fresh enough to trust.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from memhtml.index.database import Database

INBOX_PREFIX: Final[str] = "areas/inbox/"
INBOX_TASKS_PREFIX: Final[str] = "areas/inbox/tasks/"
INBOX_CROWDED_ABOVE: Final[int] = 20
INBOX_TASKS_CROWDED_ABOVE: Final[int] = 10
UNTYPED_ENTITY_SAMPLE: Final[int] = 20


@dataclass(frozen=True, slots=True)
class IndexDrift:
    """Index rows that disagree with the tree: a valid memory with no row, a row with no file, a row
    projected from another version of its file."""

    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.missing or self.extra or self.stale)

    def as_data(self) -> dict[str, list[str]]:
        return {"missing": self.missing, "extra": self.extra, "stale": self.stale}


def dangling_edges(database: Database, present: frozenset[str]) -> list[dict[str, Any]]:
    """Authored edges whose destination is no file of the tree (an unparseable file still exists, so a
    link to it is not dangling), each with `rewriteTo`: the newest archived copy of the destination."""
    rows = database.rows(
        """
        SELECT e.src_path, e.rel, e.dst_path,
               (SELECT a.path FROM files a WHERE a.archived AND a.origin_path = e.dst_path
                ORDER BY a.archived_at DESC NULLS LAST, a.path DESC LIMIT 1)
        FROM edges e
        WHERE NOT e.derived AND e.dst_path NOT IN (SELECT path FROM files)
        ORDER BY e.src_path, e.rel, e.dst_path
        """
    )
    return [
        {"srcPath": source, "rel": rel, "dstPath": destination, "rewriteTo": rewrite}
        for source, rel, destination, rewrite in rows
        if destination not in present
    ]


def orphan_access_rows(database: Database) -> list[str]:
    """State rows about paths the index does not hold (moved without the state following, or bogus). A
    second copy of an article the index lists is held again when the first goes: its counters stay."""
    return [
        path
        for (path,) in database.rows(
            "SELECT path FROM state.access WHERE path NOT IN (SELECT path FROM files)"
            " AND path NOT IN (SELECT path FROM duplicate_files) ORDER BY path"
        )
    ]


def prune_access_rows(database: Database, paths: list[str]) -> int:
    """Delete the access rows of `paths` that are still orphans; returns how many went."""
    if not paths:
        return 0
    before = int(database.value("SELECT count(*) FROM state.access"))
    database.rows(
        "DELETE FROM state.access WHERE path IN (SELECT unnest($paths)) AND path NOT IN (SELECT path FROM files)"
        " AND path NOT IN (SELECT path FROM duplicate_files)",
        {"paths": paths},
    )
    return before - int(database.value("SELECT count(*) FROM state.access"))


def inbox_depths(database: Database) -> tuple[int, int]:
    """(active non-task memories in the inbox, active tasks in its task tray)."""
    row = database.rows(
        """
        SELECT count(*) FILTER (WHERE path LIKE $inbox || '%' AND path NOT LIKE $tasks || '%'),
               count(*) FILTER (WHERE path LIKE $tasks || '%' AND memory_type = 'task')
        FROM files WHERE NOT archived
        """,
        {"inbox": INBOX_PREFIX, "tasks": INBOX_TASKS_PREFIX},
    )[0]
    return int(row[0]), int(row[1])


def overdue_tasks(database: Database, today: str) -> list[dict[str, Any]]:
    """Active tasks not done whose due date is before `today` (YYYY-MM-DD)."""
    rows = database.rows(
        """
        SELECT path, task_status, due_at FROM files
        WHERE memory_type = 'task' AND NOT archived AND task_status <> 'done'
              AND due_at IS NOT NULL AND substr(due_at, 1, 10) < $today
        ORDER BY due_at, path
        """,
        {"today": today},
    )
    return [{"path": path, "taskStatus": status, "dueAt": due} for path, status, due in rows]


def stale_blockers(database: Database) -> list[dict[str, Any]]:
    """Open tasks still blocked by a task that is archived or gone."""
    rows = database.rows(
        """
        SELECT e.dst_path, e.src_path, CASE WHEN b.path IS NULL THEN 'missing' ELSE 'archived' END
        FROM edges e
        JOIN files t ON t.path = e.dst_path AND t.memory_type = 'task' AND NOT t.archived AND t.task_status <> 'done'
        LEFT JOIN files b ON b.path = e.src_path
        WHERE e.rel = 'blocks' AND (b.path IS NULL OR b.archived)
        ORDER BY e.dst_path, e.src_path
        """
    )
    return [{"path": path, "blockerPath": blocker, "blockerState": state} for path, blocker, state in rows]


def untyped_entities(database: Database) -> tuple[list[dict[str, Any]], int]:
    """A sample of entities written without a usable `type:` prefix, and how many there are."""
    rows = database.rows(
        """
        SELECT entity_name, count(DISTINCT path) AS files FROM file_entities WHERE entity_type = 'unknown'
        GROUP BY entity_name ORDER BY files DESC, entity_name LIMIT $sample
        """,
        {"sample": UNTYPED_ENTITY_SAMPLE},
    )
    total = int(database.value("SELECT count(DISTINCT entity_name) FROM file_entities WHERE entity_type = 'unknown'"))
    return [{"entityName": name, "files": files} for name, files in rows], total


def index_drift(database: Database, expected: Mapping[str, str], overlay: frozenset[str]) -> IndexDrift:
    """Compare the rows with `expected` (path -> blob id of every valid memory at HEAD). `overlay`: paths
    whose rows may differ on purpose (uncommitted paths, whose working-tree version `index update`
    projects, and second copies of an active article, which the index holds once)."""
    indexed = dict(database.rows("SELECT path, blob_sha FROM files"))
    missing = sorted(path for path in expected.keys() - indexed.keys() if path not in overlay)
    extra = sorted(path for path in indexed.keys() - expected.keys() if path not in overlay)
    stale = sorted(
        path for path, blob in indexed.items() if path in expected and path not in overlay and expected[path] != blob
    )
    return IndexDrift(missing, extra, stale)
