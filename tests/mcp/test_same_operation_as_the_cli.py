"""Each tool calls the operation its CLI command calls, with the request the CLI builds.

Both doors import their operation when a command runs, so replacing the operation in its module
intercepts either door: the CLI runs in this process (`entry.run`) on the command line, the tool on
the equivalent arguments, and the two recorded calls must be equal, argument for argument.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memhtml.cli.entry import run
from memhtml.mcp.server import call_tool
from memhtml.operations.apply import ApplyAnswer
from memhtml.operations.batchinput import decode_ops


@dataclass
class Report:
    """Stands in for `write`'s WriteReport: the doors only ask it for its data."""

    def as_data(self) -> dict[str, object]:
        return {"stored": True, "outcome": "written"}


@dataclass
class Case:
    tool: str
    arguments: dict[str, Any]
    argv: list[str]
    operation: str  # module:function
    returns: Any = field(default_factory=dict)


PROVENANCE_ARGS = {"session_id": "s-1", "prompt_id": "p-1", "turn_uuid": "t-1"}
PROVENANCE_ARGV = ["--session-id", "s-1", "--prompt-id", "p-1", "--turn-uuid", "t-1"]
SCOPE_ARGS = {
    "memory_types": ["semantic", "procedural"],
    "workspace": "payments",
    "tags": ["db", "infra"],
    "entity": "service:checkout-api",
    "facets": ["doc-type=runbook", "tier=  1  a"],
    "include_archived": True,
    "as_of": "2026-08-24",
}
SCOPE_ARGV = [
    "--type", "semantic", "--type", "procedural", "--workspace", "payments", "--tag", "db", "--tag", "infra",
    "--entity", "service:checkout-api", "--facet", "doc-type=runbook", "--facet", "tier=  1  a",
    "--include-archived", "--as-of", "2026-08-24",
]  # fmt: skip
OPS = [
    {"title": "Ledger shards", "memory_type": "semantic", "body": "The shard count of ledger is 16. Set in March."},
    {
        "title": "Rotate key",
        "memory_type": "task",
        "body": "Rotate the deploy key.",
        "status": "doing",
        "due": "2026-12-01",
    },
]
OPS_JSONL = "".join(
    json.dumps({"op": "write", "type": op["memory_type"], **{k: v for k, v in op.items() if k != "memory_type"}}) + "\n"
    for op in OPS
)

