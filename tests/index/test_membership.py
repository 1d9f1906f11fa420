"""`membership`: the same rows as a Python filter, for short lists (a parameter per value) and long ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhtml.index.database import EXPANDED_MEMBERSHIP_LIMIT, Database, membership, open_database

STORED = [f"areas/inbox/memory-{number}.html" for number in range(300)] + ["it's $quoted", "naïve 苹果", ""]


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    root: Path = tmp_path_factory.mktemp("membership")
    with open_database(root) as opened:
        opened.run("CREATE TEMP TABLE probe (path VARCHAR PRIMARY KEY, number INTEGER)")
        opened.insert_columns("probe", {"path": STORED, "number": list(range(len(STORED)))})
        yield opened


def _selected(database: Database, values: list[str]) -> set[str]:
    condition, parameters = membership("path", "wanted", values)
    return {row[0] for row in database.rows(f"SELECT path FROM probe WHERE {condition}", parameters)}


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(STORED), st.text(max_size=12)),
        max_size=EXPANDED_MEMBERSHIP_LIMIT * 3,
    )
)
def test_membership_selects_exactly_the_listed_values(database: Database, values: list[str]) -> None:
    assert _selected(database, values) == set(values) & set(STORED)


@pytest.mark.parametrize("size", [1, EXPANDED_MEMBERSHIP_LIMIT, EXPANDED_MEMBERSHIP_LIMIT + 1, 299])
def test_both_forms_at_the_limit_select_the_same_rows(database: Database, size: int) -> None:
    values = STORED[:size]
    condition, _ = membership("path", "wanted", values)
    assert ("unnest" in condition) == (size > EXPANDED_MEMBERSHIP_LIMIT)
    assert _selected(database, values) == set(values)


def test_an_empty_list_selects_nothing_and_binds_nothing(database: Database) -> None:
    condition, parameters = membership("path", "wanted", [])
    assert parameters == {}
    assert database.rows(f"SELECT count(*) FROM probe WHERE {condition}")[0][0] == 0


def test_integer_values_and_a_second_list_in_one_statement(database: Database) -> None:
    numbers, number_parameters = membership("number", "numbers", [0, 2, 4, 999])
    paths, path_parameters = membership("path", "paths", STORED[:3])
    rows = database.rows(
        f"SELECT number FROM probe WHERE {numbers} AND {paths} ORDER BY number",
        {**number_parameters, **path_parameters},
    )
    assert [row[0] for row in rows] == [0, 2]
