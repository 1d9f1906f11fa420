"""The manifest, per-command help and their terminal Markdown, all projected from the command table.

`manifest_data` is the `cli.manifest` payload, `help_data` the `cli.help` payload; both keep the
original's key order and omit keys exactly where it does. Standard library only, so `manifest` and
`--help` answer without importing anything heavy.
"""

from __future__ import annotations

import re
from typing import Any

from memhtml.contracts.errors import ERROR_CODES, USAGE_ERROR_CODES
from memhtml.surface.commands import (
    API_VERSION,
    CLI_NAME,
    CLI_SUMMARY,
    COMMANDS,
    COMPAT_VERSION,
    GLOBAL_FLAGS,
    ArgSpec,
    CommandSpec,
    FlagSpec,
)
from memhtml.surface.manifest_facts import CONFIG_VARS, GUIDE, RESPONSE_TYPES


def manifest_data(version: str) -> dict[str, Any]:
    """The `cli.manifest` payload: the original's keys in its order, plus `compat` at the end."""
    return {
        "name": CLI_NAME,
        "version": version,
        "summary": CLI_SUMMARY,
        "apiVersion": API_VERSION,
        "guide": [{"topic": topic.topic, "body": topic.body} for topic in GUIDE],
        "globalFlags": [flag_entry(flag) for flag in GLOBAL_FLAGS],
        "errorCodes": list(ERROR_CODES),
        "config": [{"name": var.name, "description": var.description, "fallback": var.fallback} for var in CONFIG_VARS],
        "responseTypes": list(RESPONSE_TYPES),
        "commands": [command_entry(command) for command in COMMANDS],
        "compat": COMPAT_VERSION,
    }


def version_data(version: str) -> dict[str, Any]:
    """The `cli.version` payload: this CLI's name and version, the contract it keeps, the envelope's."""
    return {"name": CLI_NAME, "version": version, "compat": COMPAT_VERSION, "apiVersion": API_VERSION}


def command_entry(command: CommandSpec) -> dict[str, Any]:
    """One command as the manifest lists it."""
    return {
        "name": command.name,
        "summary": command.summary,
        "args": [arg_entry(arg) for arg in command.args],
        "flags": [flag_entry(flag) for flag in command.flags],
        "responseTypes": list(command.response_types),
        "examples": list(command.examples),
        "supportsJson": True,
        "supportsDense": True,
    }


def arg_entry(arg: ArgSpec) -> dict[str, Any]:
    """`{name, description, required, repeatable?}`; `repeatable` only when true, as the original."""
    entry: dict[str, Any] = {"name": arg.name, "description": arg.description, "required": arg.required}
    if arg.values is not None:
        entry["values"] = list(arg.values)
    if arg.repeatable:
        entry["repeatable"] = True
    return entry


def flag_entry(flag: FlagSpec) -> dict[str, Any]:
    """`{name, type, description, values?, default?, required?, repeatable?}` in the original's order.

    Our additions `minimum`, `maximum` and `format` follow, and only when set.
    """
    entry: dict[str, Any] = {"name": flag.name, "type": flag.type, "description": flag.description}
    if flag.values is not None:
        entry["values"] = list(flag.values)
    if flag.default is not None:
        entry["default"] = flag.default
    if flag.required:
        entry["required"] = True
    if flag.repeatable:
        entry["repeatable"] = True
    if flag.minimum is not None:
        entry["minimum"] = flag.minimum
    if flag.maximum is not None:
        entry["maximum"] = flag.maximum
    if flag.value_format is not None:
        entry["format"] = flag.value_format
    return entry


def usage_line(command: CommandSpec) -> str:
    """`memhtml read <path> [flags]`: required `<x>`, optional `[x]`, repeatable with `...`."""
    return " ".join(["memhtml", command.name, *_shown_args(command), "[flags]"])


def _shown_args(command: CommandSpec) -> list[str]:
    return [_shown(arg) + ("..." if arg.repeatable else "") for arg in command.args]


def _shown(arg: ArgSpec) -> str:
    return f"<{arg.name}>" if arg.required else f"[{arg.name}]"


def see_also(command: CommandSpec) -> list[str]:
    """Commands of the same noun family, then commands sharing a response type, in table order."""
    family = [
        other.name
        for other in COMMANDS
        if other is not command and command.family is not None and other.family == command.family
    ]
    sharing = [
        other.name
        for other in COMMANDS
        if other is not command and set(other.response_types) & set(command.response_types)
    ]
    return list(dict.fromkeys(family + sharing))


def help_data(command: CommandSpec) -> dict[str, Any]:
    """The `cli.help` payload: the manifest entry plus usage, global flags, usage codes and see-also."""
    return {
        **command_entry(command),
        "usage": usage_line(command),
        "globalFlags": [flag_entry(flag) for flag in GLOBAL_FLAGS],
        "usageErrorCodes": list(USAGE_ERROR_CODES),
        "seeAlso": see_also(command),
    }