CASES = [
    Case(
        "memory_write",
        {
            "title": "Checkout pool ceiling",
            "memory_type": "semantic",
            "body": "The pool ceiling of checkout-api is 64. Raised after the load test.\n\nSee INV-2024-001.",
            "path": "resources/db/pool.html",
            "strict_path": True,
            "workspace": "payments",
            "tags": ["db", "infra"],
            "entities": ["service:checkout-api"],
            "importance": 7,
            "confidence": 0.9,
            "event_at": "2026-08-24",
            "detect_conflicts": True,
            **PROVENANCE_ARGS,
        },
        [
            "write",
            "--title",
            "Checkout pool ceiling",
            "--type",
            "semantic",
            "--claim",
            "The pool ceiling of checkout-api is 64.",
            "--body",
            "Raised after the load test.",
            "--body",
            "See INV-2024-001.",
            "--path",
            "resources/db/pool.html",
            "--strict-path",
            "--workspace",
            "payments",
            "--tag",
            "db",
            "--tag",
            "infra",
            "--entity",
            "service:checkout-api",
            "--importance",
            "7",
            "--confidence",
            "0.9",
            "--event-at",
            "2026-08-24",
            "--detect-conflicts",
            *PROVENANCE_ARGV,
        ],
        "memhtml.operations.write:write",
        Report(),
    ),
    Case(
        "memory_read",
        {"path": "areas/inbox/a.html", **PROVENANCE_ARGS},
        ["read", "areas/inbox/a.html", *PROVENANCE_ARGV],
        "memhtml.operations.read:read",
    ),
    Case(
        "memory_search",
        {"query": "pool ceiling", "limit": 5, **SCOPE_ARGS},
        ["search", "pool ceiling", "--limit", "5", *SCOPE_ARGV],
        "memhtml.operations.retrieval:search",
    ),
    Case(
        "memory_recall",
        {"query": "pool ceiling", "budget_chars": 0, **SCOPE_ARGS},
        ["recall", "pool ceiling", "--budget", "0", *SCOPE_ARGV],
        "memhtml.operations.retrieval:recall",
    ),
    Case(
        "memory_correct",
        {
            "target_path": "areas/inbox/a.html",
            "title": "A v2",
            "reason": "changed",
            "article_html": "<p><mark>A is two.</mark></p>",
            "memory_type": "verdict",
            "tags": ["db"],
            "entities": ["service:a"],
            "importance": 3,
            "confidence": 0.5,
            "event_at": "2026-01-01T00:00:00Z",
            **PROVENANCE_ARGS,
        },
        [
            "correct",
            "areas/inbox/a.html",
            "--title",
            "A v2",
            "--reason",
            "changed",
            "--article-html",
            "<p><mark>A is two.</mark></p>",
            "--type",
            "verdict",
            "--tag",
            "db",
            "--entity",
            "service:a",
            "--importance",
            "3",
            "--confidence",
            "0.5",
            "--event-at",
            "2026-01-01T00:00:00Z",
            *PROVENANCE_ARGV,
        ],
        "memhtml.operations.lifecycle:correct",
    ),
    Case(
        "memory_link",
        {"src_path": "areas/inbox/a.html", "rel": "caused_by", "dst_path": "areas/inbox/b.html"},
        ["link", "areas/inbox/a.html", "caused_by", "areas/inbox/b.html"],
        "memhtml.operations.lifecycle:link",
    ),
    Case(
        "memory_neighbors",
        {"path": "areas/inbox/a.html", "depth": 2, "limit": 20, "rels": ["supersedes", "caused_by"]},
        [
            "neighbors",
            "areas/inbox/a.html",
            "--depth",
            "2",
            "--limit",
            "20",
            "--rel",
            "supersedes",
            "--rel",
            "caused_by",
        ],
        "memhtml.operations.browse:neighbors",
    ),
    Case(
        "memory_resolve",
        {"path": "areas/inbox/a.html"},
        ["resolve", "areas/inbox/a.html"],
        "memhtml.operations.browse:resolve",
        {"path": "areas/inbox/a.html", "stopReason": "live", "indexedCommit": "abcdef1"},
    ),
    Case(
        "memory_archive",
        {"path": "areas/inbox/a.html", "reason": "stale"},
        ["archive", "areas/inbox/a.html", "--reason", "stale"],
        "memhtml.operations.lifecycle:archive",
    ),
    Case(
        "memory_reinforce",
        {"paths": ["areas/inbox/a.html", "areas/inbox/b.html"], "signal": "negative"},
        ["reinforce", "areas/inbox/a.html", "areas/inbox/b.html", "--signal", "negative"],
        "memhtml.operations.browse:reinforce",
    ),
    Case(
        "memory_list",
        {
            "memory_type": "arc",
            "workspace": "payments",
            "tag": "db",
            "entity": "service:a",
            "facets": ["tier=1"],
            "para": "areas",
            "limit": 7,
            "cursor": "areas/inbox/a.html",
            "include_archived": True,
        },
        [
            "list",
            "--type",
            "arc",
            "--workspace",
            "payments",
            "--tag",
            "db",
            "--entity",
            "service:a",
            "--facet",
            "tier=1",
            "--para",
            "areas",
            "--limit",
            "7",
            "--cursor",
            "areas/inbox/a.html",
            "--include-archived",
        ],
        "memhtml.operations.browse:list_memories",
    ),
    Case("memory_status", {}, ["status"], "memhtml.operations.status:status"),
    Case(
        "task_add",
        {
            "title": "Rotate the deploy key",
            "claim": "The deploy key expires on the first.",
            "body": "Ask ops for the vault path.\n\nThen restart the pods.",
            "status": "blocked",
            "due": "2026-10-01",
            "workspace": "payments",
            "tags": ["security"],
            "entities": ["service:deploy"],
            **PROVENANCE_ARGS,
        },
        [
            "task",
            "add",
            "--title",
            "Rotate the deploy key",
            "--claim",
            "The deploy key expires on the first.",
            "--body",
            "Ask ops for the vault path.",
            "--body",
            "Then restart the pods.",
            "--status",
            "blocked",
            "--due",
            "2026-10-01",
            "--workspace",
            "payments",
            "--tag",
            "security",
            "--entity",
            "service:deploy",
            *PROVENANCE_ARGV,
        ],
        "memhtml.operations.lifecycle:task_add",
    ),
    Case(
        "task_add",
        {"title": "Water the plants"},
        ["task", "add", "--title", "Water the plants"],
        "memhtml.operations.lifecycle:task_add",
    ),
    Case(
        "task_status",
        {"path": "areas/inbox/tasks/t.html", "status": "done", "reason": "rotated"},
        ["task", "status", "areas/inbox/tasks/t.html", "done", "--reason", "rotated"],
        "memhtml.operations.lifecycle:task_status",
    ),
    Case(
        "task_list",
        {
            "status": "todo",
            "workspace": "payments",
            "due_before": "2026-12-01",
            "limit": 9,
            "cursor": "areas/inbox/tasks/a.html",
            "include_archived": True,
        },
        [
            "task",
            "list",
            "--status",
            "todo",
            "--workspace",
            "payments",
            "--due-before",
            "2026-12-01",
            "--limit",
            "9",
            "--cursor",
            "areas/inbox/tasks/a.html",
            "--include-archived",
        ],
        "memhtml.operations.lifecycle:task_list",
    ),
]


