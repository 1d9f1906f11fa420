"""Failures through the MCP door: typed, the CLI's own envelope, never a generic error, never a
write that looks stored when it is not.

The CLI is the reference: for the same bad input the tool result must carry the same code (usage
errors) or the very envelope the CLI prints (operation errors), and nothing may change in git.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from memhtml.cli.entry import run
from memhtml.contracts.errors import StorageFailure
from memhtml.mcp.answers import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, resource_crash, resource_error
from memhtml.mcp.resources import read_resource
from memhtml.mcp.server import call_tool
from tests.conftest import commit_count, memory_files, run_cli

WRITE = {"title": "Pool", "memory_type": "semantic", "body": "The pool holds 8."}
WRITE_ARGV = ["write", "--title", "Pool", "--type", "semantic", "--claim", "The pool holds 8."]


def tool_failure(root: Path, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call_tool(root, tool, arguments)
    assert result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def cli_failure(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status = run(argv)
    envelope = json.loads(capsys.readouterr().out)
    assert isinstance(envelope, dict)
    return status, envelope


# (tool, arguments, CLI command line, the code both must answer)
USAGE_CASES = [
    ("memory_write", {**WRITE, "importance": 11}, [*WRITE_ARGV, "--importance", "11"], "ERR_INVALID_FLAG"),
    ("memory_write", {**WRITE, "importance": 0}, [*WRITE_ARGV, "--importance", "0"], "ERR_INVALID_FLAG"),
    ("memory_write", {**WRITE, "confidence": 1.5}, [*WRITE_ARGV, "--confidence", "1.5"], "ERR_INVALID_FLAG"),
    ("memory_write", {**WRITE, "entities": ["checkout"]}, [*WRITE_ARGV, "--entity", "checkout"], "ERR_INVALID_FLAG"),
    ("memory_write", {**WRITE, "event_at": "tomorrow"}, [*WRITE_ARGV, "--event-at", "tomorrow"], "ERR_INVALID_FLAG"),
    ("memory_write", {**WRITE, "memory_type": "fact"}, [*WRITE_ARGV, "--type", "fact"], "ERR_INVALID_FLAG"),
    ("memory_write", {**WRITE, "title": "   "}, [*WRITE_ARGV, "--title", "   "], "ERR_MISSING_ARGUMENT"),
    (
        "memory_write",
        {**WRITE, "article_html": "<p><mark>x</mark></p>"},
        [*WRITE_ARGV, "--article-html", "<p><mark>x</mark></p>"],
        "ERR_INVALID_FLAG",
    ),
    (
        "memory_write",
        {"title": "Pool", "memory_type": "semantic", "body": " "},
        ["write", "--title", "Pool", "--type", "semantic", "--claim", " "],
        "ERR_MISSING_ARGUMENT",
    ),
    ("memory_search", {"query": "pool", "limit": 0}, ["search", "pool", "--limit", "0"], "ERR_INVALID_FLAG"),
    ("memory_search", {"query": "pool", "limit": 201}, ["search", "pool", "--limit", "201"], "ERR_INVALID_FLAG"),
    (
        "memory_search",
        {"query": "pool", "as_of": "last week"},
        ["search", "pool", "--as-of", "last week"],
        "ERR_INVALID_FLAG",
    ),
    (
        "memory_search",
        {"query": "pool", "memory_types": ["arc"]},
        ["search", "pool", "--type", "arc"],
        "ERR_INVALID_FLAG",
    ),
    ("memory_search", {"query": "pool", "facets": ["=x"]}, ["search", "pool", "--facet", "=x"], "ERR_INVALID_FLAG"),
    ("memory_search", {"query": "  "}, ["search", "  "], "ERR_MISSING_ARGUMENT"),
    ("memory_recall", {"query": "pool", "budget_chars": -1}, ["recall", "pool", "--budget", "-1"], "ERR_INVALID_FLAG"),
    (
        "memory_neighbors",
        {"path": "areas/a.html", "depth": 3},
        ["neighbors", "areas/a.html", "--depth", "3"],
        "ERR_INVALID_FLAG",
    ),
    (
        "memory_link",
        {"src_path": "areas/a.html", "rel": "likes", "dst_path": "areas/b.html"},
        ["link", "areas/a.html", "likes", "areas/b.html"],
        "ERR_INVALID_FLAG",
    ),
    ("memory_list", {"para": "inbox"}, ["list", "--para", "inbox"], "ERR_INVALID_FLAG"),
    ("memory_list", {"limit": 1001}, ["list", "--limit", "1001"], "ERR_INVALID_FLAG"),
    (
        "memory_archive",
        {"path": "areas/a.html", "reason": " "},
        ["archive", "areas/a.html", "--reason", " "],
        "ERR_MISSING_ARGUMENT",
    ),
    (
        "memory_reinforce",
        {"paths": ["areas/a.html"], "signal": "great"},
        ["reinforce", "areas/a.html", "--signal", "great"],
        "ERR_INVALID_FLAG",
    ),
    (
        "task_add",
        {"title": "T", "status": "later"},
        ["task", "add", "--title", "T", "--status", "later"],
        "ERR_INVALID_FLAG",
    ),
    ("task_add", {"title": "T", "due": "soon"}, ["task", "add", "--title", "T", "--due", "soon"], "ERR_INVALID_FLAG"),
    (
        "task_status",
        {"path": "areas/inbox/tasks/t.html", "status": "finished"},
        ["task", "status", "areas/inbox/tasks/t.html", "finished"],
        "ERR_INVALID_FLAG",
    ),
    ("task_list", {"due_before": "2026-13-01"}, ["task", "list", "--due-before", "2026-13-01"], "ERR_INVALID_FLAG"),
]


@pytest.mark.parametrize(("tool", "arguments", "argv", "code"), USAGE_CASES)
def test_a_bad_value_gets_the_code_the_cli_gives_and_changes_nothing(
    tool: str,
    arguments: dict[str, Any],
    argv: list[str],
    code: str,
    store_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    commits, files = commit_count(store_root), memory_files(store_root)
    status, cli = cli_failure([*argv, "--repo", str(store_root)], capsys)
    assert status == 2 and cli["code"] == code
    envelope = tool_failure(store_root, tool, arguments)
    assert envelope["code"] == code
    assert envelope["retryable"] is False
    # A write refused before any I/O says so in the same keys as the CLI's refusal.
    assert {key: envelope.get(key) for key in ("stored", "outcome")} == {
        key: cli.get(key) for key in ("stored", "outcome")
    }
    assert commit_count(store_root) == commits and memory_files(store_root) == files


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({**WRITE, "importance": "7"}, "importance must be an integer"),
        ({**WRITE, "importance": 7.5}, "importance must be an integer"),
        ({**WRITE, "tags": "db"}, "tags must be an array of strings"),
        ({**WRITE, "strict_path": "yes"}, "strict_path must be a boolean"),
        ({**WRITE, "memory_type": "arc"}, "memory_type must be one of"),
        ({**WRITE, "colour": "red"}, "unknown argument `colour`"),
        ({**WRITE, "strength": 0.5}, "unknown argument `strength`"),
    ],
)
def test_argument_types_are_checked_before_anything_runs(
    arguments: dict[str, Any], problem: str, store_root: Path
) -> None:
    commits = commit_count(store_root)
    envelope = tool_failure(store_root, "memory_write", arguments)
    assert envelope["code"] == "ERR_INVALID_FLAG" and problem in envelope["error"]
    assert envelope["stored"] is False and envelope["outcome"] == "refused"
    assert commit_count(store_root) == commits


def test_null_means_absent_and_integral_numbers_are_integers(store_root: Path) -> None:
    result = call_tool(store_root, "memory_write", {**WRITE, "importance": 7.0, "workspace": None, "tags": None})
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict) and result.structured_content["stored"] is True
    assert (
        '<meta name="memhtml-importance" content="7">' in (store_root / result.structured_content["path"]).read_text()
    )


def test_unknown_tools_and_malformed_batches_are_usage_errors(store_root: Path) -> None:
    assert tool_failure(store_root, "memory_wrte", {})["code"] == "ERR_UNKNOWN_COMMAND"
    assert "memory_write" in tool_failure(store_root, "memory_wrte", {})["suggestions"]
    assert tool_failure(store_root, "memory_write_batch", {"ops": []})["code"] == "ERR_MISSING_ARGUMENT"
    assert tool_failure(store_root, "memory_write_batch", {"ops": ["x"]})["code"] == "ERR_INVALID_FLAG"
    unknown_field = tool_failure(store_root, "memory_write_batch", {"ops": [{**WRITE, "colour": "red"}]})
    assert unknown_field["code"] == "ERR_INVALID_FLAG" and "line 1" in unknown_field["error"]


def test_an_operation_failure_is_the_envelope_the_cli_prints(
    store_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, cli = cli_failure(["read", "areas/inbox/missing.html", "--repo", str(store_root)], capsys)
    assert status == 1
    assert tool_failure(store_root, "memory_read", {"path": "areas/inbox/missing.html"}) == cli
    assert cli["code"] == "ERR_PATH_NOT_FOUND"


def test_a_refused_write_is_the_cli_refusal_and_stores_nothing(
    store_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    written = call_tool(store_root, "memory_write", WRITE)
    assert isinstance(written.structured_content, dict)
    path = written.structured_content["path"]
    run_cli("archive", path, "--reason", "stale", "--repo", str(store_root))
    archived = next(name for name in memory_files(store_root) if name.startswith("archive/"))
    commits, files = commit_count(store_root), memory_files(store_root)
    status, cli = cli_failure(["archive", archived, "--reason", "again", "--repo", str(store_root)], capsys)
    assert status == 1 and cli["stored"] is False and cli["outcome"] == "refused"
    assert tool_failure(store_root, "memory_archive", {"path": archived, "reason": "again"}) == cli
    assert commit_count(store_root) == commits and memory_files(store_root) == files


def test_an_atomic_batch_abort_carries_every_op_result_like_the_cli(
    store_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ops: list[dict[str, Any]] = [
        {"title": "Ledger shards", "memory_type": "semantic", "body": "The shard count of ledger is 16."},
        {"title": "Bad", "memory_type": "semantic", "body": "Too important.", "importance": 11},
    ]
    # The same ops as the CLI's JSONL, whose field is `type` where the tool's is `memory_type`.
    lines = [
        {"op": "write", "type": op["memory_type"], **{k: v for k, v in op.items() if k != "memory_type"}} for op in ops
    ]
    stream = tmp_path / "ops.jsonl"
    stream.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    commits, files = commit_count(store_root), memory_files(store_root)
    status, cli = cli_failure(["apply", "--file", str(stream), "--repo", str(store_root)], capsys)
    assert status == 1 and cli["code"] == "ERR_INVALID_MEMORY"
    envelope = tool_failure(store_root, "memory_write_batch", {"ops": ops})
    assert envelope == cli
    assert [result["outcome"] for result in envelope["data"]["results"]] == ["skipped", "refused"]
    assert envelope["data"]["results"][1]["code"] == "ERR_INVALID_MEMORY"
    assert commit_count(store_root) == commits and memory_files(store_root) == files


def test_a_duplicate_is_not_an_error_and_not_stored(store_root: Path) -> None:
    call_tool(store_root, "memory_write", WRITE)
    commits = commit_count(store_root)
    again = call_tool(store_root, "memory_write", WRITE)
    assert not again.is_error
    assert isinstance(again.structured_content, dict)
    assert again.structured_content["stored"] is False and again.structured_content["outcome"] == "unchanged"
    assert commit_count(store_root) == commits


def test_typed_infrastructure_failures_keep_their_code_and_retryability(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def locked(*args: Any, **kwargs: Any) -> Any:
        raise StorageFailure("index is locked by another process", ["memhtml status"])

    monkeypatch.setattr("memhtml.operations.write.write", locked)
    envelope = tool_failure(store_root, "memory_write", WRITE)
    assert envelope["code"] == "ERR_STORAGE" and envelope["retryable"] is True
    assert envelope["stored"] is False and envelope["outcome"] == "failed"


def test_a_defect_is_still_one_typed_envelope(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr("memhtml.operations.status.status", broken)
    envelope = tool_failure(store_root, "memory_status", {})
    assert envelope["code"] == "ERR_UNKNOWN" and "RuntimeError" in envelope["error"]
    assert "secret internals" not in json.dumps(envelope)
    assert "stored" not in envelope  # status is not a write


def test_resource_failures_are_typed_json_rpc_errors(store_root: Path) -> None:
    written = call_tool(store_root, "memory_write", WRITE)
    assert isinstance(written.structured_content, dict)
    path = written.structured_content["path"]
    encoded = "memhtml://file/" + path.replace("/", "%2F")
    assert read_resource(store_root, encoded).contents[0].text.startswith("# Pool\n\nThe pool holds 8.")  # type: ignore[union-attr]
    cases = [
        ("memhtml://file/areas/inbox/missing.html", RESOURCE_NOT_FOUND, "ERR_PATH_NOT_FOUND"),
        (f"memhtml://at/HEAD/{path}", INVALID_PARAMS, "ERR_INVALID_FLAG"),
        (f"memhtml://at/{'0' * 40}/{path}", RESOURCE_NOT_FOUND, "ERR_PATH_NOT_FOUND"),
        ("memhtml://sleep/run-1", INVALID_PARAMS, "ERR_INVALID_FLAG"),
        ("memhtml://file/../etc/passwd", INVALID_PARAMS, "ERR_INVALID_FLAG"),
    ]
    for uri, rpc_code, code in cases:
        with pytest.raises(Exception) as raised:
            read_resource(store_root, uri)
        error = resource_error(raised.value)  # type: ignore[arg-type]
        assert isinstance(error, MCPError)
        assert (error.code, error.data["code"]) == (rpc_code, code), uri
        assert error.message.startswith(f"{code}: ")


def test_a_defect_reading_a_resource_never_puts_its_text_on_the_wire() -> None:
    error = resource_crash(RuntimeError("secret internals"))
    assert error.code == INTERNAL_ERROR and error.data["code"] == "ERR_UNKNOWN"
    assert "RuntimeError" in error.message and "secret internals" not in json.dumps(error.data) + error.message
