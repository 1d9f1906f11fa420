"""The typer commands and the contract table describe the same command surface."""

from __future__ import annotations

import inspect
from typing import Any

import typer.main

from memhtml.cli.app import app
from memhtml.contracts.commands import COMMANDS

DESCRIBING = {"manifest", "help"}


def test_every_command_that_runs_has_a_typer_command_with_the_same_flags() -> None:
    group = typer.main.get_command(app)
    commands: dict[str, Any] = {}
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        nested = getattr(command, "commands", None)
        if nested:  # a two-word family such as `index rebuild`
            commands.update({f"{name} {sub}": subcommand for sub, subcommand in nested.items()})
        else:
            commands[name] = command
    table = {spec.name: spec for spec in COMMANDS if spec.name not in DESCRIBING}
    assert sorted(commands) == sorted(table)
    for name, spec in table.items():
        command = commands[name]
        options = {
            param.opts[0].removeprefix("--"): param for param in command.params if param.param_type_name == "option"
        }
        arguments = [param.name for param in command.params if param.param_type_name == "argument"]
        assert sorted(options) == sorted(flag.name for flag in spec.flags), name
        # A command that reads stdin takes the optional `-` marker, which the contract does not list.
        stdin = ["stdin_marker"] if spec.reads_stdin else []
        assert arguments == [arg.name.replace("-", "_") for arg in spec.args] + stdin, name
        for flag in spec.flags:
            option = options[flag.name]
            assert option.multiple == flag.repeatable, (name, flag.name)
            assert option.is_flag == (flag.type == "boolean"), (name, flag.name)


def test_every_command_is_dispatched_alone_with_its_own_parameters() -> None:
    """The entry point builds only the named command; that one must be the same command the whole app
    would have dispatched to, so nothing falls back to the slow path or picks a namesake."""
    from memhtml.cli.app import command_app

    whole = typer.main.get_command(app)
    for spec in COMMANDS:
        if spec.name in DESCRIBING:
            continue
        words = spec.name.split()
        single, consumed = command_app(words)
        assert consumed == len(words), spec.name
        built = typer.main.get_command(single)
        expected: Any = whole
        for word in words:
            expected = expected.commands[word]
        assert inspect.unwrap(built.callback) is inspect.unwrap(expected.callback), spec.name
        assert [param.name for param in built.params] == [param.name for param in expected.params], spec.name
    assert command_app(["no-such-command"]) == (app, 0)
