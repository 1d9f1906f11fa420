"""Retrieval in one statement: owned BM25 over the postings and brute-force cosine over the chunk
vectors, then recency and salience, fused by weighted RRF behind a relevance floor.

Only memories that match the query lexically, or whose best chunk clears the embedder's similarity
floor, are candidates; recency and salience reorder them and never add one. An arm whose signal
ties across every candidate is dropped for that query, so a batch written in one instant cannot
promote memories in path order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, NamedTuple

from memhtml.domain.ranking import (
    ARM_LIMIT,
    BM25_B,
    BM25_K1,
    RRF_K,
    VECTOR_RANK_TOLERANCE,
    WEIGHT_FTS,
    WEIGHT_RECENCY,
    WEIGHT_SALIENCE,
    WEIGHT_VECTOR,
)
from memhtml.domain.tokens import QueryTerms
from memhtml.index.database import Database, membership
from memhtml.index.scope import Scope, scope_filter

# In any-of mode (no memory has every query term) a candidate needs at least this share of the best
# candidate's BM25: a memory that shares only a stop word with the query is not relevant.
LEXICAL_FLOOR_RATIO: Final[float] = 0.1
# Recency votes only among the lexical matches with at least this share of the best BM25: it orders
# versions of the same fact (near-equal BM25), never promotes a newer, weaker match. Measured on
# `eval locomo` (5,882 turns, 1,535 questions, corrected evidence): recency over every match cost hit@1
# 0.290 -> 0.155 and recall@10 0.541 -> 0.518; within this band it costs nothing (0.547), and the
# supersession benchmark's plain chains, whose versions differ only in recency, still get its vote.
RECENCY_BAND_RATIO: Final[float] = 0.8
# Arms in the order they are reported.
ARMS: Final[tuple[str, ...]] = ("fts", "vector", "recency", "salience")


class FusedHit(NamedTuple):
    path: str
    score: float
    arm_ranks: dict[str, int]


class QueryVector(NamedTuple):
    """The query embedded in the index's vector space, and the cosine that makes a memory relevant
    without a lexical match."""

    values: list[float]
    similarity_floor: float


def fused_search(
    database: Database, query: QueryTerms, scope: Scope, pool: int, vector: QueryVector | None = None
) -> tuple[list[FusedHit], list[str]]:
    """The fused candidate list (best first, at most `pool`) and the arms that voted.

    Relevant memories are the lexical matches plus, with a query vector, the memories whose best chunk
    clears the similarity floor; the vector arm ranks every relevant memory that has a vector.
    """
    if not query.terms:
        return [], []
    where, parameters = scope_filter(scope)
    phrase_clauses = []
    for number, phrase in enumerate(query.phrases):
        phrase_clauses.append(f"contains(f.token_text, $phrase_{number})")
        parameters[f"phrase_{number}"] = f" {phrase.normalized_text} "
    phrase_filter = "".join(f" AND {clause}" for clause in phrase_clauses)
    term_filter, term_parameters = membership("term", "terms", query.terms)
    parameters.update(term_parameters)
    parameters.update({"term_count": len(query.terms), "arm_limit": ARM_LIMIT, "pool": pool})
    if vector is not None:
        parameters.update({"query_vector": vector.values, "similarity_floor": vector.similarity_floor})
    similar, relevant, vector_arm, vector_vote = _vector_parts(vector is not None, where, phrase_filter)
    sql = f"""
    WITH query_terms AS (SELECT term_id FROM terms WHERE {term_filter}),
    stats AS (SELECT greatest(count(*), 1)::DOUBLE AS n, greatest(avg(doc_len), 1)::DOUBLE AS avgdl FROM files),
    df AS (
        SELECT p.term_id, count(*)::DOUBLE AS df FROM postings p
        WHERE p.term_id IN (SELECT term_id FROM query_terms) GROUP BY p.term_id
    ),
    scored AS (
        SELECT p.doc_id,
               sum(ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5))
                   * p.tf * ({BM25_K1} + 1) / (p.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * p.dl / s.avgdl))) AS bm25,
               count(*) AS matched
        FROM postings p JOIN df ON df.term_id = p.term_id CROSS JOIN stats s
        GROUP BY p.doc_id
    ),
    candidates AS (
        SELECT f.path, f.memory_type, f.updated_at, sc.bm25, sc.matched,
               coalesce(f.event_at, f.updated_at) AS recency_key
        FROM scored sc JOIN files f ON f.doc_id = sc.doc_id
        WHERE {where}{phrase_filter}
    ),
    -- All query terms where some memory has them all, else any of them (the original's rule) ...
    needed AS (SELECT CASE WHEN max(matched) >= $term_count THEN $term_count ELSE 1 END AS k FROM candidates),
    -- ... and in any-of mode a memory must carry a real share of the best lexical evidence.
    lexical AS (
        SELECT c.path, c.memory_type, c.updated_at, c.recency_key, c.bm25 FROM candidates c, needed
        WHERE c.matched >= needed.k
          AND (needed.k = $term_count OR c.bm25 >= {LEXICAL_FLOOR_RATIO} * (SELECT max(bm25) FROM candidates))
    ),{similar}
    -- Materialized, as is `similarity`: each is read by several arms, and inlined they would join the
    -- files rows again for each reader (a noticeable share of a search).
    matches AS MATERIALIZED ({relevant}),
    -- Recency and salience reorder the lexical matches when there are any: memories that are only
    -- similar must not sit between a fact and its wrong twin and let a reorder arm pull them apart.
    reordered AS (SELECT * FROM matches WHERE bm25 IS NOT NULL OR NOT EXISTS (SELECT 1 FROM lexical)),
    salience_scores AS (
        SELECT m.path,
               exp(-0.01 * greatest(epoch(now()) - epoch(coalesce(try_cast(a.last_accessed_at AS TIMESTAMPTZ),
                                                                  try_cast(m.updated_at AS TIMESTAMPTZ))), 0) / 3600)
               + ln(1 + coalesce(a.access_count, 0)) + greatest(coalesce(a.outcome_score, 0), 0) AS salience
        FROM reordered m LEFT JOIN state.access a ON a.path = m.path
        WHERE m.memory_type <> 'task' AND m.path NOT LIKE 'resources/people/%'
    ),
    fts AS (
        SELECT path, rank() OVER (ORDER BY bm25 DESC) AS r FROM lexical ORDER BY bm25 DESC, path LIMIT $arm_limit
    ),{vector_arm}
    recent_band AS (
        SELECT * FROM reordered
        WHERE bm25 IS NULL OR bm25 >= {RECENCY_BAND_RATIO} * (SELECT max(bm25) FROM reordered)
    ),
    recency AS (
        SELECT path, rank() OVER (ORDER BY recency_key DESC) AS r FROM recent_band
        WHERE (SELECT count(DISTINCT recency_key) FROM recent_band) > 1
        ORDER BY recency_key DESC, path LIMIT $arm_limit
    ),
    salience AS (
        SELECT path, rank() OVER (ORDER BY salience DESC) AS r FROM salience_scores
        WHERE (SELECT count(DISTINCT round(salience, 9)) FROM salience_scores) > 1
        ORDER BY salience DESC, path LIMIT $arm_limit
    ),
    votes AS (
        SELECT path, 'fts' AS arm, r, {WEIGHT_FTS} AS w FROM fts{vector_vote}
        UNION ALL SELECT path, 'recency', r, {WEIGHT_RECENCY} FROM recency
        UNION ALL SELECT path, 'salience', r, {WEIGHT_SALIENCE} FROM salience
    )
    -- Votes add up in whatever order the plan delivers them, so equal sums can differ in their last bits:
    -- rounded to 12 places first, they tie and the path breaks the tie.
    SELECT path, sum(w / ({RRF_K} + r)) AS score, list(arm ORDER BY arm), list(r ORDER BY arm)
    FROM votes GROUP BY path ORDER BY round(score, 12) DESC, path LIMIT $pool
    """
    rows = database.rows(sql, parameters)
    hits = [FusedHit(row[0], float(row[1]), dict(zip(row[2], row[3], strict=True))) for row in rows]
    voted = {arm for hit in hits for arm in hit.arm_ranks}
    return hits, [arm for arm in ARMS if arm in voted]


def _vector_parts(with_vector: bool, where: str, phrase_filter: str) -> tuple[str, str, str, str]:
    """The SQL the vector arm adds: similarity per memory (its best chunk), the relevant set, the arm
    and its vote; without a query vector the relevant set is the lexical matches alone."""
    if not with_vector:
        return "", "SELECT * FROM lexical", "", ""
    similar = f"""
    -- Vectors are unit length (a text with no known token is all zeros), so the inner product is the
    -- cosine, cheaper to compute and never NaN. A memory counts once, by its best chunk.
    text_similarity AS (
        SELECT content_hash, max(list_inner_product(vector, $query_vector::FLOAT[])) AS cosine
        FROM chunk_vectors GROUP BY content_hash
    ),
    similarity AS MATERIALIZED (
        SELECT f.path, f.memory_type, f.updated_at, coalesce(f.event_at, f.updated_at) AS recency_key, t.cosine
        FROM text_similarity t JOIN files f ON f.content_hash = t.content_hash
        WHERE {where}{phrase_filter}
    ),
    similar_enough AS (
        SELECT * FROM similarity WHERE cosine >= $similarity_floor ORDER BY cosine DESC, path LIMIT $arm_limit
    ),"""
    relevant = """
        SELECT l.path, l.memory_type, l.updated_at, l.recency_key, l.bm25 FROM lexical l
        UNION ALL
        SELECT s.path, s.memory_type, s.updated_at, s.recency_key, NULL FROM similar_enough s
        WHERE s.path NOT IN (SELECT path FROM lexical)
    """
    vector_arm = f"""
    relevant_similarity AS (SELECT s.path, s.cosine FROM similarity s JOIN matches m ON m.path = s.path),
    -- A memory is outranked only by those clearly more similar (at least the tolerance above it, counted
    -- by a range window): cosines within the tolerance are the same evidence (a fact and its negated or
    -- qualified twin differ by less), so they share a rank.
    -- Tied ranks vote equally and reorder nothing, and a memory found by meaning alone needs this vote.
    vector_ranks AS (
        SELECT s.path,
               1 + coalesce(count(*) OVER (ORDER BY s.cosine RANGE BETWEEN {VECTOR_RANK_TOLERANCE} FOLLOWING
                                                   AND UNBOUNDED FOLLOWING), 0) AS r
        FROM relevant_similarity s
        ORDER BY s.cosine DESC, s.path LIMIT $arm_limit
    ),"""
    vector_vote = f"\n        UNION ALL SELECT path, 'vector', r, {WEIGHT_VECTOR} FROM vector_ranks"
    return similar, relevant, vector_arm, vector_vote


def archived_matches(
    database: Database, query: QueryTerms, scope: Scope, vector: QueryVector | None = None
) -> list[str]:
    """Archived memories that would match (a hint when archived memories are left out)."""
    archived_scope = Scope(
        memory_types=scope.memory_types,
        workspace=scope.workspace,
        tags=scope.tags,
        entity=scope.entity,
        facets=scope.facets,
        only_archived=True,
    )
    hits, _ = fused_search(database, query, archived_scope, pool=ARM_LIMIT, vector=vector)
    return [hit.path for hit in hits]


def hydrate(database: Database, paths: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The display fields of `paths`: their rows, entities and successors."""
    if not paths:
        return {}
    # Three narrow statements, each table probed by the paths themselves (a short list of parameters
    # lets DuckDB use the path index and prune its scans). One statement joining the three cost more to
    # plan than the three cost to run.
    among_paths, parameters = membership("path", "paths", paths)
    among_successors, _ = membership("dst_path", "paths", paths)
    rows = database.rows(
        "SELECT path, title, gist, memory_type, confidence, updated_at, body_text, disclosure_text, superseded_by, "
        f"archived FROM files WHERE {among_paths}",
        parameters,
    )
    if not rows:
        return {}
    labels: dict[str, list[str]] = {}
    names: dict[str, list[str]] = {}
    for path, entity_type, entity_name in database.rows(
        f"SELECT path, entity_type, entity_name FROM file_entities WHERE {among_paths}", parameters
    ):
        labels.setdefault(path, []).append(f"{entity_type}:{entity_name}")
        names.setdefault(path, []).append(entity_name)
    # Of several successors, the one updated last, as `resolve` follows it; the greatest path breaks a tie.
    successors = dict(
        database.rows(
            "SELECT e.dst_path, arg_max(e.src_path, (f.updated_at, e.src_path)) FROM edges e "
            f"JOIN files f ON f.path = e.src_path WHERE e.rel = 'supersedes' AND e.{among_successors} "
            "GROUP BY e.dst_path",
            parameters,
        )
    )
    details: dict[str, dict[str, Any]] = {}
    for row in rows:
        path = row[0]
        details[path] = {
            "path": path,
            "title": row[1],
            "gist": row[2],
            "memory_type": row[3],
            "confidence": row[4],
            "updated_at": row[5],
            "body_text": row[6],
            "disclosure_text": row[7],
            # As `resolve` follows: a supersedes link first; an archived memory's own meta when none points at it.
            "superseded_by": successors.get(path) or (row[8] if row[9] else None),
            # Sorted by code point, which for UTF-8 is DuckDB's byte order: the order the labels had
            # when the statement sorted them.
            "entities": sorted(set(labels.get(path, ()))),
            "entity_names": sorted(set(names.get(path, ()))),
        }
    return details
