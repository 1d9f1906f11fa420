"""The pieces the MCP door states for itself (it sits below the CLI and may not import it) agree with
the CLI's own: which tools are writes, the failure envelope, and which argument values are refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memhtml.cli.envelope import failure as cli_failure
from memhtml.cli.envelope import unexpected_failure as cli_unexpected_failure
from memhtml.cli.grammar_values import value_problem as cli_value_problem
from memhtml.contracts.errors import (
    BatchAborted,
    InvalidMemory,
    LockTimeout,
    MemhtmlError,
    PathNotFound,
    StorageFailure,
    UsageError,
)
from memhtml.mcp.answers import crashed, failure
from memhtml.mcp.params import value_problem
from memhtml.mcp.tools import TOOLS
from memhtml.surface.commands import COMMANDS

ERRORS: list[MemhtmlError] = [
    UsageError("ERR_INVALID_FLAG", "bad value", ["memhtml help write"]),
    PathNotFound("no memory at areas/a.html", ["memhtml status"]),
    InvalidMemory("invalid memory: x", []),
    StorageFailure("index locked", ["memhtml index update"]),
    LockTimeout("store lock held", ["retry"]),
    BatchAborted(
        InvalidMemory("invalid memory: op 1", []), "apply: op 1 was refused", {"results": [], "partial": False}
    ),
    PathNotFound("retry me", [], retryable=True),
]


# The original's write commands: a failure of one of them says `stored: false` and its outcome.
WRITE_COMMANDS = {"write", "apply", "batch", "correct", "archive", "link", "task add", "task status"}
# Commands that change the store without writing memories: their exit status says what landed.
CHANGE_COMMANDS = {"init", "reinforce", "doctor", "state export", "state import", "hooks install", "hooks uninstall"}


def test_the_table_says_which_commands_write_and_which_change_the_store() -> None:
    assert {command.name for command in COMMANDS if command.writes_memories} == WRITE_COMMANDS
    assert {command.name for command in COMMANDS if command.changes_store} == WRITE_COMMANDS | CHANGE_COMMANDS


def test_every_tool_is_a_write_exactly_when_its_cli_command_is() -> None:
    writing_tools = {tool.name for tool in TOOLS if tool.writes}
    assert writing_tools == {tool.name for tool in TOOLS if tool.command in WRITE_COMMANDS}
    assert writing_tools == {
        "memory_write", "memory_write_batch", "memory_correct", "memory_link", "memory_archive", "task_add",
        "task_status",
    }  # fmt: skip


@pytest.mark.parametrize("error", ERRORS, ids=lambda error: type(error).__name__)
@pytest.mark.parametrize("write", [True, False])
def test_the_failure_envelope_is_the_clis(error: MemhtmlError, write: bool) -> None:
    assert failure(error, write_tool=write) == cli_failure(error, write_command=write)


@pytest.mark.parametrize("write", [True, False])
def test_a_defect_answers_the_clis_unexpected_envelope(write: bool) -> None:
    defect = KeyError("secret")
    result = crashed(defect, write_tool=write)
    assert result.is_error
    assert result.structured_content == cli_unexpected_failure(defect, write_command=write)


def candidates(kind: str, rule: Any) -> list[Any]:
    """Values on and around every boundary the rule draws, plus malformed ones."""
    if kind == "integer":
        bounds = [bound for bound in (rule.minimum, rule.maximum) if bound is not None]
        return sorted({value for bound in bounds for value in (bound - 1, bound, bound + 1)} | {0, -1, 7, 10**12})
    if kind == "number":
        return [-0.5, -0.0, 0, 0.125, 0.5, 1, 1.0, 1.5, 1e-9, 2]
    texts = [
        "", " ", "bogus", "a:b", "a:", ":b", " : ", "a=b", "a=", "=b", "a==b", "2026-08-24", "2026-13-01",
        "2026-08-24T13:00:00Z", "2026-08-24T25:00:00Z", "abcd", "abc", "ABCDEF12", "HEAD", "last-wins",
    ]  # fmt: skip
    return texts + list(rule.values or ())


def cli_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def test_the_same_values_are_refused_as_on_the_command_line() -> None:
    checked = 0
    for tool in TOOLS:
        for param in tool.params:
            if param.rule is None:
                continue
            kind = "string" if param.kind == "strings" else param.kind
            for value in candidates(kind, param.rule):
                ours = value_problem(param.name, param.rule, value)
                theirs = cli_value_problem(param.rule, cli_text(value))
                assert (ours is None) == (theirs is None), (tool.name, param.name, value, ours, theirs)
                if ours is not None and theirs is not None:
                    # The same reason, naming the argument where the CLI names the flag, and showing
                    # the JSON value (7) where the CLI shows the text it was given ("7").
                    expected = param.name + theirs[0].removeprefix(f"--{param.rule.name}")
                    assert ours[0] == expected.replace(json.dumps(cli_text(value)), json.dumps(value))
                checked += 1
    assert checked > 500
