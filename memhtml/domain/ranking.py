"""Ranking math for retrieval: BM25 weights, weighted reciprocal rank fusion, the tied-signal rule and MMR.

The index fuses arms in SQL; these are the reference implementations its results are tested
against, with the original's constants. Pure Python, no vectors library.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Final

# BM25 saturation and length normalization, as SQLite FTS5's bm25() uses them in the original.
BM25_K1: Final = 1.2
BM25_B: Final = 0.75
# Reciprocal rank fusion damping: an arm's rank r contributes weight / (RRF_K + r).
RRF_K: Final = 60
# How much each arm's vote counts in the fusion; recency and salience only reorder relevant hits.
WEIGHT_FTS: Final = 1.0
# The shipped static model ranks evidence below BM25: on `eval locomo` (1,535 questions, corrected
# evidence, recency out) recall@10 was 0.541 with the vector arm at 1.0, 0.557 at 0.5, 0.563 at 0.25,
# 0.546 without it. Half a vote keeps what it finds by meaning alone and lets words decide the rest.
WEIGHT_VECTOR: Final = 0.5
WEIGHT_RECENCY: Final = 0.5
WEIGHT_SALIENCE: Final = 0.4
ARM_WEIGHTS: Final[Mapping[str, float]] = MappingProxyType(
    {"fts": WEIGHT_FTS, "vector": WEIGHT_VECTOR, "recency": WEIGHT_RECENCY, "salience": WEIGHT_SALIENCE}
)
# Cosines closer than this are one rank in the vector arm: every embedder rates a fact and its
# negated, renumbered or qualified twin within a few hundredths, so such a gap is not evidence.
VECTOR_RANK_TOLERANCE: Final = 0.02
# Candidates each arm keeps before fusion.
ARM_LIMIT: Final = 40
# MMR trades relevance (lambda) against similarity to what is already picked (1 - lambda).
MMR_LAMBDA: Final = 0.5
# search fuses this many times its limit so MMR has alternatives to promote.
MMR_POOL_FACTOR: Final = 3

Vector = Sequence[float]


def bm25_idf(n_docs: int, df: int) -> float:
    """Inverse document frequency ln(1 + (N - df + 0.5) / (df + 0.5)).

    Always positive and falling as a term gets more common, so a term in most documents still
    counts a little instead of going to zero or below as FTS5's unshifted form does.
    """
    if n_docs < 0 or not 0 <= df <= n_docs:
        raise ValueError(f"document frequency {df} is not within 0..{n_docs}")
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def bm25_term_score(idf: float, tf: int, doc_length: int, average_length: float) -> float:
    """One term's BM25 contribution to one document.

    idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_length / average_length)), k1 and b as above.
    """
    length_ratio = doc_length / average_length if average_length > 0 else 1.0
    return idf * tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * (1.0 - BM25_B + BM25_B * length_ratio))


def rrf_fuse(
    arms: Mapping[str, Sequence[str]],
    weights: Mapping[str, float] = ARM_WEIGHTS,
    limit: int | None = None,
) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion of ranked path lists: (path, score), best first.

    A path at rank r (counted from 1) of arm a scores weights[a] / (RRF_K + r); scores add up over
    arms. Equal scores order by path ascending, so the result is total and deterministic. A path
    listed twice by one arm counts once, at its better rank. Every arm needs a weight.
    """
    missing = sorted(set(arms) - set(weights))
    if missing:
        raise ValueError(f"no weight for arm(s): {', '.join(missing)}")
    contributions: dict[str, list[float]] = {}
    for arm, paths in arms.items():
        seen: set[str] = set()
        for rank, path in enumerate(paths, start=1):
            if path in seen:
                continue
            seen.add(path)
            contributions.setdefault(path, []).append(weights[arm] / (RRF_K + rank))
    # fsum is exactly rounded, so two paths with the same contributions in a different arm order
    # get bit-identical scores and the path tie-break applies, as it does to the SQL SUM.
    fused = [(path, math.fsum(parts)) for path, parts in contributions.items()]
    fused.sort(key=lambda scored: (-scored[1], scored[0]))
    return fused if limit is None else fused[: max(limit, 0)]


def arm_discriminates(values: Iterable[object]) -> bool:
    """Whether an arm's signal tells a query's candidates apart: some two values differ.

    A tied signal must not vote. When every candidate shares one write time or one salience, the
    arm's ranks would only replay the path tie-break and push alphabetically early files up, so an
    arm for which this is False must contribute nothing to that query's fusion.
    """
    iterator = iter(values)
    first = next(iterator, None)
    return any(value != first for value in iterator)


def _norm(vector: Vector) -> float:
    return math.sqrt(math.fsum(component * component for component in vector))


def cosine(left: Vector, right: Vector, left_norm: float | None = None, right_norm: float | None = None) -> float:
    """Cosine similarity of two equally long vectors; 0.0 when either has no length."""
    if len(left) != len(right):
        raise ValueError(f"vectors differ in dimension: {len(left)} and {len(right)}")
    left_norm = _norm(left) if left_norm is None else left_norm
    right_norm = _norm(right) if right_norm is None else right_norm
    if left_norm == 0.0 or right_norm == 0.0:
        return 0.0
    return math.fsum(map(operator.mul, left, right)) / (left_norm * right_norm)


def mmr(
    candidates: Sequence[tuple[str, Vector | None]],
    limit: int,
    lambda_: float = MMR_LAMBDA,
) -> list[str]:
    """Maximal marginal relevance over fused candidates given best first: up to `limit` paths.

    Relevance is 1 / (position + 1) in the fused order, not the fusion score. Each step picks the
    candidate with the largest lambda * relevance - (1 - lambda) * max cosine to the ones already
    picked; a candidate without a vector, or before any picked candidate has one, has penalty 0.
    Ties go to the earlier position. lambda >= 1 returns the fused order truncated.
    """
    if math.isnan(lambda_) or lambda_ < 0:
        raise ValueError(f"MMR lambda must be at least 0, got {lambda_}")
    if limit <= 0:
        return []
    if lambda_ >= 1:
        return [path for path, _ in candidates[:limit]]
    norms = [None if vector is None else _norm(vector) for _, vector in candidates]
    # The highest similarity of each candidate to any picked one; None until a picked one has a vector.
    closest: list[float | None] = [None] * len(candidates)
    remaining = list(range(len(candidates)))
    picked: list[str] = []
    while remaining and len(picked) < limit:

        def marginal(position: int) -> tuple[float, int]:
            penalty = closest[position] or 0.0
            return lambda_ / (position + 1) - (1 - lambda_) * penalty, -position

        best = max(remaining, key=marginal)
        remaining.remove(best)
        picked.append(candidates[best][0])
        best_vector, best_norm = candidates[best][1], norms[best]
        if best_vector is None:
            continue
        for position in remaining:
            vector = candidates[position][1]
            if vector is None:
                continue
            similarity = cosine(vector, best_vector, norms[position], best_norm)
            previous = closest[position]
            closest[position] = similarity if previous is None else max(previous, similarity)
    return picked
