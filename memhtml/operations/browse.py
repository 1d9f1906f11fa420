"""The `list`, `neighbors`, `resolve` and `reinforce` use cases over the index."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final, NamedTuple, TypedDict

from memhtml.contracts.errors import PathNotFound
from memhtml.contracts.paths import confine_memory_path, is_archived_path, page_cursor
from memhtml.contracts.vocabulary import MEMORY_RELS
from memhtml.index.access import reinforce_paths
from memhtml.index.database import Database
from memhtml.index.file_lookups import (
    ArchiveFacts,
    archive_facts,
    archived_from,
    indexed_among,
    is_indexed,
    title_of,
)
from memhtml.index.links import hop_edges, newest_superseding
from memhtml.index.listing import entity_activity as listed_entities
from memhtml.index.listing import memory_page
from memhtml.index.scope import Scope
from memhtml.index.watermark import watermark
from memhtml.operations.indexing import fresh_index, now_instant
from memhtml.store.files import is_regular_file
from memhtml.store.gitread import GitCorpusReader
from memhtml.store.repository import open_store

NEIGHBOR_SCAN_CAP: Final[int] = 10_000
RESOLVE_MAX_HOPS: Final[int] = 16
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


class ListedFile(TypedDict):
    """One memory of a `memory.list` page: its path, title, type, gist and the metas a listing shows."""

    path: str
    title: str
    memoryType: str
    gist: str
    workspace: str | None
    para: str | None
    confidence: float | None
    importance: int | None
    archived: bool
    updatedAt: str


class MemoryList(TypedDict):
    """The `memory.list` data: one page of memories, and the cursor of the next page (None: the last)."""

    files: list[ListedFile]
    nextCursor: str | None


class NeighborNode(TypedDict):
    """A memory reached from the center: how many hops away, by which rel, and whether the link is derived."""

    path: str
    title: str
    hop: int
    rel: str
    derived: bool


class Neighborhood(TypedDict):
    """The `memory.neighbors` data: the memories around a center, and how many links were walked."""

    center: str
    depth: int
    limit: int
    nodes: list[NeighborNode]
    edges: int
    nodesDropped: int
    scanSaturated: bool


# One step of a `resolve` walk: from which path to which, and by what (`archive_move`, `rename` or
# `supersedes`). The functional form, because `from` is a Python keyword no class body can declare.
ResolveStep = TypedDict("ResolveStep", {"from": str, "to": str, "via": str})


class Resolution(TypedDict):
    """The `memory.resolved` data: the newest memory a path leads to, the steps taken and why the walk stopped."""

    requested: str
    path: str
    hops: int
    steps: list[ResolveStep]
    stopReason: str
    title: str | None
    indexedCommit: str | None


class Reinforcement(TypedDict):
    """The `memory.reinforced` data: the paths bumped, those still cooling down, and the signal given."""

    bumped: list[str]
    cooledDown: list[str]
    signal: str


class ActiveEntity(TypedDict):
    """One entity of `entity.activity`: its name, how many memories name it, and when it last moved."""

    entity: str
    entityType: str
    entityName: str
    fileCount: int
    lastActivityAt: str
    lastEventAt: str | None
    lastWrittenAt: str | None


class EntityActivityPage(TypedDict):
    """The `entity.activity` data: entities newest first, how many there are in all, and the limit asked."""

    entities: list[ActiveEntity]
    entityCount: int
    limit: int


def list_memories(root: Path, request: ListRequest) -> MemoryList:
    """The `memory.list` data: memories in path order, paged by the last path seen."""
    store = open_store(root)
    # Unlike search, list shows tasks unless a type filter says otherwise.
    scope = Scope(
        memory_types=tuple(request.memory_types),
        workspace=request.workspace,
        tags=tuple(request.tags),
        entity=request.entity,
        facets=tuple(request.facets),
        include_archived=request.include_archived,
        any_type=True,
    )
    with fresh_index(store) as database:
        rows = memory_page(
            database, scope, para=request.para, after=page_cursor(request.cursor), rows=request.limit + 1
        )
    page = rows[: request.limit]
    files: list[ListedFile] = [
        {
            "path": row.path,
            "title": row.title,
            "memoryType": row.memory_type,
            "gist": row.gist,
            "workspace": row.workspace,
            "para": row.para,
            "confidence": row.confidence,
            "importance": row.importance,
            "archived": row.archived,
            "updatedAt": row.updated_at,
        }
        for row in page
    ]
    return {"files": files, "nextCursor": page[-1].path if len(rows) > request.limit else None}


def neighbors(root: Path, raw_path: str, depth: int, limit: int, rels: Sequence[str]) -> Neighborhood:
    """The `memory.neighbors` data: memories within `depth` hops, walking links forward from the center
    and backward into it, each walk keeping its own direction; `edges` counts each link walked once."""
    center = confine_memory_path(raw_path, "neighbors")
    store = open_store(root)
    allowed = list(rels) or list(MEMORY_RELS)
    with fresh_index(store) as database:
        # A file on disk counts only as git would see it: regular, and reached without a symbolic link.
        if not is_indexed(database, center) and not is_regular_file(store.root, center):
            raise PathNotFound(f"no memory at {center}", [f"memhtml resolve {center}", "memhtml status"])
        seen: dict[str, NeighborNode] = {}
        walked: set[tuple[str, str, str]] = set()
        forward, backward = [center], [center]
        reached = {"out": {center}, "in": {center}}
        saturated = False
        for hop in range(1, depth + 1):
            rows = hop_edges(database, forward, backward, allowed, cap=NEIGHBOR_SCAN_CAP + 1)
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
                    seen[there] = {"path": there, "title": title, "hop": hop, "rel": rel, "derived": derived}
            forward, backward = frontiers["out"], frontiers["in"]
            if not forward and not backward:
                break
    ordered = sorted(seen.values(), key=lambda node: (node["hop"], node["path"]))
    return {
        "center": center,
        "depth": depth,
        "limit": limit,
        "nodes": ordered[:limit],
        "edges": len(walked),
        "nodesDropped": max(len(ordered) - limit, 0),
        "scanSaturated": saturated,
    }


def resolve(root: Path, raw_path: str) -> Resolution:
    """The `memory.resolved` data: follow archive moves, renames and supersedes links forward to the newest
    memory. A path the index does not hold is looked up in git: a commit that moved it (`git mv`) is a step."""
    requested = confine_memory_path(raw_path, "resolve")
    store = open_store(root)
    reader = GitCorpusReader(store.root)
    with fresh_index(store) as database:
        indexed_commit = watermark(database).head
        steps: list[ResolveStep] = []
        visited = {requested}
        current = requested
        stop = "hop_limit"
        # The commit of a step read from git: the index knows its target as it is today, and another
        # memory may hold that path since, so git says first whether a later commit moved it on.
        since: str | None = None
        for _ in range(RESOLVE_MAX_HOPS + 1):
            facts: ArchiveFacts | None = None
            moved = reader.moved_from(current, since) if since is not None else None
            if moved is not None:
                (since, successor), via = moved, _move_kind(moved[1])
            else:
                facts = archive_facts(database, current)
                successor, via = _successor(database, current, facts)
                since = None
                if successor is None and facts is None:
                    moved = reader.moved_from(current)
                    if moved is not None and moved[1] is not None:
                        (since, successor), via = moved, _move_kind(moved[1])
            if successor is None:
                # A live memory nothing supersedes is the end of the chain.
                stop = ("archived" if facts.archived else "live") if facts is not None else "unindexed"
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
        title = title_of(database, current)
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


def _successor(database: Database, path: str, facts: ArchiveFacts | None) -> tuple[str | None, str]:
    if facts is None:
        moved = archived_from(database, path)
        if moved is not None:
            return moved, "archive_move"
        # A link still naming a path the memory left (moved by hand) says what replaced it.
        return newest_superseding(database, path), "supersedes"
    # Search names the same successor (`hydrate`).
    winner = newest_superseding(database, path)
    if winner is not None:
        return winner, "supersedes"
    # An archived memory's own successor meta is the fallback for a link the successor no longer holds.
    if facts.archived and facts.superseded_by and is_indexed(database, facts.superseded_by):
        return facts.superseded_by, "supersedes"
    return None, "supersedes"


def reinforce(root: Path, raw_paths: Sequence[str], signal: str) -> Reinforcement:
    """The `memory.reinforced` data: bump each path unless it was reinforced in the last 900 s."""
    paths = list(dict.fromkeys(confine_memory_path(raw, "reinforce") for raw in raw_paths))
    store = open_store(root)
    value = SIGNAL_VALUES[signal]
    now = now_instant()
    with fresh_index(store, writable=True) as database:
        known = indexed_among(database, paths)
        missing = [path for path in paths if path not in known]
        if missing:
            raise PathNotFound(
                f"no memory at {', '.join(missing)}; nothing was reinforced",
                [*(f"memhtml resolve {path}" for path in missing), "memhtml status"],
            )
        done = reinforce_paths(database, paths, value, now)
    return {
        "bumped": [path for path in paths if path in done],
        "cooledDown": [path for path in paths if path not in done],
        "signal": signal,
    }


def entity_activity(root: Path, entity_type: str | None, limit: int, include_archived: bool) -> EntityActivityPage:
    """`entity.activity`: every entity with its file count and latest activity, newest first."""
    store = open_store(root)
    with fresh_index(store) as database:
        rows, total = listed_entities(database, entity_type, include_archived=include_archived, limit=limit)
    entities: list[ActiveEntity] = [
        {
            "entity": f"{row.entity_type}:{row.entity_name}",
            "entityType": row.entity_type,
            "entityName": row.entity_name,
            "fileCount": row.file_count,
            "lastActivityAt": max(value for value in (row.last_updated_at, row.last_event_at) if value is not None),
            "lastEventAt": row.last_event_at,
            "lastWrittenAt": row.last_created_at,
        }
        for row in rows
    ]
    return {"entities": entities, "entityCount": total, "limit": limit}
