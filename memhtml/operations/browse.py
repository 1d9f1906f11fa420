"""The `list`, `neighbors`, `resolve` and `reinforce` use cases over the index."""

from __future__ import annotations

import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple

from memhtml.contracts.errors import PathNotFound
from memhtml.contracts.paths import confine_memory_path, is_archived_path, page_cursor
from memhtml.contracts.vocabulary import MEMORY_RELS
from memhtml.index.database import Database, membership
from memhtml.index.scope import Scope, fold_entity, scope_filter
from memhtml.operations.indexing import fresh_index, now_instant
from memhtml.store.files import is_regular_file
from memhtml.store.gitread import GitCorpusReader
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
    cursor = page_cursor(request.cursor)
    if cursor is not None:
        where += " AND f.path > $cursor"
        parameters["cursor"] = cursor
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
    """The `memory.neighbors` data: memories within `depth` hops, walking links forward from the center
    and backward into it, each walk keeping its own direction; `edges` counts each link walked once."""
    center = confine_memory_path(raw_path, "neighbors")
    store = open_store(root)
    allowed = list(rels) or list(MEMORY_RELS)
    with fresh_index(store) as database:
        # A file on disk counts only as git would see it: regular, and reached without a symbolic link.
        if not _known(database, center) and not is_regular_file(store.root, center):
            raise PathNotFound(f"no memory at {center}", [f"memhtml resolve {center}", "memhtml status"])
        seen: dict[str, dict[str, Any]] = {}
        walked: set[tuple[str, str, str]] = set()
        forward, backward = [center], [center]
        reached = {"out": {center}, "in": {center}}
        saturated = False
        for hop in range(1, depth + 1):
            rows = _edges_from(database, forward, backward, allowed)
            saturated = saturated or len(rows) > NEIGHBOR_SCAN_CAP
            frontiers: dict[str, list[str]] = {"out": [], "in": []}
            for way, source, rel, destination, derived, title in rows[:NEIGHBOR_SCAN_CAP]:
                walked.add((source, rel, destination))
                there = destination if way == "out" else source
                if there in reached[way]:
                    continue
                reached[way].add(there)
                frontiers[way].append(there)
                # Rows come forward links first: at equal hops, the link out names the rel.
                if there not in seen:
                    seen[there] = {"path": there, "title": title, "hop": hop, "rel": rel, "derived": bool(derived)}
            forward, backward = frontiers["out"], frontiers["in"]
            if not forward and not backward:
                break
    ordered = sorted(seen.values(), key=lambda node: (node["hop"], node["path"]))
    nodes = [{key: node[key] for key in ("path", "title", "hop", "rel", "derived")} for node in ordered[:limit]]
    return {
        "center": center,
        "depth": depth,
        "limit": limit,
        "nodes": nodes,
        "edges": len(walked),
        "nodesDropped": max(len(ordered) - limit, 0),
        "scanSaturated": saturated,
    }


def _edges_from(database: Database, forward: list[str], backward: list[str], rels: list[str]) -> list[tuple[Any, ...]]:
    """One hop of both walks: links out of the forward frontier and into the backward one, with the title
    of the memory at the far end; a link whose far end is not indexed (moved or archived away) is no edge."""
    outgoing, out_parameters = membership("e.src_path", "forward", forward)
    incoming, in_parameters = membership("e.dst_path", "backward", backward)
    return database.rows(
        f"""
        SELECT way, src_path, rel, dst_path, derived, title FROM (
            SELECT 'out' AS way, e.src_path, e.rel, e.dst_path, e.derived, f.title
            FROM edges e JOIN files f ON f.path = e.dst_path
            WHERE {outgoing} AND e.rel IN (SELECT unnest($rels))
            UNION ALL
            SELECT 'in' AS way, e.src_path, e.rel, e.dst_path, e.derived, f.title
            FROM edges e JOIN files f ON f.path = e.src_path
            WHERE {incoming} AND e.rel IN (SELECT unnest($rels))
        ) ORDER BY way = 'in', src_path, rel, dst_path LIMIT $cap
        """,
        {**out_parameters, **in_parameters, "rels": rels, "cap": NEIGHBOR_SCAN_CAP + 1},
    )


