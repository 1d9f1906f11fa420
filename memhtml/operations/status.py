"""The `status` use case: HEAD, dirty state, counts from the index (caught up first) and its freshness."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memhtml.operations.indexing import fresh_index
from memhtml.store.commit import head_sha
from memhtml.store.repository import open_store
from memhtml.store.scan import dirty_paths


def status(root: Path) -> dict[str, Any]:
    store = open_store(root)
    head = head_sha(store.root)
    with fresh_index(store) as database:
        counts = dict(
            database.rows(
                "SELECT memory_type, count(*) FROM files WHERE NOT archived GROUP BY memory_type ORDER BY memory_type"
            )
        )
        archived, edges, indexed_head, accessed = database.rows(
            """
            SELECT (SELECT count(*) FROM files WHERE archived), (SELECT count(*) FROM edges),
                   (SELECT head_sha FROM index_state), (SELECT count(*) FROM state.access)
            """
        )[0]
    dirty = dirty_paths(store)
    return {
        "root": str(store.root),
        "headSha": head,
        "dirty": bool(dirty),
        "dirtyPaths": dirty,
        "countsByType": counts,
        "archivedCount": archived,
        "edges": edges,
        "derivedEdges": 0,
        "chunks": 0,
        "embeddings": 0,
        "traces": 0,
        "indexFresh": indexed_head == head,
        "indexHeadSha": indexed_head,
        "embedModel": None,
        "embedderUp": False,
        "vectorCoverage": 0,
        "vectorCoverageFloor": 0.95,
        "hasState": accessed > 0,
        "lastSleep": None,
    }
