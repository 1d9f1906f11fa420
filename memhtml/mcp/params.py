"""Tool arguments: their declaration, their JSON Schema, and the checks a call's arguments pass before
any operation runs.

A value's rules (closed vocabulary, integer or number range, instant, `type:name`, `name=value`,
non-blank) are not restated here: each argument points at the CLI flag or positional of the command
table that carries them, and the checks below read them from there, so both doors refuse the same
values with the same code (ERR_INVALID_FLAG, ERR_MISSING_ARGUMENT). The checking code is the MCP
door's own because its input is typed JSON (an integer arrives as an integer), where the CLI's
grammar parses command-line text first; tests hold the two doors to the same answers.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, NamedTuple

from memhtml.contracts.errors import UsageError
from memhtml.contracts.instants import is_sortable_instant
from memhtml.domain.nearest import nearest
from memhtml.surface.arguments import ArgumentValue, TableArguments
from memhtml.surface.commands import FlagSpec, command_named

INVALID: Final = "ERR_INVALID_FLAG"
MISSING: Final = "ERR_MISSING_ARGUMENT"

# `strings` is an array of strings, `objects` an array of JSON objects (the ops of a batch).
Kind = Literal["string", "integer", "number", "boolean", "strings", "objects"]

# A full or abbreviated commit sha, as `--as-of` admits one: git abbreviates to no fewer than 4 digits.
_COMMIT_SHA: Final = re.compile(r"^[0-9a-fA-F]{4,40}$")
_INSTANT_GRAMMAR: Final = "an ISO date or datetime (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)"
_INSTANT_EXAMPLES: Final = ("2026-08-24", "2026-08-24T13:00:00Z")
_INSTANT_REASON: Final = (
    "the point-in-time window compares it as a string, so a value outside that grammar selects a "
    "different window rather than failing"
)

_JSON_TYPES: Final[dict[Kind, str]] = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "strings": "an array of strings",
    "objects": "an array of JSON objects",
}


# How an MCP `body` of prose becomes the command's flags: the claim (its first sentence) and paragraphs, as
# an `apply` op's body does (`write`, `correct`), or paragraphs only (`task add`, which has its own claim).
Prose = Literal["claim-and-paragraphs", "paragraphs"]


class Param(NamedTuple):
    """One tool argument. `rule` is the command-table flag whose value rules the argument obeys.

    `table_name` is the flag or positional of the tool's command this argument is spelled for (by default
    the rule's name, else the argument's own with `_` as `-`). A `door_only` argument has none: the door
    turns it into something else itself (a batch's `ops` into the stream `apply` reads).
    """

    name: str
    kind: Kind
    description: str
    required: bool = False
    rule: FlagSpec | None = None
    default: str | int | bool | None = None
    items: Mapping[str, Any] | None = None  # the JSON Schema of one element of an `objects` array
    table_name: str | None = None
    prose: Prose | None = None
    door_only: bool = False

    @property
    def name_in_table(self) -> str | None:
        if self.door_only:
            return None
        if self.table_name is not None:
            return self.table_name
        return self.rule.name if self.rule is not None else self.name.replace("_", "-")

    def schema(self) -> dict[str, Any]:
        """This argument's JSON Schema, its constraints projected from the same rule that checks it."""
        if self.kind == "strings":
            element: dict[str, Any] = {"type": "string"}
            if self.rule is not None and self.rule.values is not None:
                element["enum"] = list(self.rule.values)
            schema: dict[str, Any] = {"type": "array", "items": element}
        elif self.kind == "objects":
            schema = {"type": "array", "items": dict(self.items or {"type": "object"}), "minItems": 1}
        else:
            schema = {"type": self.kind}
            if self.rule is not None and self.rule.values is not None:
                schema["enum"] = list(self.rule.values)
            if self.rule is not None and self.kind in ("integer", "number"):
                if self.rule.minimum is not None:
                    schema["minimum"] = self.rule.minimum
                if self.rule.maximum is not None:
                    schema["maximum"] = self.rule.maximum
        schema["description"] = self.description
        if self.default is not None:
            schema["default"] = self.default
        return schema


def flag_rule(command: str, flag: str, **overrides: Any) -> FlagSpec:
    """The value rules of `command`'s `--flag` in the command table, optionally narrowed."""
    spec = command_named(command)
    found = spec.flag(flag) if spec is not None else None
    if found is None:
        raise LookupError(f"the command table has no --{flag} on {command}")
    return found._replace(**overrides) if overrides else found


def positional_rule(command: str, argument: str) -> FlagSpec:
    """A positional's closed vocabulary as a flag rule (`link`'s rel, `task status`'s status)."""
    spec = command_named(command)
    found = next((arg for arg in spec.args if arg.name == argument), None) if spec is not None else None
    if found is None:
        raise LookupError(f"the command table has no <{argument}> on {command}")
    return FlagSpec(found.name, "string", found.description, values=found.values)


def input_schema(params: Sequence[Param]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {param.name: param.schema() for param in params},
        "required": [param.name for param in params if param.required],
        "additionalProperties": False,
    }


class Arguments:
    """A call's arguments after every check passed; absent (or null) ones read as their default."""

    def __init__(self, params: Sequence[Param], values: Mapping[str, Any]) -> None:
        self._params = {param.name: param for param in params}
        self._values = dict(values)

    def text(self, name: str) -> str | None:
        value = self._get(name)
        return value if isinstance(value, str) else None

    def texts(self, name: str) -> list[str]:
        return list(self._get(name) or [])

    def integer(self, name: str) -> int | None:
        value = self._get(name)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    def number(self, name: str) -> float | None:
        value = self._get(name)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    def flag(self, name: str) -> bool:
        return self._get(name) is True

    def objects(self, name: str) -> list[dict[str, Any]]:
        return [dict(item) for item in self._get(name) or []]

    def in_table(self, command: str) -> TableArguments:
        """The given arguments under the names of `command`'s flags and positionals, for
        `memhtml.surface.calls`; absent ones read as the command table's defaults there."""
        from memhtml.html.prose import split_apply_body, split_paragraphs

        spec = command_named(command)
        if spec is None:
            raise LookupError(f"the command table has no {command}")
        values: dict[str, ArgumentValue] = {}
        for name, value in self._values.items():
            param = self._params[name]
            if param.prose == "claim-and-paragraphs":
                values["claim"], values["body"] = split_apply_body(value)
            elif param.prose == "paragraphs":
                values["body"] = split_paragraphs(value)
            elif param.name_in_table is not None:
                values[param.name_in_table] = value
        return TableArguments(spec, values)

    def _get(self, name: str) -> Any:
        param = self._params[name]  # a KeyError here is a defect of the tool table, not of the call
        return self._values.get(name, param.default)


def check_arguments(
    tool: str,
    params: Sequence[Param],
    raw: Mapping[str, Any] | None,
    exactly_one: tuple[str, str] | None = None,
) -> Arguments:
    """The call's arguments, or the UsageError of the first problem, in the CLI grammar's order:
    unknown names, JSON types, required ones, the exactly-one pair, then every value (instants first)."""
    known = {param.name: param for param in params}
    given = {name: value for name, value in (raw or {}).items() if value is not None}
    for name in given:
        if name not in known:
            hints = nearest(name, list(known))
            raise UsageError(
                INVALID,
                f"{tool}: unknown argument `{name}`. Arguments: {', '.join(known) or 'none'}",
                [f"{tool} with `{hint}`" for hint in hints],
                command=tool,
            )
    for name, value in given.items():
        _check_type(tool, known[name], value)
    missing = [param.name for param in params if param.required and _blank(given.get(param.name))]
    if missing:
        raise UsageError(
            MISSING,
            f"{tool} requires: {', '.join(missing)}",
            [f"{tool} with `{name}`" for name in missing],
            command=tool,
        )
    if exactly_one is not None:
        _check_exactly_one(tool, exactly_one, given)
    for instants in (True, False):
        for param in params:
            if param.rule is not None and param.rule.instant == instants and param.name in given:
                _check_values(tool, param, given[param.name])
    return Arguments(params, given)


def _blank(value: Any) -> bool:
    """Absent, a whitespace-only string or an empty array: the CLI counts blank text as missing."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    return isinstance(value, list) and not value


def _check_type(tool: str, param: Param, value: Any) -> None:
    if not _has_kind(param.kind, value):
        raise UsageError(
            INVALID,
            f"{tool}: {param.name} must be {_JSON_TYPES[param.kind]}, not {_shown(value)}",
            [f"{tool} with `{param.name}` as {_JSON_TYPES[param.kind]}"],
            command=tool,
        )


def _has_kind(kind: Kind, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        # JSON has one number type: 7.0 is the integer 7 (JSON Schema agrees), 7.5 is not.
        return _is_number(value) and float(value).is_integer()
    if kind == "number":
        return _is_number(value)
    if kind == "strings":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_exactly_one(tool: str, pair: tuple[str, str], given: dict[str, Any]) -> None:
    """Exactly one of the pair must carry text; a blank one counts as absent and is dropped."""
    filled = [name for name in pair if not _blank(given.get(name))]
    if len(filled) == 2:
        raise UsageError(
            INVALID,
            f"{tool} takes exactly one of {pair[0]} or {pair[1]}, not both: {pair[1]} is the whole article, "
            f"so a {pair[0]} beside it would be silently discarded",
            [f"{tool} with `{name}` only" for name in pair],
            command=tool,
        )
    if not filled:
        raise UsageError(
            MISSING,
            f"{tool} requires exactly one of {pair[0]} or {pair[1]}",
            [f"{tool} with `{name}`" for name in pair],
            command=tool,
        )
    for name in pair:
        if name not in filled:
            given.pop(name, None)


def _check_values(tool: str, param: Param, value: Any) -> None:
    assert param.rule is not None
    for item in value if isinstance(value, list) else [value]:
        problem = value_problem(param.name, param.rule, item)
        if problem is None:
            continue
        message, hints = problem
        raise UsageError(
            INVALID,
            f"{tool}: {message}",
            [f"{tool} with {param.name}={hint}" for hint in hints] or [f"{tool} with a valid `{param.name}`"],
            command=tool,
        )


def value_problem(name: str, rule: FlagSpec, value: Any) -> tuple[str, list[str]] | None:
    """Why the (already type-checked) `value` breaks `rule`, with example values, or None when it is
    admitted; in the CLI grammar's order: instants, the vocabulary, the range, then the formats."""
    shown = _shown(value)
    if rule.value_format == "instant" and not is_sortable_instant(value):
        return f"{name} must be {_INSTANT_GRAMMAR}, not {shown}", list(_INSTANT_EXAMPLES)
    if rule.value_format == "instant-or-commit" and not (is_sortable_instant(value) or _COMMIT_SHA.match(value)):
        return (
            f"{name} must be {_INSTANT_GRAMMAR} or a commit sha (4 to 40 hex digits), not {shown}: {_INSTANT_REASON}",
            [*_INSTANT_EXAMPLES, "<commit-sha>"],
        )
    if rule.values is not None and value not in rule.values:
        return f"{name} must be one of: {', '.join(rule.values)}", []
    if _is_number(value) and not _in_range(rule, value):
        return f"{name} must be {_range_words(rule)}, not {shown}", [_range_hint(rule)]
    if rule.value_format == "entity" and not _is_pair(value, ":", both=True):
        return (
            f"{name} must be a `type:name` entity reference (a non-empty type, a colon, a non-empty name), not {shown}",
            ["<type>:<name>"],
        )
    if rule.value_format == "facet" and not _is_pair(value, "=", both=False):
        return (
            f"{name} must be a `name=value` facet (a non-empty name, an `=`, then the value, which may itself "
            f"contain `=`), not {shown}",
            ["<name>=<value>"],
        )
    if rule.value_format == "nonblank" and not value.strip():
        return f"{name} must not be blank, not {shown}", [f"<{name}>"]
    return None


def _in_range(rule: FlagSpec, number: float) -> bool:
    return (rule.minimum is None or number >= rule.minimum) and (rule.maximum is None or number <= rule.maximum)


def _range_words(rule: FlagSpec) -> str:
    kind = "an integer" if rule.type == "int" else "a number"
    if rule.minimum is not None and rule.maximum is not None:
        return f"{kind} from {rule.minimum} to {rule.maximum}"
    if rule.minimum is not None:
        return f"{kind} of at least {rule.minimum}"
    return f"{kind} of at most {rule.maximum}"


def _range_hint(rule: FlagSpec) -> str:
    return f"<{rule.minimum}-{rule.maximum}>" if rule.minimum is not None and rule.maximum is not None else "<number>"


def _is_pair(value: str, separator: str, *, both: bool) -> bool:
    """`left<separator>right` with a non-blank left part (and, if `both`, a non-blank right part)."""
    left, found, right = value.partition(separator)
    return bool(found) and bool(left.strip()) and (bool(right.strip()) or not both)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"