# A tag in prose that is not already inside backticks.
_BARE_TAG = re.compile(r"(?<!`)<[a-zA-Z/][a-zA-Z0-9 =\"-]*>(?!`)")


def help_markdown(command: CommandSpec | None) -> str:
    """Help for a terminal: one command's page, or (None) the whole manifest as an overview."""
    return _command_page(command) if command is not None else _overview_page()


def _flag_line(flag: FlagSpec) -> str:
    notes: list[str] = []
    if flag.required:
        notes.append("**required**")
    if flag.repeatable:
        notes.append("repeatable")
    if flag.minimum is not None and flag.maximum is not None:
        notes.append(f"{flag.minimum} to {flag.maximum}")
    if flag.values is not None:
        notes.append("one of: " + ", ".join(f"`{value}`" for value in flag.values))
    if flag.default is not None and flag.default != "":
        notes.append(f"default `{_literal(flag.default)}`")
    suffix = f" _({'; '.join(notes)})_" if notes else ""
    return f"- `--{flag.name}` ({flag.type}) — {_tags_as_code(flag.description)}{suffix}"


def _tags_as_code(text: str) -> str:
    """Element names such as `<mark>` in prose, as inline code: a Markdown renderer would drop raw tags."""
    return _BARE_TAG.sub(lambda match: f"`{match.group(0)}`", text)


def _literal(value: str | int | bool) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _arg_line(arg: ArgSpec) -> str:
    return f"- `{_shown(arg)}` — {_tags_as_code(arg.description)}"


def _command_page(command: CommandSpec) -> str:
    lines = [
        f"# memhtml {command.name}",
        "",
        command.summary,
        "",
        "## Usage",
        "",
        "```",
        usage_line(command),
        "```",
    ]
    if command.args:
        lines += [
            "",
            "## Arguments",
            "",
            "`<required>`, `[optional]`; a trailing `...` means it may repeat.",
            "",
        ]
        lines += [_arg_line(arg) for arg in command.args]
    if command.flags:
        lines += ["", "## Flags", ""] + [_flag_line(flag) for flag in command.flags]
    lines += ["", "## Global flags", ""] + [_flag_line(flag) for flag in GLOBAL_FLAGS]
    types = ", ".join(f"`{name}`" for name in command.response_types)
    lines += [
        "",
        "## Response",
        "",
        f"Piped, or with `--json`, stdout carries exactly one JSON envelope of type {types}: "
        '`{ "apiVersion": "1", "type": …, "data": { … } }`. Logs go to stderr.',
        "",
        "## Errors",
        "",
        'A failure is `{ "apiVersion": "1", "error": …, "code": …, "suggestions": […], "retryable": … }`. '
        "Branch on `code`, not on the prose. Exit 2 means the command line must change ("
        + ", ".join(f"`{code}`" for code in USAGE_ERROR_CODES)
        + "); exit 1 means the work failed and the code says why (see `memhtml manifest`).",
    ]
    if command.examples:
        lines += ["", "## Examples", "", "```sh", *command.examples, "```"]
    related = see_also(command)
    if related:
        lines += ["", "## See also", "", ", ".join(f"`memhtml {name}`" for name in related)]
    return "\n".join(lines) + "\n"


def _overview_page() -> str:
    lines = [
        f"# `{CLI_NAME}`",
        "",
        CLI_SUMMARY,
        "",
        "Every command prints one JSON envelope when piped or with `--json`, and exits 0 (done), "
        "2 (change the command line) or 1 (the work failed). `memhtml help <command>` describes one "
        "command; `memhtml manifest` prints this whole contract as JSON.",
        "",
        "## Guide",
    ]
    for topic in GUIDE:
        lines += ["", f"### `{topic.topic}`", "", topic.body]
    lines += ["", "## Global flags", "", "| Flag | Type | Default | Meaning |", "|---|---|---|---|"]
    for flag in GLOBAL_FLAGS:
        default = "—" if flag.default is None or flag.default == "" else _literal(flag.default)
        lines.append(f"| `--{flag.name}` | {flag.type} | {default} | {flag.description} |")
    lines += [
        "",
        "## Commands",
        "",
        "`<required>`, `[optional]`; a flag marked `*` is required.",
        "",
        "| Command | Arguments | Flags | Response type |",
        "|---|---|---|---|",
    ]
    for command in COMMANDS:
        args = " ".join(_shown_args(command)) or "—"
        flags = " ".join(f"`--{flag.name}`" + ("*" if flag.required else "") for flag in command.flags) or "—"
        types = ", ".join(f"`{name}`" for name in command.response_types)
        lines.append(f"| `memhtml {command.name}` | {args} | {flags} | {types} |")
    lines += ["", "## Error codes", ""] + [f"- `{code}`" for code in ERROR_CODES]
    lines += ["", "## Configuration", "", "| Variable | Default | Meaning |", "|---|---|---|"]
    for var in CONFIG_VARS:
        fallback = f"`{var.fallback}`" if var.fallback is not None else "—"
        lines.append(f"| `{var.name}` | {fallback} | {var.description} |")
    return "\n".join(lines) + "\n"
