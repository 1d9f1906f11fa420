"""Answer-free retrieval metrics against gold evidence: hit@k, recall@k and reciprocal rank, and their means.

A ranking is a sequence of item keys, best first (a key may appear once; later repeats are ignored).
The gold set is the keys that hold the evidence. `hit@k` is 1 when any gold key is in the top k,
`recall@k` the share of the gold keys in the top k, and the reciprocal rank 1 / the position of the
first gold key (0 when none is ranked). A question without gold keys cannot be scored and is refused.
Means are taken over questions (each question counts once), per group and overall.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final, NamedTuple

HIT_DEPTHS: Final[tuple[int, ...]] = (1, 5, 10)
RECALL_DEPTHS: Final[tuple[int, ...]] = (5, 10, 20)
# Metrics are rounded to this many decimals when reported; sums are kept exact until then.
REPORT_DECIMALS: Final[int] = 3


def _distinct(ranking: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ranking))


def _checked(gold: Iterable[str]) -> frozenset[str]:
    wanted = frozenset(gold)
    if not wanted:
        raise ValueError("a question without gold evidence cannot be scored")
    return wanted


def hit_at(ranking: Sequence[str], gold: Iterable[str], depth: int) -> float:
    """1.0 when any gold key is among the first `depth` distinct keys of `ranking`, else 0.0."""
    wanted = _checked(gold)
    return 1.0 if any(key in wanted for key in _distinct(ranking)[:depth]) else 0.0


def recall_at(ranking: Sequence[str], gold: Iterable[str], depth: int) -> float:
    """The share of gold keys among the first `depth` distinct keys of `ranking`."""
    wanted = _checked(gold)
    return sum(1 for key in _distinct(ranking)[:depth] if key in wanted) / len(wanted)


def reciprocal_rank(ranking: Sequence[str], gold: Iterable[str]) -> float:
    """1 / the 1-based position of the first gold key in `ranking`; 0.0 when no gold key is ranked."""
    wanted = _checked(gold)
    for position, key in enumerate(_distinct(ranking), start=1):
        if key in wanted:
            return 1.0 / position
    return 0.0


class QuestionScore(NamedTuple):
    """Every metric of one question: `hits[k]`, `recalls[k]` and the reciprocal rank."""

    group: str
    hits: Mapping[int, float]
    recalls: Mapping[int, float]
    reciprocal_rank: float


def score_question(group: str, ranking: Sequence[str], gold: Iterable[str]) -> QuestionScore:
    """All metrics of one ranking against its gold keys, filed under `group` (a category, say)."""
    wanted = _checked(gold)
    return QuestionScore(
        group=group,
        hits={depth: hit_at(ranking, wanted, depth) for depth in HIT_DEPTHS},
        recalls={depth: recall_at(ranking, wanted, depth) for depth in RECALL_DEPTHS},
        reciprocal_rank=reciprocal_rank(ranking, wanted),
    )


class MetricRow(NamedTuple):
    """Means over a set of questions."""

    questions: int
    hits: Mapping[int, float]
    recalls: Mapping[int, float]
    mrr: float

    def as_data(self) -> dict[str, float | int]:
        """`{questions, hit@1, hit@5, hit@10, recall@5, recall@10, recall@20, mrr}`, rounded."""
        data: dict[str, float | int] = {"questions": self.questions}
        data.update({f"hit@{depth}": round(value, REPORT_DECIMALS) for depth, value in self.hits.items()})
        data.update({f"recall@{depth}": round(value, REPORT_DECIMALS) for depth, value in self.recalls.items()})
        data["mrr"] = round(self.mrr, REPORT_DECIMALS)
        return data


def mean_row(scores: Sequence[QuestionScore]) -> MetricRow:
    """The mean of every metric over `scores`; all zeros for no question."""
    count = len(scores)
    if count == 0:
        return MetricRow(0, dict.fromkeys(HIT_DEPTHS, 0.0), dict.fromkeys(RECALL_DEPTHS, 0.0), 0.0)
    return MetricRow(
        questions=count,
        hits={depth: sum(score.hits[depth] for score in scores) / count for depth in HIT_DEPTHS},
        recalls={depth: sum(score.recalls[depth] for score in scores) / count for depth in RECALL_DEPTHS},
        mrr=sum(score.reciprocal_rank for score in scores) / count,
    )


def metric_table(scores: Sequence[QuestionScore], groups: Sequence[str]) -> dict[str, MetricRow]:
    """One row per group in `groups` order (absent groups get an empty row), then `overall`."""
    table = {group: mean_row([score for score in scores if score.group == group]) for group in groups}
    table["overall"] = mean_row(scores)
    return table
