"""Ranking math against hand-computed values: BM25, weighted RRF and its tie-break, the tied-signal rule, MMR."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.ranking import (
    ARM_LIMIT,
    ARM_WEIGHTS,
    BM25_B,
    BM25_K1,
    MMR_LAMBDA,
    MMR_POOL_FACTOR,
    RRF_K,
    WEIGHT_FTS,
    WEIGHT_RECENCY,
    WEIGHT_SALIENCE,
    WEIGHT_VECTOR,
    arm_discriminates,
    bm25_idf,
    bm25_term_score,
    cosine,
    mmr,
    rrf_fuse,
)


def test_the_constants_are_the_originals_but_the_vector_weight() -> None:
    # The vector arm votes at half weight (measured with `eval locomo`, see WEIGHT_VECTOR).
    assert (BM25_K1, BM25_B, RRF_K, ARM_LIMIT, MMR_LAMBDA, MMR_POOL_FACTOR) == (1.2, 0.75, 60, 40, 0.5, 3)
    assert dict(ARM_WEIGHTS) == {"fts": 1.0, "vector": 0.5, "recency": 0.5, "salience": 0.4}
    assert (WEIGHT_FTS, WEIGHT_VECTOR, WEIGHT_RECENCY, WEIGHT_SALIENCE) == (1.0, 0.5, 0.5, 0.4)


# --- BM25 ---------------------------------------------------------------------------------------


def test_bm25_idf_by_hand() -> None:
    assert bm25_idf(10, 1) == pytest.approx(math.log(1 + 9.5 / 1.5))
    assert bm25_idf(100, 100) == pytest.approx(math.log(1 + 0.5 / 100.5))
    assert bm25_idf(1, 0) == pytest.approx(math.log(4.0))


def test_bm25_idf_is_positive_and_falls_as_a_term_gets_common() -> None:
    weights = [bm25_idf(1000, df) for df in range(1001)]
    assert all(weight > 0 for weight in weights)
    assert weights == sorted(weights, reverse=True)


@pytest.mark.parametrize(("n_docs", "df"), [(10, 11), (10, -1), (-1, 0)])
def test_bm25_idf_refuses_impossible_counts(n_docs: int, df: int) -> None:
    with pytest.raises(ValueError, match="document frequency"):
        bm25_idf(n_docs, df)


def test_bm25_term_score_by_hand() -> None:
    # tf 2 in a document twice the average length: 1.5 * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 2)).
    assert bm25_term_score(1.5, 2, 200, 100.0) == pytest.approx(6.6 / 4.1)
    # At the average length the length factor is 1: idf * tf * 2.2 / (tf + 1.2).
    assert bm25_term_score(1.0, 1, 50, 50.0) == pytest.approx(1.0)


# --- RRF ------------------------------------------------------------------------------------------


def test_weighted_rrf_against_hand_computed_totals() -> None:
    fused = rrf_fuse(
        {"fts": ["a.html", "b.html", "c.html"], "recency": ["c.html", "x.html", "a.html"]},
        ARM_WEIGHTS,
    )
    expected = {
        "a.html": 1 / (60 + 1) + 0.5 / (60 + 3),
        "b.html": 1 / (60 + 2),
        "c.html": 1 / (60 + 3) + 0.5 / (60 + 1),
        "x.html": 0.5 / (60 + 2),
    }
    assert [path for path, _ in fused] == ["a.html", "c.html", "b.html", "x.html"]
    for path, score in fused:
        assert score == pytest.approx(expected[path], rel=1e-12)


def test_four_arms_with_the_default_weights() -> None:
    fused = dict(
        rrf_fuse(
            {
                "fts": ["m.html"],
                "vector": ["n.html", "m.html"],
                "recency": ["n.html"],
                "salience": ["m.html"],
            }
        )
    )
    assert fused["m.html"] == pytest.approx(1 / 61 + 0.5 / 62 + 0.4 / 61)
    assert fused["n.html"] == pytest.approx(0.5 / 61 + 0.5 / 61)


def test_an_exact_tie_breaks_by_path_ascending() -> None:
    fused = rrf_fuse(
        {"fts": ["zeta.html", "alpha.html"], "recency": ["alpha.html", "zeta.html"]}, {"fts": 1.0, "recency": 1.0}
    )
    assert fused[0][1] == fused[1][1]
    assert [path for path, _ in fused] == ["alpha.html", "zeta.html"]


def test_the_same_ranks_in_a_different_arm_order_give_bit_identical_scores() -> None:
    weights = {"one": 1.0, "two": 1.0, "three": 1.0}
    fused = rrf_fuse(
        {"one": ["c", "a", "b"], "two": ["a", "b", "c"], "three": ["b", "c", "a"]},
        weights,
    )
    assert len({score for _, score in fused}) == 1
    assert [path for path, _ in fused] == ["a", "b", "c"]


def test_rrf_limit_duplicates_and_missing_weights() -> None:
    assert [path for path, _ in rrf_fuse({"fts": ["a", "b", "c"]}, limit=2)] == ["a", "b"]
    assert rrf_fuse({"fts": ["a", "b"]}, limit=0) == []
    # A path an arm lists twice counts once, at its better rank.
    assert dict(rrf_fuse({"fts": ["a", "b", "a"]})) == pytest.approx({"a": 1 / 61, "b": 1 / 62})
    assert rrf_fuse({}) == []
    with pytest.raises(ValueError, match="no weight for arm"):
        rrf_fuse({"bm99": ["a"]})


@settings(max_examples=200)
@given(
    st.dictionaries(
        st.sampled_from(sorted(ARM_WEIGHTS)),
        st.lists(st.sampled_from([f"p{i}.html" for i in range(12)]), max_size=12, unique=True),
    )
)
def test_rrf_is_ordered_by_score_then_path_and_scores_are_the_sum_of_contributions(
    arms: dict[str, list[str]],
) -> None:
    fused = rrf_fuse(arms)
    keys = [(-score, path) for path, score in fused]
    assert keys == sorted(keys)
    assert {path for path, _ in fused} == {path for paths in arms.values() for path in paths}
    for path, score in fused:
        contributions = [
            ARM_WEIGHTS[arm] / (RRF_K + paths.index(path) + 1) for arm, paths in arms.items() if path in paths
        ]
        assert score == pytest.approx(sum(contributions), rel=1e-12)


# --- the tied-signal rule ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([], False),
        (["2026-01-02T03:04:05Z"], False),
        (["2026-01-02T03:04:05Z"] * 40, False),  # one batch: every memory shares one write time
        ([0.7, 0.7, 0.7], False),
        (["2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z", "2026-01-03T00:00:00Z"], True),
        ([1.0, 1.0, 0.9], True),
        ([None, None], False),
        ([None, 1.0], True),
    ],
)
def test_an_arm_votes_only_when_it_tells_candidates_apart(values: list[object], expected: bool) -> None:
    assert arm_discriminates(values) is expected
    assert arm_discriminates(iter(values)) is expected


# --- MMR ------------------------------------------------------------------------------------------


def test_lambda_one_returns_the_fused_order_truncated() -> None:
    candidates = [("a", [1.0, 0.0]), ("b", [1.0, 0.0]), ("c", None), ("d", [0.0, 1.0])]
    assert mmr(candidates, 3, 1.0) == ["a", "b", "c"]
    assert mmr(candidates, 10, 1.5) == ["a", "b", "c", "d"]


def test_an_identical_vector_is_pushed_below_a_different_one() -> None:
    candidates = [("a", [1.0, 0.0]), ("b", [2.0, 0.0]), ("c", [0.0, 1.0])]
    # Second pick: b scores 0.5 * 1/2 - 0.5 * 1 = -0.25, c scores 0.5 * 1/3 - 0.5 * 0 = 0.1667.
    assert mmr(candidates, 3) == ["a", "c", "b"]
    assert mmr(candidates, 2) == ["a", "c"]


def test_candidates_without_vectors_have_no_penalty() -> None:
    assert mmr([("a", None), ("b", None), ("c", None)], 3) == ["a", "b", "c"]
    # b has no vector, so it keeps its 0.25 while the duplicate c drops to 1/6 - 1/2.
    candidates = [("a", [1.0, 0.0]), ("b", None), ("c", [1.0, 0.0])]
    assert mmr(candidates, 3) == ["a", "b", "c"]
    # Before any picked candidate has a vector, nothing is penalized.
    assert mmr([("a", None), ("b", [1.0, 0.0]), ("c", [1.0, 0.0])], 3) == ["a", "b", "c"]


def test_a_dissimilar_candidate_gains_from_a_negative_cosine() -> None:
    # c points away from a: its penalty is -1, so 0.5/3 + 0.5 beats b's 0.5/2 - 0.5 * 0.
    candidates = [("a", [1.0, 0.0]), ("b", [0.0, 1.0]), ("c", [-1.0, 0.0])]
    assert mmr(candidates, 3) == ["a", "c", "b"]


def test_mmr_edge_cases() -> None:
    assert mmr([], 5) == []
    assert mmr([("a", None)], 0) == []
    assert mmr([("a", None)], -1) == []
    with pytest.raises(ValueError, match="lambda"):
        mmr([("a", None)], 1, -0.1)
    with pytest.raises(ValueError, match="dimension"):
        mmr([("a", [1.0]), ("b", [1.0, 0.0])], 2)


def test_cosine() -> None:
    assert cosine([1.0, 0.0], [3.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 1.0], [1.0, 0.0]) == pytest.approx(1 / math.sqrt(2))
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0


VECTORS = st.one_of(st.none(), st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=3))


@settings(max_examples=200)
@given(
    st.lists(VECTORS, max_size=12),
    st.integers(min_value=0, max_value=15),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_mmr_picks_distinct_candidates_and_always_starts_with_the_best(
    vectors: list[list[float] | None], limit: int, lambda_: float
) -> None:
    candidates = [(f"p{index}", vector) for index, vector in enumerate(vectors)]
    picked = mmr(candidates, limit, lambda_)
    assert len(picked) == min(limit, len(candidates))
    assert len(set(picked)) == len(picked)
    assert set(picked) <= {path for path, _ in candidates}
    if picked:
        assert picked[0] == "p0"
