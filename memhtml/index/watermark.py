"""The index watermark: which commit the index reflects and which paths it projected from disk.

Kept apart from the indexer so a read command can check freshness without importing the projection
(and with it the HTML parser).
"""

from __future__ import annotations

from typing import NamedTuple

from memhtml.contracts.corpus import CorpusReader
from memhtml.index.database import Database, membership


class Watermark(NamedTuple):
    head: str | None  # the commit the index reflects
    dirty_paths: list[str]  # the paths last projected from the working tree
    built: bool  # whether a pass ever completed
    vectors_owed: bool  # a pass stored texts that may still lack their vectors


def watermark(database: Database) -> Watermark:
    row = database.rows("SELECT head_sha, dirty_paths, rebuilt_at, vectors_owed FROM index_state WHERE id = 1")[0]
    return Watermark(row[0], list(row[1] or []), row[2] is not None, bool(row[3]))


def is_fresh(database: Database, reader: CorpusReader, *, head_seen: str | None = None) -> bool:
    """Whether the index already reflects HEAD, owes no vectors, and each file it last projected from the
    working tree is still as it was there (`disk_projections_changed`; new dirty files wait for the next
    update).

    `head_seen` is a HEAD the caller read moments ago and has committed nothing since. An index at that
    commit is fresh without asking git again: a commit landing in between is one the command would
    equally have missed by starting a moment earlier. Any other watermark is compared with HEAD as it
    is now, so a catch-up never aims at an older commit than the index holds.
    """
    head, dirty_paths, built, vectors_owed = watermark(database)
    if not built or vectors_owed or _changed_on_disk(database, reader, head, dirty_paths):
        return False
    if head_seen is not None and head == head_seen:
        return True
    return head == reader.head()


def disk_projections_changed(database: Database, reader: CorpusReader) -> bool:
    """Whether a file the index last projected from the working tree changed on disk since: deleted,
    reverted, edited again. Reads catch up with the working tree then, so an edit taken back stops
    answering at once. Reads never scan the whole tree for new edits (`git status` walks every file);
    only the paths the index holds from disk are checked, and with none (the common case) nothing."""
    head, dirty_paths, _, _ = watermark(database)
    return _changed_on_disk(database, reader, head, dirty_paths)


def _changed_on_disk(database: Database, reader: CorpusReader, head: str | None, dirty_paths: list[str]) -> bool:
    if not dirty_paths:
        return False
    among, parameters = membership("path", "paths", dirty_paths)
    indexed = dict(database.rows(f"SELECT path, blob_sha FROM files WHERE {among}", parameters))
    on_disk = reader.worktree_blob_ids(dirty_paths)
    if any(on_disk.get(path) != blob_sha for path, blob_sha in indexed.items()):
        return True
    # A dirty path the index holds no row for (deleted, or an edit that broke the memory) changed if its
    # file is back to HEAD's bytes (reverted, restored): HEAD's version has a row to give back. Asked of
    # git only in that rare state, with one `ls-tree` of those paths.
    rowless = sorted(path for path in on_disk if path not in indexed)
    if not rowless or head is None:
        return False
    committed = reader.tree(head, rowless)
    return any(committed.get(path) == on_disk[path] for path in rowless)
