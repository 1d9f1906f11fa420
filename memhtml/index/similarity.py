"""Nearest neighbours by cosine for a set of new texts: against the active memories' vectors in the
index, and against each other in input order. Used by the near-duplicate assist of the write doors.

A handful of texts asks the index one brute-force statement each; a large batch loads the active
vectors once and compares in NumPy blocks, so memory stays bounded at 100k memories.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

from memhtml.index.database import Database

# Up to this many texts, one SQL statement per text beats fetching every active vector.
SQL_PER_TEXT_LIMIT: Final[int] = 16
BLOCK_ROWS: Final[int] = 1024


class Neighbour(NamedTuple):
    """A similar memory (`path`) or an earlier text of the same batch (`position`)."""

    similarity: float
    path: str | None = None
    position: int | None = None
    text: str = ""


def stored_neighbours(
    database: Database, vectors: Sequence[Sequence[float]], threshold: float, limit: int
) -> list[list[Neighbour]]:
    """For each vector, the active non-task, non-arc memories at or above `threshold`, best first."""
    if not vectors:
        return []
    if len(vectors) <= SQL_PER_TEXT_LIMIT:
        return [_stored_by_sql(database, list(map(float, vector)), threshold, limit) for vector in vectors]
    return _stored_by_matrix(database, vectors, threshold, limit)


def _stored_by_sql(database: Database, vector: list[float], threshold: float, limit: int) -> list[Neighbour]:
    rows = database.rows(
        """
        WITH scored AS (
            SELECT f.path, f.gist, list_cosine_similarity(v.vector, $vector::FLOAT[]) AS similarity
            FROM chunk_vectors v JOIN files f ON f.content_hash = v.content_hash
            WHERE NOT f.archived AND f.memory_type NOT IN ('task', 'arc')
        )
        -- NaN (a zero vector) sorts above every number: it is no similarity at all.
        SELECT path, any_value(gist), max(similarity) AS best FROM scored
        WHERE NOT isnan(similarity) AND similarity >= $threshold
        GROUP BY path ORDER BY best DESC, path LIMIT $limit
        """,
        {"vector": vector, "threshold": threshold, "limit": limit},
    )
    return [Neighbour(float(row[2]), path=str(row[0]), text=str(row[1])) for row in rows]


def _stored_by_matrix(
    database: Database, vectors: Sequence[Sequence[float]], threshold: float, limit: int
) -> list[list[Neighbour]]:
    import numpy

    rows = database.rows(
        """
        SELECT f.path, f.gist, v.vector FROM chunk_vectors v JOIN files f ON f.content_hash = v.content_hash
        WHERE NOT f.archived AND f.memory_type NOT IN ('task', 'arc') ORDER BY f.path, v.ordinal
        """
    )
    found: list[list[Neighbour]] = [[] for _ in vectors]
    if not rows:
        return found
    paths = [str(row[0]) for row in rows]
    gists = {str(row[0]): str(row[1]) for row in rows}
    stored = numpy.asarray([row[2] for row in rows], dtype=numpy.float32)
    queries = numpy.asarray(vectors, dtype=numpy.float32)
    for start in range(0, len(queries), BLOCK_ROWS):
        scores = queries[start : start + BLOCK_ROWS] @ stored.T
        for offset, row_scores in enumerate(scores):
            best: dict[str, float] = {}
            for column in numpy.flatnonzero(row_scores >= threshold):
                path = paths[column]
                best[path] = max(best.get(path, -1.0), float(row_scores[column]))
            ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:limit]
            found[start + offset] = [Neighbour(similarity, path=path, text=gists[path]) for path, similarity in ranked]
    return found


def earlier_neighbours(
    vectors: Sequence[Sequence[float]], texts: Sequence[str], threshold: float, limit: int
) -> list[list[Neighbour]]:
    """For each vector, the earlier vectors of the same sequence at or above `threshold`, best first."""
    if len(vectors) < 2:
        return [[] for _ in vectors]
    import numpy

    matrix = numpy.asarray(vectors, dtype=numpy.float32)
    found: list[list[Neighbour]] = [[] for _ in vectors]
    for start in range(0, len(matrix), BLOCK_ROWS):
        block = matrix[start : start + BLOCK_ROWS]
        scores = block @ matrix[: start + len(block)].T
        for offset, row_scores in enumerate(scores):
            position = start + offset
            earlier = row_scores[:position]
            hits = numpy.flatnonzero(earlier >= threshold)
            ranked = sorted(
                ((float(earlier[index]), int(index)) for index in hits), key=lambda item: (-item[0], item[1])
            )
            found[position] = [
                Neighbour(similarity, position=index, text=texts[index]) for similarity, index in ranked[:limit]
            ]
    return found
