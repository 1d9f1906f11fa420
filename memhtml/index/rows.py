"""Row-level maintenance of the index plane: store projections, remove paths, re-point renames.

DuckDB has no cascades or triggers, so every child table and the BM25 postings are kept in step here,
explicitly, with set-based statements (one statement per table per batch, never one per row).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

from memhtml.contracts.errors import StorageFailure
from memhtml.index.database import Database, membership
from memhtml.index.projection import FileProjection, SkippedFile

FILE_COLUMNS: Final[tuple[str, ...]] = (
    "doc_id", "path", "blob_sha", "content_hash", "memory_type", "title", "gist", "body_text", "disclosure_text",
    "token_text", "para", "workspace", "confidence", "importance", "archived", "origin_path", "word_count",
    "doc_len", "created_at", "updated_at", "event_at", "archived_at", "valid_from", "valid_until",
    "superseded_by", "reprieves", "needs_revision", "author", "session_id", "prompt_id", "turn_uuid",
    "task_status", "due_at", "frame_key", "indexed_at", "active_hash",
)  # fmt: skip
CHILD_TABLES: Final[tuple[str, ...]] = ("file_tags", "file_entities", "file_facets", "file_citations")
# Second active copies of an article the index holds in another file (see `held_first`).
DUPLICATES_TABLE: Final[str] = "duplicate_files"
ALL_TABLES: Final[tuple[str, ...]] = (*CHILD_TABLES, "edges", "postings", "terms", "files", DUPLICATES_TABLE)


def empty_tables(database: Database, tables: Sequence[str]) -> list[str]:
    """Empty `tables` by dropping each and creating it again from its own catalog definition, inside the
    caller's transaction, so a failure restores every row; returns the statements that create their
    indexes again, for the caller to run once it has loaded them (`create_indexes`).

    Deleting every row instead costs DuckDB one removal per key from each unique index at commit: a
    large share of a rebuild, most of it the terms'; re-creation costs next to nothing. And an
    index built from a loaded table costs a fraction of inserting its keys batch by batch.
    """
    parameters = {"catalog": database.main_catalog, "tables": list(tables)}
    definitions: dict[str, str] = dict(
        database.rows(
            """SELECT table_name, sql FROM duckdb_tables()
            WHERE database_name = $catalog AND schema_name = 'main' AND table_name IN (SELECT unnest($tables))""",
            parameters,
        )
    )
    missing = [table for table in tables if table not in definitions]
    if missing:
        raise StorageFailure(
            f"the index lacks its table {missing[0]}",
            ["delete .memhtml/index.duckdb; the next command builds it again from git"],
        )
    indexes = database.rows(
        """SELECT sql FROM duckdb_indexes()
        WHERE database_name = $catalog AND schema_name = 'main' AND table_name IN (SELECT unnest($tables))
          AND sql IS NOT NULL""",
        parameters,
    )
    for table in tables:
        database.run(f"DROP TABLE {table}")
        database.run(definitions[table])
    return [str(definition) for (definition,) in indexes]


def create_indexes(database: Database, definitions: Sequence[str]) -> None:
    """Run the index definitions `empty_tables` returned; a unique index refuses a table that breaks it."""
    for definition in definitions:
        database.run(definition)


def remove_paths(database: Database, paths: Sequence[str]) -> int:
    """Delete every row of `paths`, a listed duplicate's too; returns how many files rows went."""
    if not paths:
        return 0
    forget_duplicates(database, paths)
    return _remove_rows(database, _indexed_doc_ids(database, paths))


def forget_duplicates(database: Database, paths: Sequence[str]) -> None:
    """Drop `paths` from the duplicates list: each is gone, or about to be read again."""
    if paths:
        named, parameters = membership("path", "paths", paths)
        database.run(f"DELETE FROM {DUPLICATES_TABLE} WHERE {named}", parameters)


def duplicates_due(database: Database, from_disk: Collection[str]) -> list[tuple[str, str]]:
    """(path, blob id) of each listed duplicate that should be held now, in `held_first` order: its
    article is held by no memory any more, or by one that comes later (renamed past it, say)."""
    # The list is nearly always empty: one scan of it, and the held copies probed by key only if not.
    listed = database.rows(f"SELECT path, content_hash, blob_sha FROM {DUPLICATES_TABLE} ORDER BY path")
    if not listed:
        return []
    holders = _owners(database, sorted({str(row[1]) for row in listed}))
    due = [
        (str(path), str(blob))
        for path, content_hash, blob in listed
        if content_hash not in holders or held_first(holders[content_hash][0], from_disk) > held_first(path, from_disk)
    ]
    return sorted(due, key=lambda item: held_first(item[0], from_disk))


def _indexed_doc_ids(database: Database, paths: Sequence[str]) -> dict[str, int]:
    """The doc_id of each of `paths` the index holds."""
    wanted, parameters = membership("path", "paths", paths)
    rows = database.rows(f"SELECT path, doc_id FROM files WHERE {wanted}", parameters)
    return {str(row[0]): int(row[1]) for row in rows}


