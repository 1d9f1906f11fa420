"""The one projection function: a memory file's bytes to the rows the index stores for it.

Rebuild and incremental update both call `project_file`, so the two paths cannot disagree. It is
pure: the same path, blob and bytes always give the same rows.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from memhtml.contracts.paths import is_archived_path, original_path_for
from memhtml.contracts.vocabulary import ALL_RELS, MEMORY_RELS, PERSON_RELS, PROVENANCE_RELS, TASK_RELS
from memhtml.domain.frames import frame_key
from memhtml.domain.tokens import document_terms, phrase_words
from memhtml.html.document import ParsedMemory
from memhtml.html.validate import inspect_memory


class FileProjection(NamedTuple):
    """Everything the index stores for one memory file."""

    path: str
    row: dict[str, Any]
    tags: list[str]
    entities: list[tuple[str, str]]
    facets: list[tuple[str, str, float | None]]
    citations: list[tuple[str, str | None]]
    edges: list[tuple[str, str, str]]  # (rel, dst_path, edge_class)
    terms: dict[str, int]


class SkippedFile(NamedTuple):
    """A file the index leaves out (it stays in the tree; doctor reports it), and why."""

    path: str
    reason: str


_EDGE_CLASS = {
    **{rel: "memory" for rel in MEMORY_RELS},
    **{rel: "person" for rel in PERSON_RELS},
    **{rel: "provenance" for rel in PROVENANCE_RELS},
    **{rel: "task" for rel in TASK_RELS},
}


def project_file(path: str, blob_sha: str, content: bytes, indexed_at: str) -> FileProjection | SkippedFile:
    """Parse, check and flatten one file; a file with violations is skipped with its reasons."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return SkippedFile(path, "not UTF-8 text")
    memory, check = inspect_memory(text, warnings=False)
    if check.violations:
        return SkippedFile(path, "; ".join(check.violations))
    return project_memory(path, blob_sha, memory, indexed_at)


def relocated(projection: FileProjection, path: str) -> FileProjection:
    """The projection of the same file at `path`: the path-derived fields recomputed, the rest kept.

    A batch projects each rendered file before the store chooses its path; this puts it where it landed.
    """
    archived = is_archived_path(path)
    origin = original_path_for(path) if archived else None
    segments = (origin or path).split("/")
    row = dict(projection.row)
    row.update(
        path=path,
        para=path.split("/", 1)[0],
        workspace=segments[1] if segments[0] == "projects" and len(segments) > 2 else None,
        archived=archived,
        origin_path=origin,
        active_hash=None if archived or row["memory_type"] == "task" else row["content_hash"],
    )
    edges = [(rel, destination, kind) for rel, destination, kind in projection.edges if destination != path]
    return FileProjection(
        path=path,
        row=row,
        tags=projection.tags,
        entities=projection.entities,
        facets=projection.facets,
        citations=projection.citations,
        edges=edges,
        terms=projection.terms,
    )


def project_memory(path: str, blob_sha: str, memory: ParsedMemory, indexed_at: str) -> FileProjection:
    """Flatten one parsed, checked memory into its index rows."""
    archived = is_archived_path(path)
    origin = original_path_for(path) if archived else None
    live_path = origin or path
    segments = live_path.split("/")
    memory_type = memory.memory_type or ""
    fts_text = memory.fts_text
    terms = document_terms(fts_text)
    row: dict[str, Any] = {
        "path": path,
        "blob_sha": blob_sha,
        "content_hash": memory.content_hash,
        "memory_type": memory_type,
        "title": memory.title,
        "gist": memory.gist,
        "body_text": memory.body_text,
        "disclosure_text": memory.disclosure_text,
        "token_text": " " + " ".join(phrase_words(fts_text)) + " ",
        "para": path.split("/", 1)[0],
        "workspace": segments[1] if segments[0] == "projects" and len(segments) > 2 else None,
        "confidence": memory.confidence,
        "importance": memory.importance,
        "archived": archived,
        "origin_path": origin,
        "word_count": memory.word_count,
        "doc_len": sum(terms.values()),
        "created_at": memory.created or "",
        "updated_at": memory.updated or "",
        "event_at": memory.event_at,
        "archived_at": memory.archived_at,
        "valid_from": memory.valid_from,
        "valid_until": memory.valid_until,
        "superseded_by": _href_path(memory.superseded_by),
        "reprieves": memory.reprieves,
        "needs_revision": memory.needs_revision,
        "author": memory.author,
        "session_id": memory.session,
        "prompt_id": memory.prompt,
        "turn_uuid": memory.turn,
        "task_status": memory.task_status if memory_type == "task" else None,
        "due_at": memory.due,
        "frame_key": frame_key(memory.gist),
        "indexed_at": indexed_at,
        "active_hash": None if archived or memory_type == "task" else memory.content_hash,
    }
    return FileProjection(
        path=path,
        row=row,
        tags=list(dict.fromkeys(tag.strip() for tag in memory.tags if tag.strip())),
        entities=list(dict.fromkeys(memory.derived_entities)),
        facets=memory.facets,
        citations=memory.citations,
        edges=_edges(path, memory.links),
        terms=terms,
    )


def _edges(path: str, links: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    seen: dict[tuple[str, str], str] = {}
    for rel, href in links:
        destination = _href_path(href)
        if rel not in ALL_RELS or not destination or destination == path:
            continue
        seen.setdefault((rel, destination), _EDGE_CLASS[rel])
    return [(rel, destination, edge_class) for (rel, destination), edge_class in seen.items()]


def _href_path(href: str | None) -> str | None:
    """Root-absolute href to repo-relative path: leading slashes stripped, query/fragment cut."""
    if not href:
        return None
    cut = href.split("#", 1)[0].split("?", 1)[0]
    stripped = cut.lstrip("/")
    return stripped or None
