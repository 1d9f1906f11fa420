"""How the scope flags read their values: entity references ignore ASCII case and surrounding
whitespace, a facet with an empty value is no filter, an empty tag is no filter, and a `list` cursor
may carry the leading `/` of a memory path or be empty."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli

# The lexical arm alone decides these hits, so every expected set follows from the words written.
LEXICAL_ONLY = {"MEMHTML_EMBED": "off"}


def _write(store_root: Path, title: str, *extra: str) -> str:
    answer = run_cli("write", "--repo", str(store_root), "--title", title, "--type", "semantic", *extra)
    assert answer.status == 0, answer.stdout + answer.stderr
    return str(answer.data["path"])


def _faceted(store_root: Path, title: str, claim: str, facets: dict[str, str]) -> str:
    pairs = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facets.items())
    return _write(store_root, title, "--article-html", f"<p><mark>{claim}</mark></p><dl>{pairs}</dl>")


def _answer(store_root: Path, *argv: str) -> dict[str, Any]:
    answer = run_cli(*argv, "--repo", str(store_root), env=LEXICAL_ONLY)
    assert answer.status == 0, answer.stdout + answer.stderr
    return answer.data


def _hit_paths(store_root: Path, *argv: str) -> set[str]:
    return {hit["path"] for hit in _answer(store_root, "search", *argv)["hits"]}


def _listed(store_root: Path, *argv: str) -> list[str]:
    return [row["path"] for row in _answer(store_root, "list", *argv)["files"]]


def _recalled(store_root: Path, *argv: str) -> set[str]:
    memories = _answer(store_root, "recall", *argv)["memories"]
    return {item["path"] for item in memories["disclosed"] + memories["indexLines"]}


# --- --entity ------------------------------------------------------------------------------------


def test_entity_scope_ignores_the_ascii_case_of_type_and_name(store_root: Path) -> None:
    alice = _write(
        store_root,
        "Checkout retries",
        "--claim",
        "The checkout service retries payments three times.",
        "--entity",
        "Service:Checkout",
        "--entity",
        "Person:Alice Smith",
    )
    _write(store_root, "Checkout owner", "--claim", "The checkout queue belongs to the payments team.")
    for entity in ("SERVICE:Checkout", "service:CHECKOUT", "Service:Checkout"):
        answer = _answer(store_root, "search", "checkout", "--entity", entity)
        assert [hit["path"] for hit in answer["hits"]] == [alice], entity
        # The hit shows the entities as written; the scope is echoed as the caller gave it.
        assert {"Service:Checkout", "Person:Alice Smith"} <= set(answer["hits"][0]["entities"])
        assert answer["entityScope"] == entity and answer["scopeEmpty"] is False
    assert _listed(store_root, "--entity", "person:alice smith") == [alice]
    assert _listed(store_root, "--entity", "PERSON:ALICE SMITH") == [alice]
    assert _recalled(store_root, "checkout", "--entity", "person:ALICE smith") == {alice}


def test_entity_scope_folds_ascii_letters_only(store_root: Path) -> None:
    team = _write(
        store_root, "Rollout team", "--claim", "The rollout team owns the canary.", "--entity", "Team:Ärger Ölmann"
    )
    # The ASCII letters fold, the accented capitals stay as written.
    assert _listed(store_root, "--entity", "TEAM:ÄRGER ÖLMANN") == [team]
    assert _listed(store_root, "--entity", "team:Ärger ölmann") == []
    empty = _answer(store_root, "search", "rollout", "--entity", "team:ärger ölmann")
    assert empty["hits"] == [] and empty["scopeEmpty"] is True


def test_entity_scope_ignores_whitespace_around_the_reference(store_root: Path) -> None:
    database = _write(
        store_root, "Replica restarts", "--claim", "Restart the replicas first.", "--entity", "service:db"
    )
    for entity in ("  SERVICE:db\t", "service:db ", "\u00a0service:db"):
        answer = _answer(store_root, "search", "replicas", "--entity", entity)
        assert [hit["path"] for hit in answer["hits"]] == [database], repr(entity)
        assert answer["entityScope"] == entity
        assert _listed(store_root, "--entity", entity) == [database]
    # Whitespace inside the reference is part of it.
    assert _listed(store_root, "--entity", "service: db") == []
    assert _listed(store_root, "--entity", "service :db") == []


# --- --facet -------------------------------------------------------------------------------------


@pytest.fixture
def faceted(store_root: Path) -> dict[str, str]:
    return {
        "runbook": _faceted(
            store_root,
            "Incident runbook",
            "The incident runbook restarts replicas.",
            {"doc-type": "runbook", "tier": "2"},
        ),
        "blank": _faceted(store_root, "Blank kind", "A runbook whose kind is blank.", {"doc-type": "", "tier": "2"}),
        "guide": _faceted(
            store_root, "Runbook guide", "A guide to writing a runbook.", {"doc-type": "guide", "tier": "3"}
        ),
        "plain": _write(store_root, "Plain runbook note", "--claim", "Every runbook names an owner."),
    }


@pytest.mark.parametrize("empty", ["doc-type=", "doc-type=   "])
def test_a_facet_with_an_empty_value_is_no_filter(store_root: Path, faceted: dict[str, str], empty: str) -> None:
    everything = sorted(faceted.values())
    assert _listed(store_root, "--facet", empty) == everything
    assert _listed(store_root, "--facet", "tier=2", "--facet", empty) == sorted([faceted["runbook"], faceted["blank"]])
    assert _listed(store_root, "--facet", "doc-type=runbook", "--facet", empty) == [faceted["runbook"]]
    assert _hit_paths(store_root, "runbook", "--facet", "tier=2", "--facet", empty) == {
        faceted["runbook"],
        faceted["blank"],
    }
    assert _hit_paths(store_root, "runbook", "--facet", empty) == set(everything)
    assert _recalled(store_root, "runbook", "--facet", "tier=3", "--facet", empty) == {faceted["guide"]}


def test_a_scope_of_empty_facets_alone_does_not_narrow(store_root: Path, faceted: dict[str, str]) -> None:
    answer = _answer(store_root, "search", "zeppelin", "--facet", "doc-type=")
    assert answer["hits"] == [] and answer["scopeEmpty"] is False
    narrowed = _answer(store_root, "search", "zeppelin", "--facet", "tier=2")
    assert narrowed["hits"] == [] and narrowed["scopeEmpty"] is True


# --- --tag ---------------------------------------------------------------------------------------


def test_an_empty_tag_is_no_filter_on_search_as_on_list(store_root: Path) -> None:
    tagged = _write(store_root, "Tagged canary", "--claim", "The canary runs first.", "--tag", "ops")
    untagged = _write(store_root, "Untagged canary", "--claim", "The canary runs at noon.")
    answer = _answer(store_root, "search", "canary", "--tag", "")
    assert {hit["path"] for hit in answer["hits"]} == {tagged, untagged}
    assert answer["scopeEmpty"] is False
    assert _recalled(store_root, "canary", "--tag", "") == {tagged, untagged}
    assert _listed(store_root, "--tag", "") == sorted([tagged, untagged])
    assert _hit_paths(store_root, "canary", "--tag", "", "--tag", "ops") == {tagged}


# --- list --cursor -------------------------------------------------------------------------------


@pytest.fixture
def three(store_root: Path) -> list[str]:
    return sorted(
        _write(store_root, title, "--claim", f"The {title.lower()} is recorded.")
        for title in ("Alpha fact", "Beta fact", "Gamma fact")
    )


@pytest.mark.parametrize("lead", ["/", "//"])
def test_a_cursor_with_a_leading_slash_continues_after_that_path(store_root: Path, three: list[str], lead: str) -> None:
    answer = _answer(store_root, "list", "--limit", "1", "--cursor", lead + three[0])
    assert [row["path"] for row in answer["files"]] == [three[1]]
    assert answer["nextCursor"] == three[1]
    assert _listed(store_root, "--cursor", lead + three[1]) == [three[2]]
    assert _listed(store_root, "--cursor", lead + three[2]) == []


@pytest.mark.parametrize(
    "blank",
    [
        "",
        "   ",
        "/",
    ],
)
def test_an_empty_cursor_is_the_first_page(store_root: Path, three: list[str], blank: str) -> None:
    answer = _answer(store_root, "list", "--limit", "1", "--cursor", blank)
    assert [row["path"] for row in answer["files"]] == [three[0]]
    assert answer["nextCursor"] == three[0]


def test_a_paging_loop_may_start_from_an_empty_cursor(store_root: Path, three: list[str]) -> None:
    seen: list[str] = []
    cursor: str | None = ""
    while cursor is not None:
        page = _answer(store_root, "list", "--limit", "2", "--cursor", cursor)
        seen += [row["path"] for row in page["files"]]
        cursor = page["nextCursor"]
    assert seen == three


def test_task_list_pages_from_an_empty_cursor_and_takes_a_leading_slash(store_root: Path) -> None:
    tasks = []
    for title in ("Task alpha", "Task beta", "Task gamma"):
        added = run_cli("task", "add", "--repo", str(store_root), "--title", title)
        assert added.status == 0, added.stdout + added.stderr
        tasks.append(str(added.data["path"]))
    tasks.sort()

    def page(cursor: str) -> tuple[list[str], str | None]:
        answer = run_cli("task", "list", "--repo", str(store_root), "--limit", "2", "--cursor", cursor)
        assert answer.status == 0, answer.stdout + answer.stderr
        return [row["path"] for row in answer.data["tasks"]], answer.data["nextCursor"]

    assert page("") == (tasks[:2], tasks[1])
    assert page("   ")[0] == tasks[:2]
    assert page("/" + tasks[1]) == (tasks[2:], None)


def test_entity_activity_type_ignores_ascii_case_and_surrounding_whitespace(store_root: Path) -> None:
    written = run_cli(
        "write", "--repo", str(store_root), "--title", "Checkout", "--type", "semantic",
        "--claim", "Checkout retries twice.", "--entity", "Service:Checkout",
    )  # fmt: skip
    assert written.status == 0, written.stdout + written.stderr
    for asked in ("service", "SERVICE", "  Service "):
        answer = run_cli("entity", "activity", "--repo", str(store_root), "--type", asked)
        assert answer.status == 0, answer.stdout + answer.stderr
        assert [entry["entity"] for entry in answer.data["entities"]] == ["Service:Checkout"], asked
