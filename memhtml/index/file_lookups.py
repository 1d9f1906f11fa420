"""Small reads of the `files` table by path or by key: whether a path is indexed, its title and its
archive facts (`resolve`, `neighbors`, `reinforce`), and what the write path asks while it plans a batch:
which active memories hold a content hash (with the semantic head a merge compares) or a frame key
(`consolidate last-wins`), and the content hash of each of some paths (the near-duplicate assist)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, NamedTuple

from memhtml.index.database import Database, membership

if TYPE_CHECKING:
    from memhtml.html.identity import SemanticHead


class ActiveRow(NamedTuple):
    """The active memory holding a content hash, with its semantic head as indexed."""

    content_hash: str
    path: str
    head: SemanticHead


class ArchiveFacts(NamedTuple):
    archived: bool
    superseded_by: str | None


def is_indexed(database: Database, path: str) -> bool:
    return bool(database.value("SELECT count(*) FROM files WHERE path = $path", {"path": path}))


def indexed_among(database: Database, paths: Sequence[str]) -> set[str]:
    """Those of `paths` the index holds."""
    wanted, parameters = membership("path", "paths", paths)
    return {str(row[0]) for row in database.rows(f"SELECT path FROM files WHERE {wanted}", parameters)}


def title_of(database: Database, path: str) -> str | None:
    title = database.value("SELECT title FROM files WHERE path = $path", {"path": path})
    return None if title is None else str(title)


def archive_facts(database: Database, path: str) -> ArchiveFacts | None:
    """Whether the memory at `path` is archived and what its own meta says superseded it; None when the
    index does not hold `path`."""
    rows = database.rows("SELECT archived, superseded_by FROM files WHERE path = $path", {"path": path})
    return ArchiveFacts(bool(rows[0][0]), rows[0][1]) if rows else None


def archived_from(database: Database, origin: str) -> str | None:
    """The archived memory that left `origin` last (the newest archive move), if any."""
    moved = database.value(
        "SELECT path FROM files WHERE archived AND origin_path = $path"
        " ORDER BY archived_at DESC NULLS LAST, path DESC LIMIT 1",
        {"path": origin},
    )
    return None if moved is None else str(moved)


def active_rows_by_hash(database: Database, content_hashes: Sequence[str]) -> list[ActiveRow]:
    """The active memories holding any of `content_hashes`, each with its semantic head."""
    owned, parameters = membership("active_hash", "hashes", content_hashes)
    rows = database.rows(
        f"SELECT active_hash, path, memory_type, confidence, importance, event_at FROM files WHERE {owned}",
        parameters,
    )
    if not rows:
        return []  # new content, the usual case: one index probe, no scan of the child tables
    # Imported here: the semantic head brings the memory file's reader, which a read command never needs.
    from memhtml.html.identity import SemanticHead

    paths = [str(row[1]) for row in rows]
    named, parameters = membership("path", "paths", paths)
    entities: dict[str, set[str]] = {}
    for path, label in database.rows(
        f"SELECT path, entity_type || ':' || entity_name FROM file_entities WHERE {named}", parameters
    ):
        entities.setdefault(path, set()).add(label)
    tags: dict[str, set[str]] = {}
    for path, tag in database.rows(f"SELECT path, tag FROM file_tags WHERE {named}", parameters):
        tags.setdefault(path, set()).add(tag)
    return [
        ActiveRow(
            str(digest),
            str(path),
            SemanticHead(
                memory_type,
                confidence,
                importance,
                event_at,
                frozenset(entities.get(path, ())),
                frozenset(tags.get(path, ())),
            ),
        )
        for digest, path, memory_type, confidence, importance, event_at in rows
    ]


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
