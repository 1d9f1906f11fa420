"""Loading a rebuild's staged projections (`staging`) into the index's emptied tables: DuckDB's own JSON
reader and set-based SQL write the rows `rows.store_projections` would, in the same order, and the
parent converts no value row by row.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from memhtml.index.database import Database, membership
from memhtml.index.projection import SkippedFile
from memhtml.index.rows import DUPLICATES_TABLE, duplicate_reason, next_doc_ids
from memhtml.index.staging import CHILD_COLUMNS, FREQUENCIES_KEY, TERMS_KEY, StagedChunk, StagedFile, child_key

# A JSON line is one memory file's projection: over DuckDB's 16 MB default only for a file of several
# megabytes, which the index still takes.
_LARGEST_LINE: Final[int] = 1 << 30
# The child tables name their path column `path`, all but one.
_CHILD_PATH_COLUMN: Final = {"edges": "src_path"}


class StagedLoader:
    """Loads staged slices into the index's emptied tables inside the caller's transaction.

    Slices must arrive in path order: of two active copies of one article the one at the smaller path is
    held (`rows.held_first` for committed files) and the other listed as a duplicate.
    """

    def __init__(self, database: Database) -> None:
        self._database = database
        self._held: dict[str, str] = {}  # active hash -> the path holding it
        types = _column_types(database, ["files", *CHILD_COLUMNS, "postings"])
        self._file_columns = [name for name in types["files"] if name != "doc_id"]
        self._rows_spec = _struct_literal({name: types["files"][name] for name in self._file_columns})
        children = {"path": types["files"]["path"]}
        for table, columns in CHILD_COLUMNS.items():
            for column in columns:
                children[child_key(table, column)] = types[table][column] + "[]"
        children[TERMS_KEY] = "VARCHAR[]"
        children[FREQUENCIES_KEY] = types["postings"]["tf"] + "[]"
        self._children_spec = _struct_literal(children)

    def load(self, chunks: Sequence[StagedChunk]) -> list[SkippedFile]:
        """Store one slice's staged chunks (removing their files); returns the copies listed as
        duplicates, as skipped files."""
        rows_files = [chunk.rows_file for chunk in chunks if chunk.rows_file is not None]
        children_files = [chunk.children_file for chunk in chunks if chunk.children_file is not None]
        try:
            return self._load([file for chunk in chunks for file in chunk.projected], rows_files, children_files)
        finally:
            for name in (*rows_files, *children_files):
                Path(name).unlink(missing_ok=True)

    def close(self) -> None:
        """Drop the staging table (temporary: it would go with the connection anyway)."""
        self._database.run("DROP TABLE IF EXISTS staged_children")

    def _load(self, projected: list[StagedFile], rows_files: list[str], children_files: list[str]) -> list[SkippedFile]:
        duplicates = self._duplicates(projected)
        count = len(projected) - len(duplicates)
        if count == 0:
            return duplicates
        database = self._database
        listed, parameters = membership("path", "listed", [copy.path for copy in duplicates])
        doc_ids = next_doc_ids(database, count)
        columns = ", ".join(self._file_columns)
        # Doc ids in path order, as the row-wise path numbers a batch.
        database.run(
            f"""
            INSERT INTO files (doc_id, {columns})
            SELECT $doc_ids[row_number() OVER (ORDER BY path)], {columns}
            FROM read_json($files, format = 'newline_delimited', columns = {self._rows_spec},
                           maximum_object_size = {_LARGEST_LINE})
            WHERE NOT ({listed})
            ORDER BY path
            """,
            {"doc_ids": doc_ids, "files": rows_files, **parameters},
        )
        database.run(
            f"""
            CREATE OR REPLACE TEMP TABLE staged_children AS
            SELECT * FROM read_json($files, format = 'newline_delimited', columns = {self._children_spec},
                                    maximum_object_size = {_LARGEST_LINE})
            WHERE NOT ({listed})
            """,
            {"files": children_files, **parameters},
        )
        for table, child_columns in CHILD_COLUMNS.items():
            keys = [child_key(table, column) for column in child_columns]
            unnested = ", ".join(f"unnest({key}) AS {column}" for key, column in zip(keys, child_columns, strict=True))
            names = ", ".join(child_columns)
            database.run(
                f"INSERT INTO {table} ({_CHILD_PATH_COLUMN.get(table, 'path')}, {names}) SELECT path, {names} FROM ("
                f"SELECT path, {unnested}, generate_subscripts({keys[0]}, 1) AS ordinal FROM staged_children) "
                "ORDER BY path, ordinal"
            )
        # New terms are numbered after the known ones in sorted order, as `rows` numbers a batch's.
        database.run(
            f"""
            INSERT INTO terms (term_id, term)
            SELECT (SELECT coalesce(max(term_id), 0) FROM terms) + row_number() OVER (ORDER BY term), term
            FROM (SELECT DISTINCT unnest({TERMS_KEY}) AS term FROM staged_children) arriving
            WHERE NOT EXISTS (SELECT 1 FROM terms known WHERE known.term = arriving.term)
            """
        )
        # Clustered by term, row-group zonemaps prune the scans of a query's terms.
        database.run(
            f"""
            INSERT INTO postings (term_id, doc_id, tf, dl)
            SELECT t.term_id, f.doc_id, s.tf, f.doc_len
            FROM (SELECT path, unnest({TERMS_KEY}) AS term, unnest({FREQUENCIES_KEY}) AS tf FROM staged_children) s
            JOIN terms t USING (term)
            JOIN files f USING (path)
            ORDER BY t.term_id, f.doc_id
            """
        )
        return duplicates

    def _duplicates(self, projected: Sequence[StagedFile]) -> list[SkippedFile]:
        """The second active copies of an article among `projected` (in path order), listed in the
        duplicates table; the first copy this rebuild met holds the article."""
        held = self._held
        copies: list[tuple[StagedFile, str]] = []
        for staged in projected:
            if staged.active_hash is None:
                continue
            holder = held.setdefault(staged.active_hash, staged.path)
            if holder != staged.path:
                copies.append((staged, holder))
        if copies:
            self._database.insert_columns(
                DUPLICATES_TABLE,
                {
                    "path": [staged.path for staged, _ in copies],
                    "content_hash": [staged.active_hash for staged, _ in copies],
                    "blob_sha": [staged.blob_sha for staged, _ in copies],
                },
            )
        return [SkippedFile(staged.path, duplicate_reason(holder)) for staged, holder in copies]


def _column_types(database: Database, tables: Sequence[str]) -> dict[str, dict[str, str]]:
    """Each table's column names and DuckDB types, in column order."""
    types: dict[str, dict[str, str]] = {table: {} for table in tables}
    for table, column, kind in database.rows(
        """SELECT table_name, column_name, data_type FROM duckdb_columns()
        WHERE database_name = $catalog AND schema_name = 'main' AND table_name IN (SELECT unnest($tables))
        ORDER BY table_name, column_index""",
        {"catalog": database.main_catalog, "tables": list(tables)},
    ):
        types[str(table)][str(column)] = str(kind)
    return types


def _struct_literal(columns: dict[str, str]) -> str:
    """`{'name': 'TYPE', ...}`, the `columns` argument of DuckDB's readers."""
    return "{" + ", ".join(f"{_sql_string(name)}: {_sql_string(kind)}" for name, kind in columns.items()) + "}"


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
