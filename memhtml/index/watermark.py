"""The index watermark: which commit the index reflects and which paths it projected from disk.

Kept apart from the indexer so a read command can check freshness without importing the projection
(and with it the HTML parser).
"""

from __future__ import annotations

from memhtml.contracts.corpus import CorpusReader
from memhtml.index.database import Database


def watermark(database: Database) -> tuple[str | None, list[str], bool]:
    """(head_sha, paths last projected from the working tree, whether a pass ever completed)."""
    row = database.rows("SELECT head_sha, dirty_paths, rebuilt_at FROM index_state WHERE id = 1")[0]
    return row[0], list(row[1] or []), row[2] is not None


def is_fresh(database: Database, reader: CorpusReader, *, head_seen: str | None = None) -> bool:
    """Whether the index already reflects HEAD (dirty files are projected by the next update).

    `head_seen` is a HEAD the caller read moments ago and has committed nothing since. An index at that
    commit is fresh without asking git again: a commit landing in between is one the command would
    equally have missed by starting a moment earlier. Any other watermark is compared with HEAD as it
    is now, so a catch-up never aims at an older commit than the index holds.
    """
    head, _, built = watermark(database)
    if not built:
        return False
    if head_seen is not None and head == head_seen:
        return True
    return head == reader.head()
