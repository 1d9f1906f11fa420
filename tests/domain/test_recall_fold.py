"""The recall fold: budget, the per-entity cap, continuing past a candidate that does not fit."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memhtml.domain.recall_fold import (
    ARC_BODY_BUDGET,
    MAX_PER_ENTITY,
    MEMORY_BODY_BUDGET,
    DisclosureCandidate,
    IndexLine,
    fold_disclosure,
    utf16_length,
)


def candidate(path: str, size: int, *entities: str) -> DisclosureCandidate:
    return DisclosureCandidate(
        path=path,
        title=f"title of {path}",
        gist=f"gist of {path}",
        memory_type="semantic",
        disclosure_text="x" * size,
        entity_names=entities,
    )


def paths(items: tuple[DisclosureCandidate, ...] | tuple[IndexLine, ...]) -> list[str]:
    return [item.path for item in items]


def test_the_constants_are_the_originals() -> None:
    assert (MEMORY_BODY_BUDGET, ARC_BODY_BUDGET, MAX_PER_ENTITY) == (16_000, 9_000, 2)


def test_a_candidate_that_does_not_fit_becomes_an_index_line_and_the_fold_continues() -> None:
    fold = fold_disclosure([candidate("a", 10), candidate("b", 50), candidate("c", 5)], budget_chars=20)
    assert paths(fold.disclosed) == ["a", "c"]
    assert fold.index_lines == (IndexLine(path="b", title="title of b", gist="gist of b", memory_type="semantic"),)
    assert fold.spent_chars == 15
    assert fold.truncated


def test_an_exact_fit_is_quoted() -> None:
    fold = fold_disclosure([candidate("a", 12), candidate("b", 8)], budget_chars=20)
    assert paths(fold.disclosed) == ["a", "b"]
    assert fold.spent_chars == 20
    assert not fold.truncated


def test_an_entity_name_is_quoted_at_most_twice() -> None:
    fold = fold_disclosure(
        [
            candidate("a", 1, "alice"),
            candidate("b", 1, "alice", "bob"),
            candidate("c", 1, "alice"),  # alice already has two quotes
            candidate("d", 1, "bob"),  # bob has one
            candidate("e", 1, "bob", "carol"),  # bob reached two with d
            candidate("f", 1, "carol"),
        ],
        budget_chars=100,
    )
    assert paths(fold.disclosed) == ["a", "b", "d", "f"]
    assert paths(fold.index_lines) == ["c", "e"]
    assert fold.spent_chars == 4


def test_a_name_repeated_in_one_candidate_counts_once_and_the_cap_is_a_parameter() -> None:
    items = [candidate("a", 1, "alice", "alice"), candidate("b", 1, "alice"), candidate("c", 1, "alice")]
    assert paths(fold_disclosure(items, 100).disclosed) == ["a", "b"]
    assert paths(fold_disclosure(items, 100, max_per_entity=1).disclosed) == ["a"]


def test_a_refused_candidate_does_not_count_against_its_entities() -> None:
    # "a" is too long, so alice still has both quotes left for b and c.
    items = [candidate("a", 500, "alice"), candidate("b", 1, "alice"), candidate("c", 1, "alice")]
    fold = fold_disclosure(items, 10)
    assert paths(fold.disclosed) == ["b", "c"]
    assert paths(fold.index_lines) == ["a"]


def test_a_budget_of_zero_or_less_quotes_nothing() -> None:
    items = [candidate("a", 0), candidate("b", 3)]
    for budget in (0, -5):
        fold = fold_disclosure(items, budget)
        assert fold.disclosed == ()
        assert paths(fold.index_lines) == ["a", "b"]
        assert fold.spent_chars == 0
        assert fold.truncated


def test_no_candidates_gives_an_empty_fold() -> None:
    fold = fold_disclosure([], 100)
    assert (fold.disclosed, fold.index_lines, fold.spent_chars, fold.truncated) == ((), (), 0, False)


def test_characters_are_counted_as_the_original_counts_them() -> None:
    assert utf16_length("abc") == 3
    assert utf16_length("苹果") == 2
    assert utf16_length("🙂") == 2  # an astral character is two UTF-16 units
    emoji = DisclosureCandidate("a", "t", "g", "semantic", "🙂🙂", ())
    assert fold_disclosure([emoji], 3).disclosed == ()
    assert fold_disclosure([emoji], 4).spent_chars == 4


@settings(max_examples=200)
@given(
    st.lists(
        st.tuples(st.integers(0, 40), st.lists(st.sampled_from(["alice", "bob", "carol"]), max_size=3)),
        max_size=15,
    ),
    st.integers(-10, 200),
)
def test_the_fold_keeps_every_candidate_in_order_and_never_overspends(
    specs: list[tuple[int, list[str]]], budget: int
) -> None:
    items = [candidate(f"p{index}", size, *names) for index, (size, names) in enumerate(specs)]
    fold = fold_disclosure(items, budget)
    quoted, listed = paths(fold.disclosed), paths(fold.index_lines)
    assert sorted(quoted + listed) == sorted(item.path for item in items)
    assert quoted == [path for path in paths(tuple(items)) if path in quoted]
    assert listed == [path for path in paths(tuple(items)) if path in listed]
    assert fold.spent_chars == sum(len(item.disclosure_text) for item in fold.disclosed)
    assert fold.spent_chars <= max(budget, 0)
    for name in ("alice", "bob", "carol"):
        assert sum(name in item.entity_names for item in fold.disclosed) <= MAX_PER_ENTITY
    assert fold.truncated == bool(listed)