def _remove_rows(database: Database, doc_ids: dict[str, int]) -> int:
    """Delete every row of the indexed paths `doc_ids` names. Every row of a path is written with its
    files row, so a path the index does not hold (a new file: every write, most of a batch) has
    nothing to delete and costs none of the seven deletes, each a scan of its table."""
    if not doc_ids:
        return 0
    numbered, ids = membership("doc_id", "doc_ids", doc_ids.values())
    database.run(f"DELETE FROM postings WHERE {numbered}", ids)
    for table, column in [*((table, "path") for table in CHILD_TABLES), ("edges", "src_path"), ("files", "path")]:
        named, paths = membership(column, "paths", doc_ids)
        database.run(f"DELETE FROM {table} WHERE {named}", paths)
    return len(doc_ids)


def rename_path(database: Database, old: str, new: str) -> bool:
    """Re-point one file's rows from `old` to `new`, keeping its doc_id and postings; False if unindexed."""
    if database.value("SELECT count(*) FROM files WHERE path = $old", {"old": old}) == 0:
        forget_duplicates(database, [old])  # a listed duplicate is read again at its new path
        return False
    moves = {"old": old, "new": new}
    remove_paths(database, [new])  # a stale row at the destination would collide
    database.run("UPDATE files SET path = $new WHERE path = $old", moves)
    for table in CHILD_TABLES:
        database.run(f"UPDATE {table} SET path = $new WHERE path = $old", moves)
    database.run("UPDATE edges SET src_path = $new WHERE src_path = $old", moves)
    return True


def active_hash_owners(database: Database, hashes: Sequence[str]) -> dict[str, str]:
    """Active-hash → path for the hashes given (the uniqueness guard's view)."""
    return {active_hash: path for active_hash, (path, _) in _owners(database, hashes).items()}


