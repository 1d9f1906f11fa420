"""The handlers and the contract table describe the same command surface.

A handler reads its values by flag name from the invocation; a misspelt name would only fail when
that command runs, so the names each handler reads (directly or through a helper) are checked here
against its command's contract, both ways.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import memhtml.cli.app
import memhtml.cli.health
from memhtml.cli.dispatch import command, handler_for, registered_commands
from memhtml.surface.commands import COMMANDS, command_named

DESCRIBING = {"manifest", "help"}
ACCESSORS = {"text", "texts", "flag", "integer", "number"}
HELPERS_TAKING_A_NAME = {"_text", "_integer"}
# Flags the contract accepts for the original's command lines and documents as changing nothing.
ACCEPTED_AND_IGNORED = {("index rebuild", "force"), ("task list", "detected")}


def _flags_read_by_each_handler() -> dict[str, set[str]]:
    """Command name -> every flag name its handler reads, following calls into the module's helpers."""
    handlers: dict[str, set[str]] = {}
    for module in (memhtml.cli.app, memhtml.cli.health):
        tree = ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))
        functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
        direct: dict[str, set[str]] = {}
        calls: dict[str, set[str]] = {}
        for name, function in functions.items():
            direct[name], calls[name] = set(), set()
            for node in ast.walk(function):
                if not isinstance(node, ast.Call):
                    continue
                target = node.func
                if isinstance(target, ast.Attribute) and target.attr in ACCESSORS and node.args:
                    reads_invocation = isinstance(target.value, ast.Name) and target.value.id == "invocation"
                    # The name-taking helpers read whatever name their caller gives them.
                    if reads_invocation and name not in HELPERS_TAKING_A_NAME:
                        direct[name].add(_literal(node.args[0]))
                elif isinstance(target, ast.Name) and target.id in HELPERS_TAKING_A_NAME:
                    direct[name].add(_literal(node.args[1]))
                elif isinstance(target, ast.Name) and target.id in functions:
                    calls[name].add(target.id)
        for name, function in functions.items():
            for decorator in function.decorator_list:
                if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "command":
                    for command_name in decorator.args:
                        handlers[_literal(command_name)] = _reads(name, direct, calls)
    return handlers


def _reads(
    name: str, direct: dict[str, set[str]], calls: dict[str, set[str]], seen: frozenset[str] = frozenset()
) -> set[str]:
    """The flags function `name` reads itself and through the functions it calls."""
    found = set(direct[name])
    for callee in calls[name] - seen:
        found |= _reads(callee, direct, calls, seen | {name})
    return found


def _literal(node: ast.expr) -> str:
    assert isinstance(node, ast.Constant) and isinstance(node.value, str), ast.dump(node)
    return node.value


def test_every_command_that_runs_has_exactly_one_handler() -> None:
    assert registered_commands() == {spec.name for spec in COMMANDS if spec.name not in DESCRIBING}
    assert handler_for("manifest") is None and handler_for("no such command") is None


def test_each_handler_reads_exactly_the_flags_of_its_command() -> None:
    read = _flags_read_by_each_handler()
    assert set(read) == registered_commands()
    for name, flags in read.items():
        contract = {flag.name for flag in command_named(name).flags}
        assert flags <= contract, f"{name} reads flags it does not have: {sorted(flags - contract)}"
        unread = {flag for flag in contract - flags if (name, flag) not in ACCEPTED_AND_IGNORED}
        assert not unread, f"{name} ignores its flags {sorted(unread)}"


def test_a_second_handler_for_one_command_is_refused() -> None:
    with pytest.raises(RuntimeError, match="two handlers"):
        command("search")(lambda responder, invocation: None)
    assert handler_for("search") is memhtml.cli.app.search_command
