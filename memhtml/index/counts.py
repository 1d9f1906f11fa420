"""What the index holds, counted: the totals `status` and `index status` report, each read in one
statement so a status costs one round trip however many figures it shows."""

from __future__ import annotations

from typing import Final, NamedTuple

from memhtml.index.database import Database

# The state plane (access counters, session links) is attached to this connection, whether or not any
# row was read yet: a store without any access row still has it.
_STATE_ATTACHED: Final[str] = (
    "EXISTS (SELECT 1 FROM duckdb_tables() WHERE database_name = 'state' AND table_name = 'access')"
)


class StoreTotals(NamedTuple):
    """`status`'s figures of the index."""

    active_by_type: dict[str, int]  # memory type -> active memories of it
    archived: int
    edges: int
    indexed_head: str | None
    has_state: bool


class IndexTotals(NamedTuple):
    """`index status`'s row counts and instants."""

    files: int
    active_files: int
    edges: int
    tags: int
    entities: int
    terms: int
    postings: int
    rebuilt_at: str | None
    updated_at: str | None
    has_state: bool


def store_totals(database: Database) -> StoreTotals:
    by_type = database.rows(
        "SELECT memory_type, count(*) FROM files WHERE NOT archived GROUP BY memory_type ORDER BY memory_type"
    )
    archived, edges, head, has_state = database.rows(
        f"""
        SELECT (SELECT count(*) FROM files WHERE archived), (SELECT count(*) FROM edges),
               (SELECT head_sha FROM index_state), {_STATE_ATTACHED}
        """
    )[0]
    return StoreTotals({str(kind): int(count) for kind, count in by_type}, int(archived), int(edges), head,
                       bool(has_state))  # fmt: skip


def index_totals(database: Database) -> IndexTotals:
    row = database.rows(
        f"""
        SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM files WHERE NOT archived),
               (SELECT count(*) FROM edges), (SELECT count(DISTINCT tag) FROM file_tags),
               (SELECT count(DISTINCT entity_type || ':' || entity_name) FROM file_entities),
               (SELECT count(*) FROM terms), (SELECT count(*) FROM postings),
               (SELECT rebuilt_at FROM index_state), (SELECT updated_at FROM index_state),
               {_STATE_ATTACHED}
        """
    )[0]
    files, active, edges, tags, entities, terms, postings = (int(value) for value in row[:7])
    return IndexTotals(files, active, edges, tags, entities, terms, postings, row[7], row[8], bool(row[9]))


def edge_count(database: Database) -> int:
    """The links the index holds."""
    return int(database.value("SELECT count(*) FROM edges"))
