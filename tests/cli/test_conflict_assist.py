"""The conflict assist through the real commands: per-op typed findings on write and apply, and the
whole-store audit with its coverage counts. What is written never changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import Answer, git, run_cli


def apply_ops(root: Path, ops: list[dict[str, Any]], *flags: str) -> Answer:
    source = root.parent / "ops.jsonl"
    source.write_text("".join(json.dumps(item) + "\n" for item in ops), encoding="utf-8")
    return run_cli("apply", "--repo", str(root), "--file", str(source), *flags)


def fact(title: str, body: str, **fields: Any) -> dict[str, Any]:
    return {"op": "write", "title": title, "type": fields.pop("type", "semantic"), "body": body, **fields}


OFFICE = fact("Office", "The office of the payments team is in Berlin.", entity="team:payments")
# Facets of one object: same entity, every attribute different.
FACETS = [
    fact("Slot", "The deploy slot of the checkout service is Tuesday.", entity="service:checkout"),
    fact("Channel", "The release channel of the checkout service is cloud.", entity="service:checkout"),
    fact("Port", "The port of the checkout service is 8443.", entity="service:checkout"),
    fact("Owner", "The owner of the checkout service is the payments team.", entity="service:checkout"),
    fact("Timeout", "The timeout of the checkout service is 30 seconds.", entity="service:checkout"),
    fact("Retries", "The retry budget of the checkout service is 3.", entity="service:checkout"),
    fact("Region", "The region of the checkout service is eu-west-1.", entity="service:checkout"),
    fact("Database", "The database of the checkout service is Postgres.", entity="service:checkout"),
]


def test_a_changed_value_is_a_temporal_update_and_the_write_still_lands(store_root: Path) -> None:
    apply_ops(store_root, [OFFICE])
    before = git(store_root, "rev-list", "--count", "HEAD")
    answer = apply_ops(
        store_root,
        [fact("Office", "The office of the payments team is in Munich.", entity="team:payments")],
        "--detect-conflicts",
    )
    result = answer.data["results"][0]
    assert result["outcome"] == "written"
    assert result["conflicts"] == [
        {
            "path": "areas/inbox/office.html",
            "batch_index": None,
            "claim": "The office of the payments team is in Berlin.",
            "class": "temporal update",
            "action": "correct",
            "reason": "office of the payments team: 'Berlin' vs 'Munich'",
        }
    ]
    assert result["conflict"] == {
        "path": "areas/inbox/office.html",
        "batch_index": None,
        "claim": "The office of the payments team is in Berlin.",
    }
    assert int(git(store_root, "rev-list", "--count", "HEAD")) == int(before) + 1


def test_a_later_op_reports_on_an_earlier_one_and_dedupe_is_not_a_conflict(store_root: Path) -> None:
    ops = [
        fact("Budget", "The retry budget of the gateway is 3.", entity="service:gateway"),
        fact("Budget", "The retry budget of the gateway is 5.", entity="service:gateway"),
        fact("Budget", "The retry budget of the gateway is 3.", entity="service:gateway"),
    ]
    results = apply_ops(store_root, ops, "--detect-conflicts").data["results"]
    assert results[0]["conflicts"] == []
    assert [finding["batch_index"] for finding in results[1]["conflicts"]] == [0]
    # Op 2 restates op 0 (unchanged): its own file is never its conflict; op 1 still differs.
    assert results[2]["outcome"] == "unchanged"
    assert [finding["batch_index"] for finding in results[2]["conflicts"]] == [1]


def test_a_different_workspace_is_a_scope_difference_not_an_update(store_root: Path) -> None:
    apply_ops(
        store_root, [fact("Timeout", "The timeout of the API is 30 seconds.", entity="service:api", workspace="web")]
    )
    answer = run_cli(
        "write", "--repo", str(store_root), "--title", "Timeout", "--type", "semantic", "--entity", "service:api",
        "--workspace", "mobile", "--claim", "The timeout of the API is 60 seconds.", "--detect-conflicts",
    )  # fmt: skip
    assert answer.status == 0 and answer.data["outcome"] == "written"
    assert [(finding["class"], finding["action"]) for finding in answer.data["conflicts"]] == [
        ("scope difference", "add")
    ]


def test_write_without_the_flag_reports_no_conflicts_key(store_root: Path) -> None:
    answer = run_cli(
        "write", "--repo", str(store_root), "--title", "x", "--type", "semantic", "--claim", "A fact.",
    )  # fmt: skip
    assert "conflicts" not in answer.data


def test_facets_of_one_object_are_not_conflicts_and_the_audit_says_what_it_scanned(store_root: Path) -> None:
    answer = apply_ops(store_root, FACETS, "--detect-conflicts")
    assert [result["conflicts"] for result in answer.data["results"]] == [[]] * len(FACETS)
    audit = run_cli("conflicts", "audit", "--repo", str(store_root)).data
    n = len(FACETS)
    assert audit["scanned"] == n and audit["pairs"] == n * (n - 1) // 2
    assert audit["reported"] == 0 and audit["findings"] == []
    apply_ops(store_root, [fact("Port v2", "The port of the checkout service is 9443.", entity="service:checkout")])
    audit = run_cli("conflicts", "audit", "--repo", str(store_root)).data
    assert audit["scanned"] == n + 1 and audit["reported"] == 1
    assert audit["findings"][0]["class"] == "temporal update"
    assert {audit["findings"][0]["path"], audit["findings"][0]["newer"]} == {
        "areas/inbox/port.html",
        "areas/inbox/port-v2.html",
    }
