"""The `list`, `neighbors`, `resolve` and `reinforce` use cases over the index."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple

from memhtml.contracts.errors import PathNotFound
from memhtml.contracts.paths import confine_memory_path
from memhtml.contracts.vocabulary import MEMORY_RELS
from memhtml.index.database import Database, membership
from memhtml.index.scope import Scope, scope_filter
from memhtml.operations.indexing import fresh_index, now_instant
from memhtml.store.files import is_regular_file
from memhtml.store.repository import open_store

NEIGHBOR_SCAN_CAP: Final[int] = 10_000
RESOLVE_MAX_HOPS: Final[int] = 16
REINFORCE_COOLDOWN_SECONDS: Final[int] = 900
OUTCOME_EWMA_ALPHA: Final[float] = 0.3
SIGNAL_VALUES: Final[dict[str, int]] = {"positive": 1, "negative": -1, "neutral": 0}


class ListRequest(NamedTuple):
    memory_types: Sequence[str] = ()
    workspace: str | None = None
    tags: Sequence[str] = ()
    entity: str | None = None
    facets: Sequence[tuple[str, str]] = ()
    para: str | None = None
    limit: int = 50
    cursor: str | None = None
    include_archived: bool = False


def list_memories(root: Path, request: ListRequest) -> dict[str, Any]:
    """The `memory.list` data: memories in path order, paged by the last path seen."""
    store = open_store(root)
    # Unlike search, list shows tasks unless a type filter says otherwise.
    scope = Scope(
        memory_types=tuple(request.memory_types) or ("__all__",),
        workspace=request.workspace,
        tags=tuple(request.tags),
        entity=request.entity,
        facets=tuple(request.facets),
        include_archived=request.include_archived,
    )
    where, parameters = scope_filter(scope)
    if not request.memory_types:
        where = where.replace("f.memory_type IN (SELECT unnest($scope_types))", "true")
        parameters.pop("scope_types")
    if request.para:
        where += " AND f.para = $para"
        parameters["para"] = request.para
    if request.cursor:
        where += " AND f.path > $cursor"
        parameters["cursor"] = request.cursor
    parameters["page"] = request.limit + 1
    with fresh_index(store) as database:
        rows = database.rows(
            f"""
            SELECT f.path, f.title, f.memory_type, f.gist, f.workspace, f.para, f.confidence, f.importance,
                   f.archived, f.updated_at
            FROM files f WHERE {where} ORDER BY f.path LIMIT $page
            """,
            parameters,
        )
    page = rows[: request.limit]
    files = [
        {
            "path": row[0],
            "title": row[1],
            "memoryType": row[2],
            "gist": row[3],
            "workspace": row[4],
            "para": row[5],
            "confidence": row[6],
            "importance": row[7],
            "archived": bool(row[8]),
            "updatedAt": row[9],
        }
        for row in page
    ]
    return {"files": files, "nextCursor": page[-1][0] if len(rows) > request.limit else None}


def neighbors(root: Path, raw_path: str, depth: int, limit: int, rels: Sequence[str]) -> dict[str, Any]:
    """The `memory.neighbors` data: memories within `depth` hops, edges followed both ways."""
    center = confine_memory_path(raw_path, "neighbors")
    store = open_store(root)
    allowed = list(rels) or list(MEMORY_RELS)
    with fresh_index(store) as database:
        # A file on disk counts only as git would see it: regular, and reached without a symbolic link.
        if not _known(database, center) and not is_regular_file(store.root, center):
            raise PathNotFound(f"no memory at {center}", ["memhtml status"])
        seen: dict[str, dict[str, Any]] = {}
        frontier = [center]
        edges_seen = 0
        saturated = False
        for hop in range(1, depth + 1):
            rows = database.rows(
                """
                SELECT src_path, rel, dst_path, derived FROM edges
                WHERE (src_path IN (SELECT unnest($frontier)) OR dst_path IN (SELECT unnest($frontier)))
                  AND rel IN (SELECT unnest($rels))
                ORDER BY src_path, rel, dst_path LIMIT $cap
                """,
                {"frontier": frontier, "rels": allowed, "cap": NEIGHBOR_SCAN_CAP + 1},
            )
            saturated = saturated or len(rows) > NEIGHBOR_SCAN_CAP
            next_frontier: list[str] = []
            for source, rel, destination, derived in rows[:NEIGHBOR_SCAN_CAP]:
                edges_seen += 1
                for here, there in ((source, destination), (destination, source)):
                    if here in frontier and there != center and there not in seen:
                        seen[there] = {"path": there, "hop": hop, "rel": rel, "derived": bool(derived)}
                        next_frontier.append(there)
            frontier = next_frontier
            if not frontier:
                break
        titled, parameters = membership("path", "paths", seen)
        titles = dict(database.rows(f"SELECT path, title FROM files WHERE {titled}", parameters))
    ordered = sorted(seen.values(), key=lambda node: (node["hop"], node["path"]))
    nodes = [{**node, "title": titles.get(node["path"])} for node in ordered[:limit]]
    nodes = [{key: node[key] for key in ("path", "title", "hop", "rel", "derived")} for node in nodes]
    return {
        "center": center,
        "depth": depth,
        "limit": limit,
        "nodes": nodes,
        "edges": edges_seen,
        "nodesDropped": max(len(ordered) - limit, 0),
        "scanSaturated": saturated,
    }


def resolve(root: Path, raw_path: str) -> dict[str, Any]:
    """The `memory.resolved` data: follow archive moves and supersedes links forward to the live memory."""
    requested = confine_memory_path(raw_path, "resolve")
    store = open_store(root)
    with fresh_index(store) as database:
        indexed_commit = database.value("SELECT head_sha FROM index_state")
        steps: list[dict[str, str]] = []
        visited = {requested}
        current = requested
        stop = "hop_limit"
        for _ in range(RESOLVE_MAX_HOPS + 1):
            row = database.rows("SELECT archived, superseded_by FROM files WHERE path = $path", {"path": current})
            if row and not row[0][0]:
                stop = "live"
                break
            successor, via = _successor(database, current, row)
            if successor is None:
                stop = "archived" if row else "unindexed"
                break
            if successor in visited:
                stop = "cycle"
                break
            if len(steps) == RESOLVE_MAX_HOPS:
                break
            steps.append({"from": current, "to": successor, "via": via})
            visited.add(successor)
            current = successor
        title = database.value("SELECT title FROM files WHERE path = $path", {"path": current})
    return {
        "requested": requested,
        "path": current,
        "hops": len(steps),
        "steps": steps,
        "stopReason": stop,
        "title": title,
        "indexedCommit": indexed_commit,
    }


def _successor(database: Database, path: str, row: list[tuple[Any, ...]]) -> tuple[str | None, str]:
    if not row:
        moved = database.value(
            "SELECT path FROM files WHERE archived AND origin_path = $path"
            " ORDER BY archived_at DESC NULLS LAST, path DESC LIMIT 1",
            {"path": path},
        )
        return moved, "archive_move"
    superseded_by = row[0][1]
    if superseded_by and _known(database, superseded_by):
        return superseded_by, "supersedes"
    winner = database.value(
        "SELECT src_path FROM edges WHERE dst_path = $path AND rel = 'supersedes' ORDER BY src_path LIMIT 1",
        {"path": path},
    )
    return winner, "supersedes"


def _known(database: Database, path: str) -> bool:
    return bool(database.value("SELECT count(*) FROM files WHERE path = $path", {"path": path}))


def reinforce(root: Path, raw_paths: Sequence[str], signal: str) -> dict[str, Any]:
    """The `memory.reinforced` data: bump each path unless it was reinforced in the last 900 s."""
    paths = list(dict.fromkeys(confine_memory_path(raw, "reinforce") for raw in raw_paths))
    store = open_store(root)
    value = SIGNAL_VALUES[signal]
    now = now_instant()
    with fresh_index(store, writable=True) as database:
        wanted, parameters = membership("path", "paths", paths)
        known = {row[0] for row in database.rows(f"SELECT path FROM files WHERE {wanted}", parameters)}
        missing = [path for path in paths if path not in known]
        if missing:
            raise PathNotFound(f"no memory at {', '.join(missing)}; nothing was reinforced", ["memhtml status"])
        with database.transaction():
            bumped = database.rows(
                f"""
                INSERT INTO state.access AS a (path, access_count, reinforcement_count, outcome_score,
                                               last_accessed_at, last_reinforced_at, updated_at)
                SELECT p, 1, $counts, greatest(-1, least(1, $signal * {OUTCOME_EWMA_ALPHA})), $now, $now, $now
                FROM (SELECT unnest($paths) AS p)
                ON CONFLICT (path) DO UPDATE SET
                    access_count = a.access_count + 1,
                    reinforcement_count = a.reinforcement_count + $counts,
                    outcome_score = greatest(-1, least(1, a.outcome_score * {1 - OUTCOME_EWMA_ALPHA}
                                                         + $signal * {OUTCOME_EWMA_ALPHA})),
                    last_accessed_at = $now, last_reinforced_at = $now, updated_at = $now
                WHERE a.last_reinforced_at IS NULL
                   OR epoch(try_cast($now AS TIMESTAMPTZ)) - epoch(try_cast(a.last_reinforced_at AS TIMESTAMPTZ))
                      >= {REINFORCE_COOLDOWN_SECONDS}
                RETURNING path
                """,
                {"paths": paths, "signal": value, "counts": 1 if value else 0, "now": now},
            )
    done = {row[0] for row in bumped}
    return {
        "bumped": [path for path in paths if path in done],
        "cooledDown": [path for path in paths if path not in done],
        "signal": signal,
    }


def entity_activity(root: Path, entity_type: str | None, limit: int, include_archived: bool) -> dict[str, Any]:
    """`entity.activity`: every entity with its file count and latest activity, newest first."""
    store = open_store(root)
    parameters = {"entity_type": entity_type, "include_archived": include_archived, "limit": limit}
    with fresh_index(store) as database:
        rows = database.rows(
            """
            SELECT e.entity_type, e.entity_name, count(DISTINCT f.path), max(f.updated_at), max(f.event_at),
                   max(f.created_at), count(*) OVER ()
            FROM file_entities e JOIN files f ON f.path = e.path
            WHERE ($include_archived OR NOT f.archived) AND ($entity_type IS NULL OR e.entity_type = $entity_type)
            GROUP BY e.entity_type, e.entity_name
            ORDER BY max(greatest(f.updated_at, coalesce(f.event_at, ''))) DESC, e.entity_type, e.entity_name
            LIMIT $limit
            """,
            parameters,
        )
    entities = [
        {
            "entity": f"{row[0]}:{row[1]}",
            "entityType": row[0],
            "entityName": row[1],
            "fileCount": row[2],
            "lastActivityAt": max(value for value in (row[3], row[4]) if value is not None),
            "lastEventAt": row[4],
            "lastWrittenAt": row[5],
        }
        for row in rows
    ]
    return {"entities": entities, "entityCount": rows[0][6] if rows else 0, "limit": limit}
