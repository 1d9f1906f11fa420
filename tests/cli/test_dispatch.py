"""The handlers and the contract table describe the same command surface.

A handler reads its values by flag name from the invocation, directly, through a helper, or through the
call `memhtml.surface.calls` builds for both doors (which reads them from `args`); a misspelt name
would only fail when that command runs, so the names each handler reads are checked here against its
command's contract, both ways.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import memhtml.cli.app
import memhtml.cli.health
import memhtml.surface.calls
from memhtml.cli.dispatch import command, handler_for, registered_commands
from memhtml.surface.commands import COMMANDS, command_named

DESCRIBING = {"manifest", "help", "version"}
ACCESSORS = {"text", "texts", "flag", "integer", "number"}
HELPERS_TAKING_A_NAME = {"_text", "_integer", "_table_integer"}
# Flags the contract accepts for the original's command lines and documents as changing nothing.
ACCEPTED_AND_IGNORED = {("index rebuild", "force"), ("task list", "detected")}


def _flags_read_by_each_handler() -> dict[str, set[str]]:
    """Command name -> every flag name its handler reads, following calls into the module's helpers
    and into the shared calls of `memhtml.surface.calls` (named `calls.<function>` here)."""
    handlers: dict[str, set[str]] = {}
    direct: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    shared = _functions(memhtml.surface.calls)
    _scan(shared, "args", direct, calls, prefix="calls.")
    for module in (memhtml.cli.app, memhtml.cli.health):
        functions = _functions(module)
        _scan(functions, "invocation", direct, calls, prefix="")
        for name, function in functions.items():
            for decorator in function.decorator_list:
                if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "command":
                    for command_name in decorator.args:
                        handlers[_literal(command_name)] = _reads(name, direct, calls)
    return handlers


def _functions(module: object) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))  # type: ignore[arg-type]
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def _scan(
    functions: dict[str, ast.FunctionDef],
    arguments: str,
    direct: dict[str, set[str]],
    calls: dict[str, set[str]],
    *,
    prefix: str,
) -> None:
    """Record the names each function reads from its `arguments` variable and the functions it calls."""
    for name, function in functions.items():
        key = prefix + name
        direct[key], calls[key] = set(), set()
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            target = node.func
            if isinstance(target, ast.Attribute) and target.attr in ACCESSORS and node.args:
                reads_arguments = isinstance(target.value, ast.Name) and target.value.id == arguments
                # The name-taking helpers read whatever name their caller gives them.
                if reads_arguments and name not in HELPERS_TAKING_A_NAME:
                    direct[key].add(_literal(node.args[0]))
            elif isinstance(target, ast.Name) and target.id in HELPERS_TAKING_A_NAME:
                direct[key].add(_literal(node.args[1]))
            elif isinstance(target, ast.Name) and target.id in functions:
                calls[key].add(prefix + target.id)
            elif (
                isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "calls"
            ):
                calls[key].add("calls." + target.attr)


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
        spec = command_named(name)
        contract = {flag.name for flag in spec.flags}
        positionals = {argument.name for argument in spec.args}
        assert flags <= contract | positionals, (
            f"{name} reads flags it does not have: {sorted(flags - contract - positionals)}"
        )
        unread = {flag for flag in contract - flags if (name, flag) not in ACCEPTED_AND_IGNORED}
        assert not unread, f"{name} ignores its flags {sorted(unread)}"


def test_a_second_handler_for_one_command_is_refused() -> None:
    with pytest.raises(RuntimeError, match="two handlers"):
        command("search")(lambda responder, invocation: None)
    assert handler_for("search") is memhtml.cli.app.search_command