def resolve(root: Path, raw_path: str) -> dict[str, Any]:
    """The `memory.resolved` data: follow archive moves, renames and supersedes links forward to the newest
    memory. A path the index does not hold is looked up in git: a commit that moved it (`git mv`) is a step."""
    requested = confine_memory_path(raw_path, "resolve")
    store = open_store(root)
    reader = GitCorpusReader(store.root)
    with fresh_index(store) as database:
        indexed_commit = database.value("SELECT head_sha FROM index_state")
        steps: list[dict[str, str]] = []
        visited = {requested}
        current = requested
        stop = "hop_limit"
        # The commit of a step read from git: the index knows its target as it is today, and another
        # memory may hold that path since, so git says first whether a later commit moved it on.
        since: str | None = None
        for _ in range(RESOLVE_MAX_HOPS + 1):
            row: list[tuple[Any, ...]] = []
            moved = reader.moved_from(current, since) if since is not None else None
            if moved is not None:
                (since, successor), via = moved, _move_kind(moved[1])
            else:
                row = database.rows("SELECT archived, superseded_by FROM files WHERE path = $path", {"path": current})
                successor, via = _successor(database, current, row)
                since = None
                if successor is None and not row:
                    moved = reader.moved_from(current)
                    if moved is not None and moved[1] is not None:
                        (since, successor), via = moved, _move_kind(moved[1])
            if successor is None:
                # A live memory nothing supersedes is the end of the chain.
                stop = ("archived" if row[0][0] else "live") if row else "unindexed"
                break
            if len(steps) == RESOLVE_MAX_HOPS:
                break
            steps.append({"from": current, "to": successor, "via": via})
            current = successor
            if successor in visited:
                # The step back into the chain is kept, so the answer shows where the cycle closes.
                stop = "cycle"
                break
            visited.add(successor)
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


def _move_kind(target: str | None) -> str:
    return "archive_move" if target is not None and is_archived_path(target) else "rename"


def _successor(database: Database, path: str, row: list[tuple[Any, ...]]) -> tuple[str | None, str]:
    if not row:
        moved = database.value(
            "SELECT path FROM files WHERE archived AND origin_path = $path"
            " ORDER BY archived_at DESC NULLS LAST, path DESC LIMIT 1",
            {"path": path},
        )
        if moved is not None:
            return moved, "archive_move"
        # A link still naming a path the memory left (moved by hand) says what replaced it.
        return _newest_superseding(database, path), "supersedes"
    winner = _newest_superseding(database, path)
    if winner is not None:
        return winner, "supersedes"
    archived, superseded_by = row[0]
    # An archived memory's own successor meta is the fallback for a link the successor no longer holds.
    if archived and superseded_by and _known(database, superseded_by):
        return superseded_by, "supersedes"
    return None, "supersedes"


def _newest_superseding(database: Database, path: str) -> str | None:
    # Of several memories superseding this one, the newest word is the one updated last (its own
    # `updated` meta, so the answer is the same before and after a rebuild); the greatest path breaks a tie.
    # Search names the same successor (`hydrate`).
    winner = database.value(
        """
        SELECT e.src_path FROM edges e JOIN files f ON f.path = e.src_path
        WHERE e.dst_path = $path AND e.rel = 'supersedes'
        ORDER BY f.updated_at DESC, e.src_path DESC LIMIT 1
        """,
        {"path": path},
    )
    return None if winner is None else str(winner)


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
            raise PathNotFound(
                f"no memory at {', '.join(missing)}; nothing was reinforced",
                [*(f"memhtml resolve {path}" for path in missing), "memhtml status"],
            )
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
    # The type compares as an entity scope does: trimmed, ASCII letters folded.
    folded_type = fold_entity(entity_type) if entity_type is not None else None
    parameters = {
        "entity_type": folded_type,
        "include_archived": include_archived,
        "limit": limit,
        "upper": string.ascii_uppercase,
        "lower": string.ascii_lowercase,
    }
    with fresh_index(store) as database:
        rows = database.rows(
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
