"""Both doors read a call's arguments by the command table's names and get the table's defaults."""

from __future__ import annotations

import pytest

from memhtml.cli.grammar import Invocation, parse_command_line
from memhtml.mcp.params import check_arguments
from memhtml.mcp.tools import TOOLS, Tool
from memhtml.surface.arguments import TableArguments
from memhtml.surface.commands import command_named


def _parse(*argv: str) -> Invocation:
    return parse_command_line([*argv, "--repo", "/nowhere"], refuse_env_root=False, stdout_is_tty=False)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_every_tool_argument_names_a_flag_or_positional_of_its_command(tool: Tool) -> None:
    spec = command_named(tool.command)
    assert spec is not None
    names = {flag.name for flag in spec.flags} | {argument.name for argument in spec.args}
    for param in tool.params:
        if param.door_only:
            continue
        spelled = {"claim", "body"} if param.prose == "claim-and-paragraphs" else {param.name_in_table}
        if param.prose == "paragraphs":
            spelled = {"body"}
        assert spelled <= names, f"{tool.name}.{param.name} -> {spelled} is not on {tool.command}"


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_a_tool_advertises_the_default_its_command_applies(tool: Tool) -> None:
    spec = command_named(tool.command)
    assert spec is not None
    for param in tool.params:
        flag = spec.flag(param.name_in_table or "")
        if flag is not None and param.default is not None:
            assert param.default == flag.default, f"{tool.name}.{param.name}"


def test_absent_arguments_read_as_the_table_defaults_on_both_doors() -> None:
    tools = {tool.name: tool for tool in TOOLS}
    for tool_name, command, flag, expected in [
        ("memory_list", "list", "limit", 50),
        ("memory_search", "search", "limit", 10),
        ("memory_recall", "recall", "budget", 16000),
        ("memory_neighbors", "neighbors", "depth", 1),
        ("memory_neighbors", "neighbors", "limit", 200),
        ("task_list", "task list", "limit", 50),
    ]:
        required = {param.name: "x" for param in tools[tool_name].params if param.required}
        mcp = check_arguments(tool_name, tools[tool_name].params, required).in_table(command)
        words = command.split() + [
            "x" for argument in (command_named(command).args if command_named(command) else ()) if argument.required
        ]
        cli = _parse(*words)
        assert mcp.integer(flag) == cli.integer(flag) == expected, (tool_name, flag)
    add = check_arguments("task_add", tools["task_add"].params, {"title": "t"}).in_table("task add")
    assert add.text("status") == "todo"


def test_the_mcp_body_is_the_claim_and_paragraphs_the_cli_spells_as_flags() -> None:
    tools = {tool.name: tool for tool in TOOLS}
    given = {"title": "T", "memory_type": "semantic", "body": "The claim holds. More.\n\nSecond paragraph."}
    mcp = check_arguments("memory_write", tools["memory_write"].params, given).in_table("write")
    cli = _parse(
        "write", "--title", "T", "--type", "semantic", "--claim", "The claim holds.", "--body", "More.",
        "--body", "Second paragraph.",
    )  # fmt: skip
    for name in ("title", "type", "claim"):
        assert mcp.text(name) == cli.text(name), name
    assert mcp.texts("body") == cli.texts("body") == ["More.", "Second paragraph."]


def test_positionals_read_by_their_table_names() -> None:
    link = _parse("link", "a.html", "supersedes", "b.html")
    assert (link.text("src"), link.text("rel"), link.text("dst")) == ("a.html", "supersedes", "b.html")
    reinforce = _parse("reinforce", "a.html", "b.html", "--signal", "positive")
    assert reinforce.texts("path") == ["a.html", "b.html"]


def test_a_name_the_command_does_not_have_is_a_defect_not_an_absent_value() -> None:
    spec = command_named("list")
    assert spec is not None
    with pytest.raises(KeyError):
        TableArguments(spec, {"tags": ["x"]})
    with pytest.raises(KeyError):
        TableArguments(spec, {}).text("query")
    assert TableArguments(spec, {"tag": "x"}).texts("tag") == ["x"]
