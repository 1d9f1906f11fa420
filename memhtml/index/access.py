"""The access counters of the state plane (`state.access`), as whole rows: read every one for the
committed sidecar, merge rows back from it, and seed rows for a benchmark's fixture.

The counters are the one thing git cannot rebuild, so their columns are named once, here
(`ACCESS_FIELDS`, in the table's order): the sidecar's keys are these names, and a merge keeps, for each
counter, the larger of the two values, so replaying a sidecar twice, or an old one, never lowers one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from memhtml.index.database import Database

ACCESS_FIELDS: Final[tuple[str, ...]] = (
    "path",
    "access_count",
    "reinforcement_count",
    "outcome_score",
    "last_accessed_at",
    "last_reinforced_at",
    "updated_at",
)


def access_rows(database: Database) -> list[dict[str, Any]]:
    """Every access row, sorted by path, as a mapping of `ACCESS_FIELDS` to values."""
    rows = database.rows(f"SELECT {', '.join(ACCESS_FIELDS)} FROM state.access ORDER BY path")
    return [dict(zip(ACCESS_FIELDS, row, strict=True)) for row in rows]


def merge_access_row(database: Database, row: Mapping[str, Any]) -> None:
    """Insert `row` (keyed by `ACCESS_FIELDS`), or merge it into the path's row: each counter and instant
    keeps the larger value, the outcome score the newer one."""
    database.run(
        """
        INSERT INTO state.access AS a VALUES ($path, $access_count, $reinforcement_count, $outcome_score,
                                              $last_accessed_at, $last_reinforced_at, $updated_at)
        ON CONFLICT (path) DO UPDATE SET
            access_count = greatest(a.access_count, excluded.access_count),
            reinforcement_count = greatest(a.reinforcement_count, excluded.reinforcement_count),
            outcome_score = CASE WHEN coalesce(excluded.updated_at, '') > a.updated_at
                                 THEN excluded.outcome_score ELSE a.outcome_score END,
            last_accessed_at = greatest(a.last_accessed_at, excluded.last_accessed_at),
            last_reinforced_at = greatest(a.last_reinforced_at, excluded.last_reinforced_at),
            updated_at = greatest(a.updated_at, excluded.updated_at)
        """,
        dict(row),
    )


def seed_access_rows(
    database: Database,
    *,
    paths: Sequence[str],
    counts: Sequence[int],
    reinforced: Sequence[int],
    outcomes: Sequence[float],
    accessed_at: Sequence[str],
) -> None:
    """New access rows for `paths` (a fresh store's: none of them has one yet), accessed and updated at
    `accessed_at`."""
    database.run(
        """
        INSERT INTO state.access (path, access_count, reinforcement_count, outcome_score, last_accessed_at,
                                  updated_at)
        SELECT unnest($paths), unnest($counts), unnest($reinforced), unnest($outcomes), unnest($at), unnest($at)
        """,
        {
            "paths": list(paths),
            "counts": list(counts),
            "reinforced": list(reinforced),
            "outcomes": list(outcomes),
            "at": list(accessed_at),
        },
    )
