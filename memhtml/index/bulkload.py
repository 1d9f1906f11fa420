"""Loading a rebuild's staged projections (`staging`) into the index's emptied tables: DuckDB's own JSON
reader and set-based SQL write the rows `rows.store_projections` would, in the same order, and the
postings go in as NumPy arrays, numbered here against one vocabulary for the whole rebuild, so the
parent converts no value row by row.

A slice's staged lines are written into one file of each kind: the reader pays for every file it opens
(a slice's rows read from one file holding all its chunks' lines cost about half what they cost from one
file per chunk, and writing that file costs next to nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from memhtml.index.database import Database, membership
from memhtml.index.projection import SkippedFile
from memhtml.index.rows import DUPLICATES_TABLE, FILE_COLUMNS, duplicate_reason, next_doc_ids
from memhtml.index.staging import (
    CHILD_COLUMNS,
    POSTING_TYPECODE,
    StagedChunk,
    StagedFile,
    child_key,
    write_staging_file,
)

if TYPE_CHECKING:
    import numpy

# The JSON reader's `maximum_object_size`, at least DuckDB's default (16 MiB): the reader sizes its
# buffers by it and refuses a line that outgrows them (a 42 MB line failed under the default and loaded
# under a 56 MB limit), so only a memory file of several megabytes, which the index still takes, needs
# more. A larger limit costs every load: a 10k rebuild's `files` rows took nearly twice as long under a
# 1 GiB limit as under the default.
_OBJECT_BYTES_FLOOR: Final[int] = 16 << 20
# UTF-8 spends at most this many bytes on a character.
_UTF8_MOST_BYTES: Final[int] = 4
# The child tables name their path column `path`, all but one.
_CHILD_PATH_COLUMN: Final = {"edges": "src_path"}


class StagedLoader:
    """Loads staged slices into the index's emptied tables inside the caller's transaction.

    Slices must arrive in path order: of two active copies of one article the one at the smaller path is
    held (`rows.held_first` for committed files) and the other listed as a duplicate. Doc ids follow the
    held files' path order, and a slice's new terms are numbered in sorted order after the known ones.
    """

    def __init__(self, database: Database, directory: str) -> None:
        """`directory`: where a slice's staging files are written, each removed once loaded."""
        self._database = database
        self._directory = directory
        self._held: dict[str, str] = {}  # active hash -> the path holding it
        self._term_ids: dict[str, int] = dict(database.rows("SELECT term, term_id FROM terms"))
        self._next_term_id = max(self._term_ids.values(), default=0) + 1
        types = _column_types(database, ["files", *CHILD_COLUMNS])
        # The columns the projection fills, as the row-wise path writes them; their types from the table.
        self._file_columns = [name for name in FILE_COLUMNS if name != "doc_id"]
        self._rows_spec = _struct_literal({name: types["files"][name] for name in self._file_columns})
        children = {"path": types["files"]["path"]}
        for table, columns in CHILD_COLUMNS.items():
            for column in columns:
                children[child_key(table, column)] = types[table][column] + "[]"
        self._children_spec = _struct_literal(children)

    def load(self, chunks: Sequence[StagedChunk]) -> list[SkippedFile]:
        """Store one slice's staged chunks; returns the copies listed as duplicates, as skipped files."""
        if not any(chunk.projected for chunk in chunks):
            return []
        written: list[str] = []
        try:
            written.append(write_staging_file(self._directory, [chunk.rows_lines for chunk in chunks]))
            written.append(write_staging_file(self._directory, [chunk.children_lines for chunk in chunks]))
            return self._load(chunks, rows_file=written[0], children_file=written[1])
        finally:
            for name in written:
                Path(name).unlink(missing_ok=True)

    def close(self) -> None:
        """Drop the staging table (temporary: it would go with the connection anyway)."""
        self._database.run("DROP TABLE IF EXISTS staged_children")

    def _load(self, chunks: Sequence[StagedChunk], *, rows_file: str, children_file: str) -> list[SkippedFile]:
        projected = [file for chunk in chunks for file in chunk.projected]
        duplicates = self._duplicates(projected)
        listed_paths = {copy.path for copy in duplicates}
        held = [file.path for file in projected if file.path not in listed_paths]
        if not held:
            return duplicates
        database = self._database
        # Doc ids in path order, as the row-wise path numbers a batch; joining the rows to their ids by
        # path also leaves the listed duplicates out, and no sort is needed (the staged rows are in path
        # order already).
        doc_ids = next_doc_ids(database, len(held))
        columns = ", ".join(self._file_columns)
        object_bytes = object_size_limit(chunks)
        database.run(
            f"""
            INSERT INTO files (doc_id, {columns})
            SELECT ids.doc_id, {", ".join(f"staged.{name}" for name in self._file_columns)}
            FROM read_json($files, format = 'newline_delimited', columns = {self._rows_spec},
                           maximum_object_size = {object_bytes}) staged
            JOIN (SELECT unnest($paths) AS path, unnest($doc_ids) AS doc_id) ids ON ids.path = staged.path
            """,
            {"doc_ids": doc_ids, "paths": held, "files": rows_file},
        )
        listed, parameters = membership("path", "listed", sorted(listed_paths))
        database.run(
            f"""
            CREATE OR REPLACE TEMP TABLE staged_children AS
            SELECT * FROM read_json($files, format = 'newline_delimited', columns = {self._children_spec},
                                    maximum_object_size = {object_bytes})
            WHERE NOT ({listed})
            """,
            {"files": children_file, **parameters},
        )
        for table, child_columns in CHILD_COLUMNS.items():
            keys = [child_key(table, column) for column in child_columns]
            unnested = ", ".join(f"unnest({key}) AS {column}" for key, column in zip(keys, child_columns, strict=True))
            names = ", ".join(child_columns)
            # Unnesting keeps each file's rows in its order, and the files come in path order.
            database.run(
                f"INSERT INTO {table} ({_CHILD_PATH_COLUMN.get(table, 'path')}, {names}) "
                f"SELECT path, {unnested} FROM staged_children"
            )
        self._store_postings(chunks, listed_paths, doc_ids)
        return duplicates

    def _store_postings(self, chunks: Sequence[StagedChunk], listed: set[str], doc_ids: list[int]) -> None:
        """Number the slice's new terms, then insert its postings clustered by term (row-group zonemaps
        prune the scans of a query's terms), as NumPy columns."""
        import numpy

        held_ids = iter(doc_ids)  # in path order, one per held file, as the files rows got them
        batches: list[tuple[StagedChunk, numpy.ndarray[Any, Any], numpy.ndarray[Any, Any]]] = []
        arriving: set[str] = set()
        for chunk in chunks:
            if not chunk.projected:
                continue
            # Per file of the chunk: its doc id, or -1 for a listed duplicate, whose postings are dropped.
            ids = numpy.array(
                [-1 if staged.path in listed else next(held_ids) for staged in chunk.projected], dtype=numpy.int64
            )
            triples = numpy.frombuffer(chunk.postings, dtype=_posting_dtype()).reshape(-1, 3)
            if listed:
                triples = triples[ids[triples[:, 1]] >= 0]
                arriving.update(chunk.vocabulary[number] for number in numpy.unique(triples[:, 0]))
            else:
                arriving.update(chunk.vocabulary)
            batches.append((chunk, ids, triples))
        fresh = sorted(arriving.difference(self._term_ids))
        if fresh:
            numbers = list(range(self._next_term_id, self._next_term_id + len(fresh)))
            self._database.insert_columns("terms", {"term_id": numbers, "term": fresh})
            self._term_ids.update(zip(fresh, numbers, strict=True))
            self._next_term_id += len(fresh)
        if not batches:
            return
        term_ids, file_ids, frequencies, lengths = [], [], [], []
        for chunk, ids, triples in batches:
            vocabulary_ids = numpy.array([self._term_ids.get(term, -1) for term in chunk.vocabulary], dtype=numpy.int64)
            doc_lengths = numpy.array([staged.doc_len for staged in chunk.projected], dtype=numpy.int64)
            term_ids.append(vocabulary_ids[triples[:, 0]])
            file_ids.append(ids[triples[:, 1]])
            frequencies.append(triples[:, 2].astype(numpy.int64))
            lengths.append(doc_lengths[triples[:, 1]])
        columns = {
            "term_id": numpy.concatenate(term_ids),
            "doc_id": numpy.concatenate(file_ids),
            "tf": numpy.concatenate(frequencies),
            "dl": numpy.concatenate(lengths),
        }
        # Sorted here (DuckDB's general sort cost far more for these four integers).
        order = numpy.lexsort((columns["doc_id"], columns["term_id"]))
        self._database.insert_arrays("postings", {name: values[order] for name, values in columns.items()})

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


def object_size_limit(chunks: Sequence[StagedChunk]) -> int:
    """The JSON reader's `maximum_object_size` for the chunks' staging files: room for their longest line
    however many bytes its characters take, and never below `_OBJECT_BYTES_FLOOR`."""
    longest = max((chunk.longest_line for chunk in chunks), default=0)
    return max(_OBJECT_BYTES_FLOOR, _UTF8_MOST_BYTES * longest + 1)


def _posting_dtype() -> numpy.dtype[Any]:
    """The NumPy type of `POSTING_TYPECODE` (a C int), whatever its width here."""
    import numpy

    return numpy.dtype(POSTING_TYPECODE)


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
