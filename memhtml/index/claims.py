"""The claims the conflict assist compares, read from the index: the active, non-task memories sharing
an entity or a frame key with a batch's ops (one query per batch), or all of them for the audit.

A stored claim carries what the classifier of `domain.conflicts` needs: the gist, type, workspace,
entity labels, and the source (a citation's text, else the author).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final, NamedTuple

from memhtml.domain.conflicts import ClaimFacts
from memhtml.index.database import Database

_CLAIM_COLUMNS: Final[str] = """
    f.path, f.gist, f.memory_type, f.workspace, f.author,
    (SELECT list(e.entity_type || ':' || e.entity_name) FROM file_entities e WHERE e.path = f.path),
    (SELECT first(c.text) FROM file_citations c WHERE c.path = f.path)
"""


class StoredClaim(NamedTuple):
    path: str
    facts: ClaimFacts


def claims_sharing(database: Database, frame_keys: Collection[str], entities: Collection[str]) -> list[StoredClaim]:
    """Active non-task memories holding any of `frame_keys`, or naming any of `entities` (lowercased
    `type:name` labels), in path order."""
    if not frame_keys and not entities:
        return []
    rows = database.rows(
        f"""
        SELECT {_CLAIM_COLUMNS}
        FROM files f
        WHERE NOT f.archived AND f.memory_type <> 'task'
          AND (f.frame_key IN (SELECT unnest($frames))
               OR f.path IN (SELECT e.path FROM file_entities e
                             WHERE lower(e.entity_type || ':' || e.entity_name) IN (SELECT unnest($entities))))
        ORDER BY f.path
        """,
        {"frames": sorted(frame_keys) or [""], "entities": sorted(entities) or [""]},
    )
    return [_claim(row) for row in rows]


def all_active_claims(database: Database) -> list[StoredClaim]:
    """Every active non-task memory, oldest first (by event time, else creation), then by path."""
    rows = database.rows(
        f"""
        SELECT {_CLAIM_COLUMNS}
        FROM files f WHERE NOT f.archived AND f.memory_type <> 'task'
        ORDER BY coalesce(f.event_at, f.created_at), f.path
        """
    )
    return [_claim(row) for row in rows]


def _claim(row: tuple[Any, ...]) -> StoredClaim:
    return StoredClaim(row[0], ClaimFacts(row[1], row[2], row[3], tuple(row[5] or ()), row[6] or row[4]))
