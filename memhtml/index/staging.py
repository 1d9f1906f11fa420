"""The rebuild's staged projections: a chunk of files projected and encoded as JSON lines by the process
that made them, and the staging files a slice's lines are written into for DuckDB to read.

A rebuild projects every file of HEAD into emptied tables. Handing each projection to the parent as a
Python object and turning its rows into DuckDB values there cost the parent a large share of the
rebuild: instead the projecting process encodes its chunk as two runs of JSON lines, one of `files`
rows and one of each file's child rows as arrays, which travel back as bytes (one copy, no object per
value) for `bulkload` to write into one staging file of each kind a slice and have DuckDB's own reader
load, and hands back its postings as packed integers over the chunk's own vocabulary, which the parent
numbers.
This module imports no DuckDB: the workers run it.
"""

from __future__ import annotations

import json
import os
import tempfile
from array import array
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Final, NamedTuple

from memhtml.contracts.corpus import BlobSource
from memhtml.index.projection import FileProjection, SkippedFile

# Each child table's columns after its path, as the projection lists them; a file's values of each column
# travel as one array under `child_key(table, column)` (a table's arrays have one length per file).
CHILD_COLUMNS: Final[Mapping[str, tuple[str, ...]]] = {
    "file_tags": ("tag",),
    "file_entities": ("entity_type", "entity_name"),
    "file_facets": ("name", "value", "numeric_value"),
    "file_citations": ("text", "href"),
    "edges": ("rel", "dst_path", "edge_class"),
}
# A chunk's postings: (term, file, frequency) triples of these, the term an index into its vocabulary
# and the file one into its projected files.
POSTING_TYPECODE: Final[str] = "i"
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False, separators=(",", ":")).encode


class StagedFile(NamedTuple):
    """One projected file as the loader needs to know it before reading the staging files."""

    path: str
    active_hash: str | None
    blob_sha: str
    doc_len: int


class StagedChunk(NamedTuple):
    """What one process made of a chunk of files: its `files` rows and its children records as UTF-8 JSON
    lines, each ending in a line feed (empty when it projected none), the projected files in path order,
    the files the index leaves out, the projected files' postings (the terms they use, in order of first
    use, and their (term, file, frequency) triples packed as `array(POSTING_TYPECODE)` bytes), and the
    length in characters of the longest line it staged."""

    rows_lines: bytes
    children_lines: bytes
    projected: list[StagedFile]
    skipped: list[SkippedFile]
    vocabulary: list[str]
    postings: bytes
    longest_line: int


def child_key(table: str, column: str) -> str:
    return f"{table}__{column}"


# Each child table's keys in a children record, in column order.
_CHILD_KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    table: tuple(child_key(table, column) for column in columns) for table, columns in CHILD_COLUMNS.items()
}


def children_record(projection: FileProjection) -> dict[str, Any]:
    """The JSON object of one projection's child rows, each column an array. A table with no rows for
    the file is left out: the loader reads a missing array as NULL, which unnests to no rows, as an
    empty one does (most memories have no facets, citations or links: less to build and encode for
    every file, and less for DuckDB to read)."""
    record: dict[str, Any] = {"path": projection.path}
    if projection.tags:
        record[_CHILD_KEYS["file_tags"][0]] = projection.tags
    child_rows: tuple[tuple[str, Sequence[tuple[Any, ...]]], ...] = (
        ("file_entities", projection.entities),
        ("file_facets", projection.facets),
        ("file_citations", projection.citations),
        ("edges", projection.edges),
    )
    for table, rows in child_rows:
        if rows:
            for position, key in enumerate(_CHILD_KEYS[table]):
                record[key] = [row[position] for row in rows]
    return record


def stage_items(items: Sequence[tuple[str, str, bytes | None]], now: str) -> StagedChunk:
    """Project `(path, blob sha, bytes)` items, in order, into staged lines and packed postings (a
    worker's task: module-level, so it pickles)."""
    from memhtml.index.parallel import project_items

    rows: list[str] = []
    children: list[str] = []
    projected: list[StagedFile] = []
    skipped: list[SkippedFile] = []
    vocabulary: dict[str, int] = {}
    # The triples flat, packed once at the end: one array extend per term cost far more.
    postings: list[int] = []
    longest_line = 0
    for result in project_items(items, now):
        if isinstance(result, SkippedFile):
            skipped.append(result)
            continue
        row = result.row
        file_number = len(projected)
        for term, frequency in result.terms.items():
            number = vocabulary.get(term)
            if number is None:
                number = len(vocabulary)
                vocabulary[term] = number
            postings.append(number)
            postings.append(file_number)
            postings.append(frequency)
        row_line = _encode(row)
        children_line = _encode(children_record(result))
        longest_line = max(longest_line, len(row_line), len(children_line))
        rows.append(row_line)
        children.append(children_line)
        projected.append(StagedFile(result.path, row["active_hash"], row["blob_sha"], row["doc_len"]))
    if not projected:
        return StagedChunk(b"", b"", projected, skipped, [], b"", 0)
    return StagedChunk(
        _lines(rows),
        _lines(children),
        projected,
        skipped,
        list(vocabulary),
        array(POSTING_TYPECODE, postings).tobytes(),
        longest_line,
    )


def stage_blobs(entries: Sequence[tuple[str, str]], now: str, source: BlobSource) -> StagedChunk:
    """`stage_items` of `(path, blob sha)` entries, their blobs read through `source` by this process."""
    contents = source.committed_blobs(entries)
    return stage_items([(path, sha, contents.get(sha)) for path, sha in entries], now)


def _lines(lines: Sequence[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


def write_staging_file(directory: str, runs: Sequence[bytes]) -> str:
    """A new file of `directory` holding `runs` of lines one after another (the chunks of a slice)."""
    handle, name = tempfile.mkstemp(suffix=".jsonl", dir=directory)
    with os.fdopen(handle, "wb") as staging:
        staging.writelines(runs)
    return name


@contextmanager
def staging_directory() -> Iterator[str]:
    """A private directory for one rebuild's staging files, removed with whatever is left in it."""
    with tempfile.TemporaryDirectory(prefix="memhtml-rebuild-") as directory:
        yield directory
