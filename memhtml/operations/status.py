"""The `status` use case: HEAD, dirty state, counts from the index (caught up first) and its freshness."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from memhtml.index.counts import store_totals
from memhtml.index.vectors import vector_state
from memhtml.operations.config import load_config
from memhtml.operations.embedding import configured_space
from memhtml.operations.indexing import fresh_index
from memhtml.store.gitcmd import head_sha
from memhtml.store.repository import open_store
from memhtml.store.scan import dirty_paths


class StatusHealth(TypedDict):
    """The `status.health` data: HEAD and the dirty paths, the index's counts, freshness and vector coverage."""

    root: str
    headSha: str | None
    dirty: bool
    dirtyPaths: list[str]
    countsByType: dict[str, int]
    archivedCount: int
    edges: int
    derivedEdges: int
    chunks: int
    embeddings: int
    traces: int
    indexFresh: bool
    indexHeadSha: str | None
    embedModel: str | None
    embedderUp: bool
    vectorCoverage: float
    vectorCoverageFloor: float
    hasState: bool
    lastSleep: None


def status(root: Path) -> StatusHealth:
    floor = load_config().coverage_floor()  # a bad value is refused before the store is opened
    store = open_store(root)
    head = head_sha(store.root)
    with fresh_index(store) as database:
        totals = store_totals(database)
        vectors = vector_state(database)
    dirty = dirty_paths(store)
    configured = configured_space()
    return {
        "root": str(store.root),
        "headSha": head,
        "dirty": bool(dirty),
        "dirtyPaths": dirty,
        "countsByType": totals.active_by_type,
        "archivedCount": totals.archived,
        "edges": totals.edges,
        "derivedEdges": 0,
        "chunks": vectors.chunks,
        "embeddings": vectors.embeddings,
        "traces": 0,
        "indexFresh": totals.indexed_head == head,
        "indexHeadSha": totals.indexed_head,
        "embedModel": vectors.space or configured,
        # Whether search can embed a query: a configured embedder whose space the index's vectors share.
        "embedderUp": configured is not None and vectors.space in (None, configured),
        "vectorCoverage": vectors.coverage,
        "vectorCoverageFloor": floor,
        "hasState": totals.has_state,
        "lastSleep": None,
    }
