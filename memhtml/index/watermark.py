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


def is_fresh(database: Database, reader: CorpusReader) -> bool:
    """Whether the index already reflects HEAD (dirty files are projected by the next update)."""
    head, _, built = watermark(database)
    return built and head == reader.head()
