"""The tool table and the server's own entry: names, schemas derived from the command table, key
spelling, and how `memhtml-mcp` finds its store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from memhtml.contracts.vocabulary import MEMORY_TYPES
from memhtml.mcp.answers import snake_keys
from memhtml.mcp.server import tool_definitions
from memhtml.mcp.tools import TOOLS
from memhtml.surface.commands import command_named
from tests.mcp.stdio_session import payload, server_session
from tests.mcp.test_stdio_end_to_end import EXPECTED_TOOLS


def schemas() -> dict[str, dict[str, Any]]:
    return {tool.name: tool.input_schema for tool in tool_definitions()}


def test_the_tools_are_the_originals_plus_the_task_tools() -> None:
    assert set(schemas()) == EXPECTED_TOOLS
    assert not any(name.startswith("trace_") for name in schemas())


def test_every_tool_calls_a_command_of_the_command_table_and_says_what_it_does() -> None:
    for tool in TOOLS:
        spec = command_named(tool.command)
        assert spec is not None, tool.name
        assert tool.description.startswith(spec.summary), tool.name


def test_schemas_refuse_unknown_arguments_and_name_the_required_ones() -> None:
    found = schemas()
    for schema in found.values():
        assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert found["memory_write"]["required"] == ["title", "memory_type"]
    assert found["memory_correct"]["required"] == ["target_path", "title", "reason"]
    assert found["memory_status"]["properties"] == {}


def test_constraints_in_the_schemas_are_the_command_tables() -> None:
    found = schemas()
    write_types = found["memory_write"]["properties"]["memory_type"]["enum"]
    assert write_types == [name for name in MEMORY_TYPES if name != "arc"]
    search = command_named("search")
    search_limit = search.flag("limit") if search is not None else None
    assert search_limit is not None
    limit = found["memory_search"]["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (
        search_limit.minimum,
        search_limit.maximum,
        search_limit.default,
    )
    link_rel = command_named("link").args[1]  # type: ignore[union-attr]
    assert found["memory_link"]["properties"]["rel"]["enum"] == list(link_rel.values or ())
    assert found["memory_neighbors"]["properties"]["rels"]["items"]["enum"] == list(
        command_named("neighbors").flag("rel").values or ()  # type: ignore[union-attr]
    )


def test_read_tools_are_annotated_read_only_and_nothing_is_destructive() -> None:
    for tool in tool_definitions():
        assert tool.annotations is not None
        assert tool.annotations.destructive_hint is False
    read_only = {tool.name for tool in tool_definitions() if tool.annotations and tool.annotations.read_only_hint}
    assert "memory_search" in read_only and "memory_write" not in read_only
    assert "memory_read" not in read_only  # an explicit read counts as an access


def test_original_keys_are_snake_case_and_single_words_are_kept() -> None:
    data = {
        "existingPath": None,
        "commitSha": "abc",
        "stored": True,
        "countsByType": {"semantic": 2},
        "hits": [{"memoryType": "semantic", "supersededBy": None}],
        "existing_path": "kept",
    }
    converted = snake_keys(data)
    assert converted == {
        "existing_path": "kept",
        "commit_sha": "abc",
        "stored": True,
        "counts_by_type": {"semantic": 2},
        "hits": [{"memory_type": "semantic", "superseded_by": None}],
    }
    assert snake_keys(converted) == converted


def run_server_entry(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memhtml.mcp", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_the_entry_answers_help_and_refuses_an_implicit_root_when_told_to() -> None:
    helped = run_server_entry("--help")
    assert helped.returncode == 0 and "--repo" in helped.stdout
    refused = run_server_entry(env={"MEMHTML_REFUSE_ENV_ROOT": "1", "MEMHTML_ROOT": "/nonexistent"})
    assert refused.returncode == 2 and "ERR_REPO_REQUIRED" in refused.stderr
    assert refused.stdout == ""  # stdout belongs to JSON-RPC


def test_without_repo_the_server_serves_memhtml_root_like_the_cli(store_root: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("MEMHTML_ROOT", str(store_root))
    # The session helper passes --repo; name the root through the environment only.
    errlog = store_root.parent / "server-stderr.log"

    async def status() -> dict[str, Any]:
        async with server_session(store_root, errlog, repo_flag=False) as session:
            return payload(await session.call_tool("memory_status", {}))

    answer = anyio.run(status)
    assert Path(answer["root"]) == store_root.resolve()


def test_memhtml_serve_mcp_runs_the_same_server(store_root: Path, tmp_path: Path) -> None:
    # `memhtml serve mcp` is the CLI door to the very server `memhtml-mcp` starts.
    from mcp import ClientSession, StdioServerParameters, stdio_client

    async def list_tools() -> set[str]:
        parameters = StdioServerParameters(
            command=sys.executable,
            args=["-m", "memhtml", "serve", "mcp", "--repo", str(store_root)],
            env=dict(os.environ),
        )
        with (tmp_path / "server.err").open("w", encoding="utf-8") as errlog:
            async with stdio_client(parameters, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return {tool.name for tool in (await session.list_tools()).tools}

    assert anyio.run(list_tools) == {tool.name for tool in TOOLS}


def test_memhtml_serve_mcp_leaves_stdout_to_the_protocol(store_root: Path) -> None:
    # An MCP client parses every line of the server's stdout as JSON-RPC: the `serve.exit` envelope
    # goes to stderr once the session is over, never after the stream.
    initialize = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{},"clientInfo":{"name":"test","version":"1"}}}\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "memhtml", "serve", "mcp", "--repo", str(store_root)],
        input=initialize,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines, "the server answered nothing"
    assert all('"jsonrpc":"2.0"' in line.replace(" ", "") for line in lines), lines
    assert '"type": "serve.exit"' in done.stderr or '"type":"serve.exit"' in done.stderr, done.stderr
