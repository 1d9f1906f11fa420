"""Small reads of the `files` table that the write path asks while it plans a batch: which active
memories hold a frame key (`consolidate last-wins`), and the content hash of each of some paths (the
near-duplicate assist names what a neighbour holds)."""

from __future__ import annotations

from collections.abc import Collection

from memhtml.index.database import Database, membership


def active_paths_by_frame_key(database: Database, keys: Collection[str]) -> dict[str, list[str]]:
    """For each of `keys`, the active non-task memories holding it, by path."""
    rows = database.rows(
        "SELECT frame_key, path FROM files WHERE NOT archived AND memory_type <> 'task'"
        " AND frame_key IN (SELECT unnest($keys)) ORDER BY path",
        {"keys": sorted(keys)},
    )
    found: dict[str, list[str]] = {}
    for key, path in rows:
        found.setdefault(str(key), []).append(str(path))
    return found


def content_hashes(database: Database, paths: Collection[str]) -> dict[str, str]:
    """The content hash of each of `paths` the index holds."""
    if not paths:
        return {}
    wanted, parameters = membership("path", "paths", sorted(paths))
    rows = database.rows(f"SELECT path, content_hash FROM files WHERE {wanted}", parameters)
    return {str(row[0]): str(row[1]) for row in rows}
