"""The store as a past commit held it, for one `--as-of <commit>` query.

The index holds one version of each memory: today's. A memory edited in place since the commit, or
deleted or moved away since, would answer from today's text, or not at all. For such a query the
memories whose bytes at that commit the index does not hold are projected from the commit's blobs into
temporary tables, and temporary views named like the index's tables show the index with those rows in
place of today's (DuckDB resolves a name in the temporary catalog first). Every statement of the query
reads the views unchanged; they are dropped when the query ends, and the index file is never written,
so a read-only connection serves. An archived memory still stands for the path it was archived from,
as the scope filter has it, while its article is the one the commit held; one edited since (committed
or on disk) answers with the commit's version.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Final, NamedTuple

from memhtml.domain.chunking import chunk_text
from memhtml.index.database import Database
from memhtml.index.embedders import Embedder
from memhtml.index.projection import FileProjection
from memhtml.index.rows import insert_rows
from memhtml.index.vectors import pending_texts

# The index tables a query reads, and the column by which a past version replaces today's rows.
_REPLACED_BY: Final[dict[str, str | None]] = {
    "files": "path",
    "file_tags": "path",
    "file_entities": "path",
    "file_facets": "path",
    "file_citations": "path",
    "edges": "src_path",
    "postings": "doc_id",
    "terms": None,  # past terms are added; a term id never changes meaning
    "chunk_vectors": None,  # keyed by text: a past text adds vectors, today's keep theirs
}
_PREFIX: Final[str] = "as_of_"


class ArchivedSince(NamedTuple):
    """A memory archived since the commit, which stands for the path it lived at then."""

    archived_path: str
    content_hash: str  # of its article as the index holds it today


def past_versions(
    database: Database, tree: Mapping[str, str], committed: str
) -> tuple[list[str], list[str], dict[str, ArchivedSince]]:
    """Of `tree` (each live memory path of the commit → its blob id), (the paths the index does not hold
    as they were, to read from the commit; the paths whose rows today hold another version or another
    memory, to leave out; the memories archived since, by the path each had then). An archived memory
    answers with its row only while its article is the one the commit held (the caller compares the
    commit's version: an edit since, committed or on disk, changes it); else with the commit's version,
    its row left out."""
    if not tree:
        return [], [], {}
    live = sorted(tree)
    # One statement, so the commit's path list crosses into DuckDB once (cheaper than three, each taking
    # the list again): today's row at each path, archived rows that stand for one, listed second copies.
    rows = database.rows(
        """
        WITH live AS (SELECT unnest($live) AS path)
        SELECT 'held', path, blob_sha FROM files WHERE NOT archived AND path IN (SELECT path FROM live)
        UNION ALL
        SELECT 'archived', origin_path, path || chr(0) || content_hash FROM files
        WHERE archived AND origin_path IN (SELECT path FROM live) AND coalesce(archived_at, '9999') > $committed
        UNION ALL
        SELECT 'listed', path, blob_sha FROM duplicate_files WHERE path IN (SELECT path FROM live)
        """,
        {"live": live, "committed": committed},
    )
    held = {str(path): blob for kind, path, blob in rows if kind == "held"}
    archived_since = {
        str(path): ArchivedSince(*str(row).split(chr(0), 1)) for kind, path, row in rows if kind == "archived"
    }
    # A second copy the index lists rather than holds was a second copy then too: it stays out.
    listed = {str(path): blob for kind, path, blob in rows if kind == "listed"}
    past = [
        path
        for path in live
        if path not in archived_since and held.get(path) != tree[path] and listed.get(path) != tree[path]
    ]
    # A memory archived since stands for its path; another one written at that path later stays out.
    later = [path for path in archived_since if path in held and held[path] != tree[path]]
    return past, sorted([*(path for path in past if path in held), *later]), archived_since


@contextmanager
def overlay(
    database: Database, projections: Sequence[FileProjection], replaced: Sequence[str], embedder: Embedder | None
) -> Iterator[None]:
    """Show the index with `replaced` paths' rows left out and `projections` (past versions) in, until the
    block ends; `embedder` (None: no vector arm) embeds the past texts no vector covers."""
    if not projections and not replaced:
        yield
        return
    try:
        _create(database, replaced)
        first_id = int(database.value("SELECT coalesce(max(doc_id), 0) FROM files")) + 1
        doc_ids = {projection.path: first_id + offset for offset, projection in enumerate(projections)}
        insert_rows(database, projections, doc_ids, prefix=_PREFIX)
        if embedder is not None:
            _embed(database, embedder, [projection.path for projection in projections])
        yield
    finally:
        _drop(database)


def _create(database: Database, replaced: Sequence[str]) -> None:
    catalog = f'"{database.main_catalog}".main'
    database.run(
        f"CREATE TEMP TABLE {_PREFIX}replaced AS SELECT path, doc_id FROM {catalog}.files"
        " WHERE path IN (SELECT unnest($paths))",
        {"paths": list(replaced) or [""]},
    )
    for table, column in _REPLACED_BY.items():
        database.run(f"CREATE TEMP TABLE {_PREFIX}{table} AS SELECT * FROM {catalog}.{table} LIMIT 0")
        kept = "" if column is None else f" WHERE {column} NOT IN (SELECT {_key(column)} FROM {_PREFIX}replaced)"
        past = f"SELECT * FROM {_PREFIX}{table}"
        database.run(f"CREATE TEMP VIEW {table} AS SELECT * FROM {catalog}.{table}{kept} UNION ALL {past}")


def _key(column: str) -> str:
    return "doc_id" if column == "doc_id" else "path"


def _embed(database: Database, embedder: Embedder, paths: Sequence[str]) -> None:
    hashes: list[str] = []
    ordinals: list[int] = []
    chunks: list[str] = []
    for content_hash, body_text in pending_texts(database, paths):
        for ordinal, chunk in enumerate(chunk_text(body_text)):
            hashes.append(content_hash)
            ordinals.append(ordinal)
            chunks.append(chunk)
    if chunks:
        vectors = embedder.embed_documents(chunks)
        lengths = [len(chunk) for chunk in chunks]
        database.insert_vectors(hashes, ordinals, lengths, vectors, table=f"{_PREFIX}chunk_vectors")


def _drop(database: Database) -> None:
    for table in _REPLACED_BY:
        database.run(f"DROP VIEW IF EXISTS temp.{table}")
        database.run(f"DROP TABLE IF EXISTS temp.{_PREFIX}{table}")
    database.run(f"DROP TABLE IF EXISTS temp.{_PREFIX}replaced")
