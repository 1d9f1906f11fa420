"""Driving the real `memhtml-mcp` server as a child process with the SDK's own stdio client, and
reading what a tool result says (its JSON text and its structured content must agree)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent


@asynccontextmanager
async def server_session(root: Path, errlog_path: Path, *, repo_flag: bool = True) -> AsyncIterator[ClientSession]:
    """An initialized client session with `python -m memhtml.mcp --repo ROOT` (without `--repo` the
    server resolves its root as the CLI does), in this process's (hermetic) environment; the server's
    stderr goes to `errlog_path` for failure diagnostics."""
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memhtml.mcp", *(["--repo", str(root)] if repo_flag else [])],
        env=dict(os.environ),
        cwd=str(root.parent),
    )
    with errlog_path.open("w", encoding="utf-8") as errlog:
        async with stdio_client(parameters, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def payload(result: CallToolResult) -> dict[str, Any]:
    """The result's structured content, checked against its text content (one JSON text block)."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    text_value = json.loads(block.text)
    assert text_value == result.structured_content
    assert isinstance(text_value, dict)
    return text_value


def server_pids(root: Path) -> list[int]:
    """The ids of this process's children serving `root` (read from /proc: Linux only)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"memhtml.mcp" in command and str(root).encode() in command:
            found.append(int(entry.name))
    return found


def open_database_files(pid: int) -> list[str]:
    """The DuckDB files (and their write-ahead logs) process `pid` has open right now."""
    names = []
    for descriptor in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(descriptor)
        except OSError:
            continue
        if ".duckdb" in target:
            names.append(target)
    return names