def _owners(database: Database, hashes: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Active-hash → (path, blob id) of the memory holding it, for the hashes given."""
    if not hashes:
        return {}
    wanted, parameters = membership("active_hash", "hashes", hashes)
    rows = database.rows(f"SELECT active_hash, path, blob_sha FROM files WHERE {wanted}", parameters)
    return {str(row[0]): (str(row[1]), str(row[2])) for row in rows}


def active_hashes(database: Database) -> frozenset[str]:
    """Every content hash an active memory holds (tasks hold none: they are never deduplicated)."""
    return frozenset(row[0] for row in database.rows("SELECT active_hash FROM files WHERE active_hash IS NOT NULL"))


def store_projections(
    database: Database,
    projections: Sequence[FileProjection],
    *,
    from_disk: Collection[str] = frozenset(),
) -> list[SkippedFile]:
    """Replace the rows of each projected path; of two active copies of one article, one is held and the
    other listed as a duplicate and reported skipped (see `_without_duplicate_hashes`).

    Callers run this inside a transaction. Existing paths keep their doc_id (a rebuild into emptied
    tables takes `bulkload` instead). `from_disk`:
    the paths whose rows hold (or will hold) working-tree bytes that are not HEAD's.
    """
    if not projections:
        return []
    paths = [projection.path for projection in projections]
    forget_duplicates(database, paths)
    existing_ids = _indexed_doc_ids(database, paths)
    _remove_rows(database, existing_ids)
    accepted, skipped = _without_duplicate_hashes(database, projections, from_disk)
    if not accepted:
        return skipped
    fresh = [projection.path for projection in accepted if projection.path not in existing_ids]
    new_ids = next_doc_ids(database, len(fresh))
    doc_ids = {**existing_ids, **dict(zip(fresh, new_ids, strict=True))}
    _insert_files(database, accepted, doc_ids)
    _insert_children(database, accepted)
    _insert_postings(database, accepted, doc_ids)
    return skipped


def held_first(path: str, from_disk: Collection[str]) -> tuple[bool, str]:
    """The order in which copies of one article are held: committed ones before uncommitted ones (an
    untracked copy or a dirty edit never takes the article from a commit; the write path's dedupe
    must name a committed file), then the smallest path."""
    return (path in from_disk, path)


def _without_duplicate_hashes(
    database: Database, projections: Sequence[FileProjection], from_disk: Collection[str]
) -> tuple[list[FileProjection], list[SkippedFile]]:
    """The projections to store, and the copies skipped. Whichever copy of an article arrives first, the
    one first in `held_first` order is held, so a rebuild (HEAD's paths in order, then the working
    tree) and any sequence of updates agree: an arriving copy that comes first displaces the held one,
    whose rows go and which joins the list."""
    hashes = [p.row["active_hash"] for p in projections if p.row["active_hash"] is not None]
    owners = _owners(database, hashes)
    accepted: list[FileProjection] = []
    skipped: list[SkippedFile] = []
    listed: list[tuple[str, str, str]] = []
    displaced: list[str] = []
    for projection in sorted(projections, key=lambda item: held_first(item.path, from_disk)):
        active_hash = projection.row["active_hash"]
        owner = owners.get(active_hash) if active_hash is not None else None
        if active_hash is None:
            accepted.append(projection)
            continue
        if owner is not None and owner[0] != projection.path:
            held, held_blob = owner
            if held_first(held, from_disk) < held_first(projection.path, from_disk):
                skipped.append(SkippedFile(projection.path, duplicate_reason(held)))
                listed.append((projection.path, active_hash, projection.row["blob_sha"]))
                continue
            skipped.append(SkippedFile(held, duplicate_reason(projection.path)))
            listed.append((held, active_hash, held_blob))
            displaced.append(held)
        owners[active_hash] = (projection.path, projection.row["blob_sha"])
        accepted.append(projection)
    # Only a held row from before this batch can be displaced: the batch itself is read in that order.
    _remove_rows(database, _indexed_doc_ids(database, displaced) if displaced else {})
    if listed:
        columns = zip(*listed, strict=True)
        database.insert_columns(
            DUPLICATES_TABLE, dict(zip(("path", "content_hash", "blob_sha"), map(list, columns), strict=True))
        )
    return accepted, skipped


def duplicate_reason(held: str) -> str:
    """Why a second active copy of an article is left out of the index."""
    return f"duplicate of {held}: same content hash, both active"


def next_doc_ids(database: Database, count: int) -> list[int]:
    if count == 0:
        return []
    rows = database.rows("SELECT nextval('doc_ids') FROM range($count)", {"count": count})
    return [int(row[0]) for row in rows]


def insert_rows(
    database: Database, projections: Sequence[FileProjection], doc_ids: Mapping[str, int], *, prefix: str
) -> None:
    """Insert the rows of `projections` into the tables named `prefix` + each index table's name (the
    as-of overlay's temporary tables), with no duplicate check; new terms are numbered after those
    the `terms` the statement sees already holds."""
    _insert_files(database, projections, doc_ids, prefix=prefix)
    _insert_children(database, projections, prefix=prefix)
    _insert_postings(database, projections, doc_ids, prefix=prefix)


def _insert_files(
    database: Database, projections: Sequence[FileProjection], doc_ids: Mapping[str, int], *, prefix: str = ""
) -> None:
    columns: dict[str, list[Any]] = {name: [] for name in FILE_COLUMNS}
    for projection in projections:
        row = {**projection.row, "doc_id": doc_ids[projection.path]}
        for name in FILE_COLUMNS:
            columns[name].append(row[name])
    database.insert_columns(f"{prefix}files", columns)


def _insert_children(database: Database, projections: Sequence[FileProjection], *, prefix: str = "") -> None:
    tables: dict[str, tuple[tuple[str, ...], list[tuple[Any, ...]]]] = {
        "file_tags": (("path", "tag"), [(p.path, tag) for p in projections for tag in p.tags]),
        "file_entities": (
            ("path", "entity_type", "entity_name"),
            [(p.path, *entity) for p in projections for entity in p.entities],
        ),
        "file_facets": (
            ("path", "name", "value", "numeric_value"),
            [(p.path, *facet) for p in projections for facet in p.facets],
        ),
        "file_citations": (("path", "text", "href"), [(p.path, *cite) for p in projections for cite in p.citations]),
        "edges": (("src_path", "rel", "dst_path", "edge_class"), [(p.path, *e) for p in projections for e in p.edges]),
    }
    for table, (names, rows) in tables.items():
        if rows:
            columns = zip(*rows, strict=True)
            database.insert_columns(
                f"{prefix}{table}", {name: list(values) for name, values in zip(names, columns, strict=True)}
            )


def _insert_postings(
    database: Database,
    projections: Sequence[FileProjection],
    doc_ids: Mapping[str, int],
    *,
    prefix: str = "",
) -> None:
    vocabulary = sorted({term for projection in projections for term in projection.terms})
    if not vocabulary:
        return
    listed, parameters = membership("term", "terms", vocabulary)
    # The largest term id rides along as the one row without a term: a statement of its own would cost
    # every write one more statement.
    found = database.rows(
        f"SELECT term, term_id FROM terms WHERE {listed} UNION ALL SELECT NULL, coalesce(max(term_id), 0) FROM terms",
        parameters,
    )
    known = {str(term): int(term_id) for term, term_id in found if term is not None}
    unknown = [term for term in vocabulary if term not in known]
    if unknown:
        start = next(int(term_id) for term, term_id in found if term is None) + 1
        new_ids = list(range(start, start + len(unknown)))
        database.insert_columns(f"{prefix}terms", {"term_id": new_ids, "term": unknown})
        known.update(zip(unknown, new_ids, strict=True))
    term_ids: list[int] = []
    doc_column: list[int] = []
    frequencies: list[int] = []
    lengths: list[int] = []
    for projection in projections:
        terms = projection.terms
        term_ids.extend(known[term] for term in terms)
        frequencies.extend(terms.values())
        doc_column.extend([doc_ids[projection.path]] * len(terms))
        lengths.extend([projection.row["doc_len"]] * len(terms))
    database.insert_integers(
        f"{prefix}postings", {"term_id": term_ids, "doc_id": doc_column, "tf": frequencies, "dl": lengths}
    )
