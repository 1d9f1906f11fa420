"""The `status` use case: HEAD, dirty state and corpus counts, read from git and the working tree.

Until the index exists, counts come from scanning HEAD's memory files; the index fields say plainly
that there is no index yet.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Final

from memhtml.contracts.paths import is_archived_path
from memhtml.store.commit import head_sha
from memhtml.store.repository import open_store
from memhtml.store.scan import dirty_paths, tracked_memory_paths

_TYPE_META: Final = re.compile(r'<meta name="memhtml-type" content="([^"]*)">')
_LINK: Final = re.compile(r'<link rel="memhtml-[^"]*" href="[^"]*">')


def status(root: Path) -> dict[str, object]:
    store = open_store(root)
    counts: Counter[str] = Counter()
    archived = 0
    edges = 0
    for path in tracked_memory_paths(store):
        if is_archived_path(path):
            archived += 1
            continue
        try:
            text = (store.root / path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        head = text.split("</head>", 1)[0]
        match = _TYPE_META.search(head)
        if match:
            counts[match.group(1)] += 1
        edges += len(_LINK.findall(head))
    dirty = dirty_paths(store)
    return {
        "root": str(store.root),
        "headSha": head_sha(store.root),
        "dirty": bool(dirty),
        "dirtyPaths": dirty,
        "countsByType": dict(sorted(counts.items())),
        "archivedCount": archived,
        "edges": edges,
        "derivedEdges": 0,
        "chunks": 0,
        "embeddings": 0,
        "traces": 0,
        "indexFresh": False,
        "indexHeadSha": None,
        "embedModel": None,
        "embedderUp": False,
        "vectorCoverage": 0,
        "vectorCoverageFloor": 0.95,
        "hasState": False,
        "lastSleep": None,
    }
