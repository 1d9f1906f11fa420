"""A call's checked arguments as both doors hand them to `surface.calls`: read by the command table's
names (a flag's name, `tag`, `event-at`; a positional's, `path`, `query`), absent ones as the table's
default.

The CLI's parsed command line reads this way already (`cli.grammar.Invocation`); the MCP door spells
its arguments in snake_case and sometimes in the plural (`tags`, `include_archived`) and turns them
into a `TableArguments` first. Either way the request an operation receives is built once, in
`surface.calls`, from the same names and the same defaults.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from memhtml.surface.command_shapes import CommandSpec, FlagSpec

ArgumentValue = str | int | float | bool | Sequence[str] | None


class CallArguments(Protocol):
    """Typed reads of a checked call by the command table's names; absent means the table's default."""

    def text(self, name: str) -> str | None: ...

    def texts(self, name: str) -> list[str]: ...

    def integer(self, name: str) -> int | None: ...

    def number(self, name: str) -> float | None: ...

    def flag(self, name: str) -> bool: ...


class TableArguments:
    """Values keyed by the command table's names (the door renamed them), with the table's defaults.

    A name the command does not have is a defect of the door's renaming, so it raises KeyError rather
    than reading as absent.
    """

    __slots__ = ("_command", "_values")

    def __init__(self, command: CommandSpec, values: Mapping[str, ArgumentValue]) -> None:
        self._command = command
        self._values = dict(values)
        unknown = [name for name in values if not self._known(name)]
        if unknown:
            raise KeyError(f"{', '.join(unknown)} not a flag or argument of {command.name}")

    def text(self, name: str) -> str | None:
        value = self._value(name)
        return value if isinstance(value, str) else None

    def texts(self, name: str) -> list[str]:
        value = self._value(name)
        if isinstance(value, str):
            return [value]
        return list(value) if isinstance(value, Sequence) else []

    def integer(self, name: str) -> int | None:
        value = self._value(name)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    def number(self, name: str) -> float | None:
        value = self._value(name)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    def flag(self, name: str) -> bool:
        return self._value(name) is True

    def _value(self, name: str) -> ArgumentValue:
        if not self._known(name):
            raise KeyError(f"{name} is not a flag or argument of {self._command.name}")
        value = self._values.get(name)
        if value is not None:
            return value
        flag = self._command.flag(name)
        return flag.default if isinstance(flag, FlagSpec) else None

    def _known(self, name: str) -> bool:
        return self._command.flag(name) is not None or any(arg.name == name for arg in self._command.args)
