"""Fuzz properties of the path algebra: every function is total on any string, a confined path is a usable
memory path, slugs keep their shape and budget, and archiving a path can be undone.

The inputs that once broke these properties (a lone surrogate, a 79-character slug ending in its own
ordinal suffix, a line break or a negative year in an archived path) are replayed from `corpus/paths.json`.
"""

from __future__ import annotations

import re
from typing import Any, Final

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhtml.contracts.errors import UsageError, envelope_code
from memhtml.contracts.paths import (
    MAX_COLLISION_ORDINAL,
    SLUG_MAX,
    archive_path_for,
    confine_memory_path,
    is_archived_path,
    is_memory_path,
    memory_filename,
    normalize_path,
    original_path_for,
    path_problem,
    slug_with_ordinal,
    slugify,
)
from memhtml.contracts.vocabulary import PARA_BUCKETS
from tests.fuzz.input_strategies import edge_slugs, path_inputs
from tests.fuzz.strategies import any_text, corpus, fuzz, note_outcome

SLUG: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_C0_OR_DEL: Final = re.compile(r"[\x00-\x1f\x7f]")
years = st.integers(0, 99_999)
ordinals = st.integers(2, MAX_COLLISION_ORDINAL)
slugs = st.one_of(any_text.map(slugify), edge_slugs)


def assert_path_functions_are_total(raw: str, year: int) -> None:
    normalized = normalize_path(raw)
    if normalized == normalized.strip():  # whitespace left at an edge is stripped by a second pass
        assert normalize_path(normalized) == normalized
    problem = path_problem(normalized)
    assert is_memory_path(normalized) == (problem is None)
    assert problem is None or (isinstance(problem, str) and problem)
    if problem is None:
        assert normalize_path(normalized) == normalized, "a memory path is its own normal form"
    is_archived_path(raw)
    original_path_for(raw)
    archived = archive_path_for(raw, year)
    assert original_path_for(archived) == normalized
    slug = slugify(raw)
    assert len(slug) <= SLUG_MAX and SLUG.fullmatch(slug), slug
    assert slugify(slug) == slug


def assert_confined_or_refused(raw: str) -> None:
    try:
        confined = confine_memory_path(raw, "read")
    except UsageError as refusal:
        assert envelope_code(refusal) == "ERR_INVALID_FLAG"
        assert not _C0_OR_DEL.search(refusal.message), "the refusal carries a raw control character"
        note_outcome("refused")
        return
    segments = confined.split("/")
    assert segments[0] in PARA_BUCKETS and len(segments) >= 2
    assert all(segment not in ("", ".", "..") and not segment.startswith(".") for segment in segments)
    assert not _C0_OR_DEL.search(confined) and "\\" not in confined
    assert confined.endswith(".html")
    assert path_problem(confined) is None
    assert confine_memory_path(confined, "read") == confined, "confinement is idempotent"
    note_outcome("confined")


def assert_ordinals_stay_distinct(slug: str, first: int, second: int) -> None:
    names = {ordinal: slug_with_ordinal(slug, ordinal) for ordinal in (1, first, second)}
    for ordinal, name in names.items():
        assert len(name) <= SLUG_MAX and SLUG.fullmatch(name), name
        assert name == slug if ordinal == 1 else name.endswith(f"-{ordinal}")
        filename = memory_filename(slug, ordinal, None)
        assert filename.endswith(".html") and "/" not in filename
        assert memory_filename(slug, ordinal, "20261130").startswith("20261130-")
    assert len(set(names.values())) == len(names), names


@fuzz(ci_examples=500)
@given(path_inputs, years)
def test_path_functions_are_total(raw: str, year: int) -> None:
    assert_path_functions_are_total(raw, year)


@fuzz(ci_examples=500)
@given(path_inputs)
def test_confined_paths_are_usable_memory_paths(raw: str) -> None:
    assert_confined_or_refused(raw)


@fuzz(ci_examples=400)
@given(slugs, st.lists(ordinals, min_size=2, max_size=2, unique=True))
def test_ordinal_suffixes_keep_slugs_distinct_and_in_budget(slug: str, pair: list[int]) -> None:
    first, second = pair
    assert_ordinals_stay_distinct(slug, first, second)


@pytest.mark.parametrize("entry", corpus("paths"))
def test_paths_corpus_replays(entry: dict[str, Any]) -> None:
    check = entry["check"]
    if check == "total":
        assert_path_functions_are_total(entry["text"], int(entry.get("year", 2026)))
    elif check == "confine":
        assert_confined_or_refused(entry["text"])
        if "expect" in entry:
            expected = entry["expect"]
            if expected == "refused":
                with pytest.raises(UsageError):
                    confine_memory_path(entry["text"], "read")
            else:
                assert confine_memory_path(entry["text"], "read") == expected
    else:
        ordinals_of = entry["ordinals"]
        assert_ordinals_stay_distinct(entry["text"], int(ordinals_of[0]), int(ordinals_of[1]))
