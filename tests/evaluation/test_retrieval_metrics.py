"""hit@k, recall@k, reciprocal rank and their means, on rankings built by hand."""

from __future__ import annotations

import pytest

from memhtml.evaluation.retrieval_metrics import (
    hit_at,
    mean_row,
    metric_table,
    recall_at,
    reciprocal_rank,
    score_question,
)

RANKING = ["t1", "g1", "t2", "t3", "t4", "g2", "t5", "t6", "t7", "t8", "g3"]
GOLD = {"g1", "g2", "g3"}


def test_hit_at_k_is_any_gold_key_in_the_top_k() -> None:
    assert hit_at(RANKING, GOLD, 1) == 0.0
    assert hit_at(RANKING, GOLD, 2) == 1.0
    assert hit_at(RANKING, GOLD, 10) == 1.0
    assert hit_at(["x", "y"], GOLD, 10) == 0.0


def test_recall_at_k_is_the_share_of_gold_keys_in_the_top_k() -> None:
    assert recall_at(RANKING, GOLD, 1) == 0.0
    assert recall_at(RANKING, GOLD, 5) == pytest.approx(1 / 3)
    assert recall_at(RANKING, GOLD, 10) == pytest.approx(2 / 3)
    assert recall_at(RANKING, GOLD, 11) == 1.0
    assert recall_at(RANKING, GOLD, 20) == 1.0


def test_reciprocal_rank_is_one_over_the_first_gold_position() -> None:
    assert reciprocal_rank(RANKING, GOLD) == 0.5
    assert reciprocal_rank(["g3"], GOLD) == 1.0
    assert reciprocal_rank(["a", "b", "c", "g2"], GOLD) == 0.25
    assert reciprocal_rank([], GOLD) == 0.0


def test_a_repeated_key_counts_once_at_its_first_position() -> None:
    # Two turns stored as one memory expand to the same key twice: the repeat must not push gold down.
    assert recall_at(["a", "a", "a", "a", "g1"], GOLD, 2) == pytest.approx(1 / 3)
    assert reciprocal_rank(["a", "a", "g1"], GOLD) == 0.5


def test_a_question_without_gold_cannot_be_scored() -> None:
    with pytest.raises(ValueError, match="without gold"):
        hit_at(RANKING, [], 5)


def test_means_per_group_and_overall() -> None:
    first = score_question("single-hop", ["g1", "x"], {"g1"})  # everything 1
    second = score_question("single-hop", ["x", "y", "z", "g1", "w", "g2"], {"g1", "g2"})
    third = score_question("temporal", ["x"], {"g9"})  # nothing found
    assert second.hits == {1: 0.0, 5: 1.0, 10: 1.0}
    assert second.recalls == {5: 0.5, 10: 1.0, 20: 1.0}
    assert second.reciprocal_rank == 0.25
    table = metric_table([first, second, third], ["multi-hop", "single-hop", "temporal"])
    assert list(table) == ["multi-hop", "single-hop", "temporal", "overall"]
    assert table["multi-hop"].questions == 0 and table["multi-hop"].mrr == 0.0
    assert table["single-hop"].as_data() == {
        "questions": 2,
        "hit@1": 0.5,
        "hit@5": 1.0,
        "hit@10": 1.0,
        "recall@5": 0.75,
        "recall@10": 1.0,
        "recall@20": 1.0,
        "mrr": 0.625,
    }
    overall = table["overall"].as_data()
    assert overall["questions"] == 3
    assert overall["hit@5"] == round(2 / 3, 3) and overall["recall@5"] == 0.5
    assert overall["mrr"] == round((1 + 0.25 + 0) / 3, 3)
    assert mean_row([]).questions == 0