def intercept(
    monkeypatch: pytest.MonkeyPatch, operation: str, returns: Any
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    module_name, name = operation.split(":")
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return returns

    monkeypatch.setattr(importlib.import_module(module_name), name, recorded)
    return calls


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.tool}-{len(case.arguments)}")
def test_the_tool_makes_the_call_the_cli_command_makes(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "store"
    calls = intercept(monkeypatch, case.operation, case.returns)
    assert run([*case.argv, "--repo", str(root)]) == 0, capsys.readouterr().out
    result = call_tool(root, case.tool, case.arguments)
    assert not result.is_error, result.content
    assert len(calls) == 2
    cli_call, tool_call = calls
    assert tool_call == cli_call


def test_a_batch_is_the_apply_stream_the_cli_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "store"
    ops_file = tmp_path / "ops.jsonl"
    ops_file.write_text(OPS_JSONL, encoding="utf-8")
    calls = intercept(monkeypatch, "memhtml.operations.apply:apply", ApplyAnswer({"results": []}, partial=False))
    argv = [
        "apply", "--file", str(ops_file), "--continue-on-error", "--dry-run", "--detect-conflicts",
        "--detect-near-duplicates", "--consolidate", "last-wins", *PROVENANCE_ARGV, "--repo", str(root),
    ]  # fmt: skip
    assert run(argv) == 0, capsys.readouterr().out
    arguments = {
        "ops": OPS,
        "continue_on_error": True,
        "dry_run": True,
        "detect_conflicts": True,
        "detect_near_duplicates": True,
        "consolidate": "last-wins",
        **PROVENANCE_ARGS,
    }
    assert not call_tool(root, "memory_write_batch", arguments).is_error
    (cli_args, cli_kwargs), (tool_args, tool_kwargs) = calls
    # The CLI's terminal progress line is its own, and there is none off a terminal.
    assert cli_kwargs == tool_kwargs == {"progress": None}
    cli_root, cli_stream, cli_options = cli_args
    tool_root, tool_stream, tool_options = tool_args
    assert (tool_root, tool_options) == (cli_root, cli_options)
    # The same ops, each on the same line number, so every message names the same line.
    assert decode_ops(tool_stream) == decode_ops(cli_stream)
    assert len(decode_ops(tool_stream)) == len(OPS)


def test_a_partial_batch_answers_as_an_error_as_the_cli_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = {"results": [], "partial": True, "stored": True}
    intercept(monkeypatch, "memhtml.operations.apply:apply", ApplyAnswer(data, partial=True))
    result = call_tool(tmp_path, "memory_write_batch", {"ops": OPS, "continue_on_error": True})
    assert result.is_error and result.structured_content == data
