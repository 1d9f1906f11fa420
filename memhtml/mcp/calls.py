"""How each tool's checked arguments become the call its CLI command makes.

One function per tool: its arguments, renamed to the command table's names (`Arguments.in_table`),
go to the same function of `memhtml.surface.calls` the CLI command calls, which builds the
operation's request once for both doors. What is the MCP door's own stays here: a batch arrives as
an `ops` array (turned into the `apply` stream), and `memory_resolve` adds a pinned citation.
Operations are imported by `surface.calls` inside its functions, so listing tools loads neither git
nor DuckDB code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from memhtml.mcp.params import Arguments
from memhtml.mcp.resources import pinned_uri
from memhtml.surface import calls


class Answer(NamedTuple):
    """An operation's data; `partial` when some of a batch was stored and some refused (CLI exit 3)."""

    data: Mapping[str, Any]
    partial: bool = False


def memory_write(root: Path, args: Arguments) -> Answer:
    return Answer(calls.write(root, args.in_table("write")).as_data())


def ops_stream(ops: Sequence[Mapping[str, Any]]) -> str:
    """The batch as the `apply` JSONL stream, one op per line, so op N is line N+1 of every message:
    `memory_type` is the MCP spelling of the stream's `type`, and `op` defaults to `write`."""
    lines = []
    for op in ops:
        renamed = {("type" if key == "memory_type" and "type" not in op else key): value for key, value in op.items()}
        lines.append(json.dumps({"op": "write", **renamed}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def memory_write_batch(root: Path, args: Arguments) -> Answer:
    answer = calls.apply(root, args.in_table("apply"), ops_stream(args.objects("ops")))
    return Answer(answer.data, partial=answer.partial)


def memory_read(root: Path, args: Arguments) -> Answer:
    return Answer(calls.read(root, args.in_table("read")))


def memory_search(root: Path, args: Arguments) -> Answer:
    return Answer(calls.search(root, args.in_table("search")))


def memory_recall(root: Path, args: Arguments) -> Answer:
    return Answer(calls.recall(root, args.in_table("recall")))


def memory_correct(root: Path, args: Arguments) -> Answer:
    return Answer(calls.correct(root, args.in_table("correct")))


def memory_link(root: Path, args: Arguments) -> Answer:
    return Answer(calls.link(root, args.in_table("link")))


def memory_neighbors(root: Path, args: Arguments) -> Answer:
    return Answer(calls.neighbors(root, args.in_table("neighbors")))


def memory_resolve(root: Path, args: Arguments) -> Answer:
    resolved = calls.resolve(root, args.in_table("resolve"))
    return Answer({**resolved, "pinnedUri": pinned_uri(resolved)})


def memory_archive(root: Path, args: Arguments) -> Answer:
    return Answer(calls.archive(root, args.in_table("archive")))


def memory_reinforce(root: Path, args: Arguments) -> Answer:
    return Answer(calls.reinforce(root, args.in_table("reinforce")))


def memory_list(root: Path, args: Arguments) -> Answer:
    return Answer(calls.list_memories(root, args.in_table("list")))


def memory_status(root: Path, args: Arguments) -> Answer:
    return Answer(calls.status(root, args.in_table("status")))


def task_add(root: Path, args: Arguments) -> Answer:
    return Answer(calls.task_add(root, args.in_table("task add")))


def task_status(root: Path, args: Arguments) -> Answer:
    return Answer(calls.task_status(root, args.in_table("task status")))


def task_list(root: Path, args: Arguments) -> Answer:
    return Answer(calls.task_list(root, args.in_table("task list")))
