"""The access counters of the state plane (`state.access`): a read counted, a reinforcement (with its
cooldown and its moving average of outcomes), and whole rows read for the committed sidecar, merged back
from it, and seeded for a benchmark's fixture.

The counters are the one thing git cannot rebuild, so their columns are named once, here
(`ACCESS_FIELDS`, in the table's order): the sidecar's keys are these names, and a merge keeps, for each
counter, the larger of the two values, so replaying a sidecar twice, or an old one, never lowers one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from memhtml.index.database import Database

# A path reinforced again within this many seconds is cooled down: counted once, not bumped twice.
REINFORCE_COOLDOWN_SECONDS: Final[int] = 900
# The weight of the newest signal in the outcome score's exponentially weighted moving average.
OUTCOME_EWMA_ALPHA: Final[float] = 0.3

ACCESS_FIELDS: Final[tuple[str, ...]] = (
    "path",
    "access_count",
    "reinforcement_count",
    "outcome_score",
    "last_accessed_at",
    "last_reinforced_at",
    "updated_at",
)


def count_read(database: Database, path: str, now: str) -> None:
    """One more read of `path`, at `now`."""
    database.run(
        """
        INSERT INTO state.access AS a (path, access_count, last_accessed_at, updated_at)
        VALUES ($path, 1, $now, $now)
        ON CONFLICT (path) DO UPDATE SET access_count = a.access_count + 1,
                                         last_accessed_at = $now, updated_at = $now
        """,
        {"path": path, "now": now},
    )


def reinforce_paths(database: Database, paths: Sequence[str], signal: int, now: str) -> set[str]:
    """Reinforce each of `paths` with `signal` (1, -1 or 0) at `now`, unless it was reinforced within the
    cooldown; the paths bumped. A neutral signal counts an access but no reinforcement."""
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
            {"paths": list(paths), "signal": signal, "counts": 1 if signal else 0, "now": now},
        )
    return {str(row[0]) for row in bumped}


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
