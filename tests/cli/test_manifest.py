"""The manifest and help projections: shape, key order and omissions, append-only lists, help pages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memhtml.cli.manifest import help_data, help_markdown, manifest_data, usage_line
from memhtml.surface.commands import ADDED_COMMANDS, COMMANDS, command_named

# Frozen from memhtml 0.15.1's manifest so these tests need no installed original.
ORIGINAL_RESPONSE_TYPES = [
    "cli.manifest", "cli.help", "repo.init", "memory.written", "batch.applied", "memory.detail",
    "memory.hits", "recall.pack", "memory.corrected", "memory.linked", "memory.neighbors",
    "memory.resolved", "memory.archived", "memory.reinforced", "memory.list", "entity.activity",
    "task.written", "task.updated", "task.list", "index.report", "trace.report", "trace.sessions",
    "trace.links", "sleep.report", "sleep.review", "sleep.merge", "sleep.plan", "status.health",
    "publish.report", "doctor.report", "eval.discrimination", "exec.report", "state.export",
    "state.import", "agents.doc", "serve.exit", "integrations.report", "integrations.list",
    "integrations.doctor", "integrations.shell", "hook.output",
]  # fmt: skip
ORIGINAL_ERROR_CODES = [
    "ERR_UNKNOWN_COMMAND", "ERR_MISSING_ARGUMENT", "ERR_INVALID_FLAG", "ERR_UNEXPECTED_ARGUMENT",
    "ERR_REPO_REQUIRED", "ERR_PATH_NOT_FOUND", "ERR_INVALID_MEMORY", "ERR_DUPLICATE_CONTENT",
    "ERR_WRITE_CONFLICT", "ERR_DIRTY_TREE", "ERR_INDEX_STALE", "ERR_EMBED_MODEL_MISMATCH",
    "ERR_MODEL_UNAVAILABLE", "ERR_STORAGE", "ERR_GIT", "ERR_DISCRIMINATION_FAILED", "ERR_UNKNOWN",
    "ERR_REBUILD_NO_EMBED_REFUSED", "ERR_UNKNOWN_HOST", "ERR_UNKNOWN_HOOK_EVENT",
    "ERR_INTEGRATION_MODIFIED",
]  # fmt: skip
ORIGINAL_MANIFEST = Path("/tmp/orig/manifest.json")
# The commands this version has, in the original's relative order.
BUILT_COMMANDS = [
    "manifest", "version", "help", "init", "write", "apply", "batch", "read", "search", "recall", "correct", "link",
    "neighbors", "resolve", "archive", "why", "reinforce", "list", "entity activity", "task add", "task status",
    "task list", "conflicts audit",
    "index rebuild", "index update", "index embed", "index status", "status", "doctor", "validate", "hooks install", "hooks uninstall", "eval discriminate", "eval locomo", "eval supersession", "state export", "state import", "serve mcp",
]  # fmt: skip
# Flags we add to the original's commands (documented in docs/compat.md).
ADDED_FLAGS = {
    "write": {"event-at", "detect-conflicts", "detect-near-duplicates", "redact", "strip-invisible"},
    "apply": {"dry-run", "redact", "strip-invisible"},
    "correct": {"tag", "entity", "importance", "confidence", "event-at", "redact", "strip-invisible"},
    "task add": {"redact", "strip-invisible"},
}
# Summaries reworded because our behaviour differs (relevance floor, read does not trip the
# cooldown, DuckDB files instead of the original's index.db/state.db, doctor's exit status and checks).
REWORDED_SUMMARIES = {"search", "reinforce", "index rebuild", "index embed", "state import", "serve mcp", "doctor"}
FLAG_KEY_ORDER = ["name", "type", "description", "values", "default", "required", "repeatable"]
OUR_FLAG_KEYS = ["minimum", "maximum", "format"]


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    return manifest_data("9.9.9")


def test_top_level_keys_in_the_original_order_plus_compat(manifest: dict[str, Any]) -> None:
    assert list(manifest) == [
        "name",
        "version",
        "summary",
        "apiVersion",
        "guide",
        "globalFlags",
        "errorCodes",
        "config",
        "responseTypes",
        "commands",
        "compat",
    ]
    assert (manifest["name"], manifest["version"], manifest["apiVersion"]) == ("memhtml", "9.9.9", "1")
    assert manifest["compat"] == "0.15.1"
    json.dumps(manifest)  # plain JSON values only


def test_lists_exactly_the_commands_we_have(manifest: dict[str, Any]) -> None:
    assert [entry["name"] for entry in manifest["commands"]] == [command.name for command in COMMANDS]
    assert [command.name for command in COMMANDS] == BUILT_COMMANDS


def test_command_entries_have_the_original_keys(manifest: dict[str, Any]) -> None:
    for entry in manifest["commands"]:
        assert list(entry) == [
            "name",
            "summary",
            "args",
            "flags",
            "responseTypes",
            "examples",
            "supportsJson",
            "supportsDense",
        ]
        assert set(entry["responseTypes"]) <= set(manifest["responseTypes"])


def test_every_flag_is_well_typed_and_omits_keys_like_the_original(manifest: dict[str, Any]) -> None:
    flags = manifest["globalFlags"] + [flag for entry in manifest["commands"] for flag in entry["flags"]]
    for flag in flags:
        assert flag["type"] in ("string", "int", "boolean")
        known = [key for key in FLAG_KEY_ORDER + OUR_FLAG_KEYS if key in flag]
        assert list(flag) == known, f"unexpected keys or order in {flag['name']}"
        # Optional markers appear only when true, as in the original.
        assert flag.get("required", True) is True and flag.get("repeatable", True) is True
    for entry in manifest["commands"]:
        for arg in entry["args"]:
            assert list(arg) in (
                ["name", "description", "required"],
                ["name", "description", "required", "repeatable"],
                ["name", "description", "required", "values"],  # ours: a positional vocabulary
            )


def test_write_flags_keep_the_original_names_types_and_vocabulary(manifest: dict[str, Any]) -> None:
    write = next(entry for entry in manifest["commands"] if entry["name"] == "write")
    by_name = {flag["name"]: flag for flag in write["flags"]}
    assert list(by_name) == [
        "title", "claim", "body", "article-html", "type", "path", "strict-path", "workspace", "tag",
        "entity", "importance", "confidence", "event-at", "session-id", "prompt-id", "turn-uuid",
        "redact", "strip-invisible", "detect-conflicts", "detect-near-duplicates",
    ]  # fmt: skip
    assert by_name["confidence"]["type"] == "string" and by_name["importance"]["type"] == "int"
    assert by_name["tag"]["repeatable"] is True  # the original forgot to say so
    assert by_name["type"]["values"][-1] == "task" and len(by_name["type"]["values"]) == 10
    assert (by_name["importance"]["minimum"], by_name["importance"]["maximum"]) == (1, 10)
    assert by_name["strict-path"]["default"] is False and "default" not in by_name["title"]


def test_global_flags(manifest: dict[str, Any]) -> None:
    assert [flag["name"] for flag in manifest["globalFlags"]] == ["dense", "repo", "help", "json"]
    assert manifest["globalFlags"][1]["default"] == ""


def test_response_types_and_error_codes_extend_the_original_in_order(manifest: dict[str, Any]) -> None:
    assert manifest["responseTypes"][: len(ORIGINAL_RESPONSE_TYPES)] == ORIGINAL_RESPONSE_TYPES
    assert manifest["errorCodes"][: len(ORIGINAL_ERROR_CODES)] == ORIGINAL_ERROR_CODES
    # ours, appended: the safety notary's refusals, then one code for each kind of fault of the store
    assert manifest["errorCodes"][len(ORIGINAL_ERROR_CODES) :] == [
        "ERR_SECRET_DETECTED",
        "ERR_INVISIBLE_CHARACTERS",
        "ERR_CORRUPT_REPOSITORY",
        "ERR_DETACHED_HEAD",
        "ERR_LOCKED",
        "ERR_NO_SPACE",
        "ERR_READ_ONLY",
        "ERR_DAMAGED_FILE",
        "ERR_INPUT_TOO_LARGE",
    ]


def test_config_and_guide(manifest: dict[str, Any]) -> None:
    assert [var["name"] for var in manifest["config"]] == [
        "MEMHTML_ROOT",
        "MEMHTML_REFUSE_ENV_ROOT",
        "MEMHTML_OUTPUT",
        "MEMHTML_EMBED",
        "MEMHTML_VECTOR_COVERAGE_FLOOR",
    ]
    assert manifest["config"][0]["fallback"] == "~/memhtml"
    assert manifest["config"][3]["fallback"] == "on"
    assert all(list(var) == ["name", "description", "fallback"] for var in manifest["config"])
    assert [topic["topic"] for topic in manifest["guide"]] == ["first-call", "write-surfaces", "authoring"]
    assert all(topic["body"] for topic in manifest["guide"])


@pytest.mark.skipif(not ORIGINAL_MANIFEST.exists(), reason="the original's manifest is not on this machine")
def test_matches_the_installed_originals_contract(manifest: dict[str, Any]) -> None:
    original = json.loads(ORIGINAL_MANIFEST.read_text())["data"]
    assert manifest["responseTypes"][: len(original["responseTypes"])] == original["responseTypes"]
    assert manifest["errorCodes"][: len(original["errorCodes"])] == original["errorCodes"]
    theirs = {entry["name"]: entry for entry in original["commands"]}
    for entry in manifest["commands"]:
        if entry["name"] in ADDED_COMMANDS:
            continue
        other = theirs[entry["name"]]
        if entry["name"] not in REWORDED_SUMMARIES:
            assert entry["summary"] == other["summary"], entry["name"]
        assert entry["responseTypes"] == other["responseTypes"]
        assert [arg.get("repeatable") for arg in entry["args"]] == [arg.get("repeatable") for arg in other["args"]]
        if other["examples"]:
            assert entry["examples"] == other["examples"], entry["name"]
        assert [arg["name"] for arg in entry["args"]] == [arg["name"] for arg in other["args"]]
        ours_by_name = {flag["name"]: flag for flag in entry["flags"]}
        for flag in other["flags"]:
            if flag["name"] == "json":  # a global flag in ours
                continue
            mine = ours_by_name.pop(flag["name"])
            assert (mine["type"], mine.get("values"), mine.get("default")) == (
                flag["type"],
                flag.get("values"),
                flag.get("default"),
            )
        added = set(ours_by_name) - ADDED_FLAGS.get(entry["name"], set())
        assert not added, f"{entry['name']} has flags the original lacks: {sorted(added)}"


def test_help_data_extends_the_manifest_entry() -> None:
    read = command_named("read")
    assert read is not None
    data = help_data(read)
    assert list(data)[-4:] == ["usage", "globalFlags", "usageErrorCodes", "seeAlso"]
    assert data["usage"] == "memhtml read <path> [flags]"
    assert data["usageErrorCodes"] == ORIGINAL_ERROR_CODES[:5]
    assert data["seeAlso"] == []


@pytest.mark.parametrize(
    ("name", "usage", "see_also"),
    [
        ("help", "memhtml help [command]... [flags]", ["manifest"]),
        ("manifest", "memhtml manifest [flags]", ["help"]),
        ("status", "memhtml status [flags]", []),
        ("write", "memhtml write [flags]", []),
    ],
)
def test_usage_lines_and_see_also(name: str, usage: str, see_also: list[str]) -> None:
    command = command_named(name)
    assert command is not None
    assert usage_line(command) == usage
    assert help_data(command)["seeAlso"] == see_also


def test_help_markdown_for_one_command() -> None:
    write = command_named("write")
    assert write is not None
    page = help_markdown(write)
    assert page.startswith("# memhtml write\n")
    assert "```\nmemhtml write [flags]\n```" in page
    assert "- `--title` (string)" in page and "**required**" in page
    assert "## Global flags" in page and "`--json`" in page and "## Examples" in page
    assert "one of: `episodic`" in page


def test_help_markdown_overview_names_every_command_and_code() -> None:
    page = help_markdown(None)
    for command in COMMANDS:
        assert f"| `memhtml {command.name}` |" in page
    assert "`ERR_INTEGRATION_MODIFIED`" in page and "`MEMHTML_OUTPUT`" in page
    assert "### `first-call`" in page


def test_new_flags_publish_their_ranges_and_formats(manifest: dict[str, Any]) -> None:
    flags = {(entry["name"], flag["name"]): flag for entry in manifest["commands"] for flag in entry["flags"]}
    ranges = {
        ("search", "limit"): (1, 200, 10),
        ("neighbors", "limit"): (1, 200, 200),
        ("neighbors", "depth"): (1, 2, 1),
        ("list", "limit"): (1, 1000, 50),
        ("recall", "budget"): (0, 1_000_000, 16000),
    }
    for key, (low, high, default) in ranges.items():
        assert (flags[key]["minimum"], flags[key]["maximum"], flags[key]["default"]) == (low, high, default)
    formats = {
        ("search", "as-of"): "instant-or-commit",
        ("recall", "as-of"): "instant-or-commit",
        ("search", "facet"): "facet",
        ("recall", "facet"): "facet",
        ("list", "facet"): "facet",
        ("search", "entity"): "entity",
        ("recall", "entity"): "entity",
        ("list", "entity"): "entity",
    }
    for key, value_format in formats.items():
        assert flags[key]["format"] == value_format, key
    assert "commit sha" in flags[("search", "as-of")]["description"]
    assert "arc" not in flags[("search", "type")]["values"] and "arc" in flags[("list", "type")]["values"]
    assert flags[("reinforce", "signal")]["values"] == ["positive", "negative", "neutral"]
    assert flags[("reinforce", "signal")]["default"] == "neutral"
    assert flags[("index rebuild", "embed")]["default"] is True
    assert "never re-embedded" in flags[("index rebuild", "embed")]["description"]
    assert flags[("index rebuild", "force")]["default"] is False
    assert flags[("index embed", "dry-run")]["default"] is False


def test_every_command_has_an_example_that_names_it() -> None:
    for command in COMMANDS:
        assert command.examples, command.name
        assert any(example.startswith(f"memhtml {command.name}") for example in command.examples) or (
            command.name == "help"
        ), command.name


@pytest.mark.parametrize(
    ("name", "usage", "see_also"),
    [
        ("search", "memhtml search <query> [flags]", []),
        ("recall", "memhtml recall <query> [flags]", []),
        ("neighbors", "memhtml neighbors <path> [flags]", []),
        ("reinforce", "memhtml reinforce <path>... [flags]", []),
        ("list", "memhtml list [flags]", []),
        ("index rebuild", "memhtml index rebuild [flags]", ["index update", "index embed", "index status"]),
        ("index status", "memhtml index status [flags]", ["index rebuild", "index update", "index embed"]),
        ("state export", "memhtml state export [flags]", ["state import"]),
    ],
)
def test_usage_and_see_also_of_the_new_commands(name: str, usage: str, see_also: list[str]) -> None:
    command = command_named(name)
    assert command is not None
    assert usage_line(command) == usage
    assert help_data(command)["seeAlso"] == see_also


def test_help_markdown_shows_ranges_and_defaults_of_the_new_flags() -> None:
    neighbors = command_named("neighbors")
    rebuild = command_named("index rebuild")
    assert neighbors is not None and rebuild is not None
    page = help_markdown(neighbors)
    assert "- `--depth` (int)" in page and "_(1 to 2; default `1`)_" in page
    assert "memhtml neighbors <path> [flags]" in page
    assert "- `--embed` (boolean)" in help_markdown(rebuild) and "default `true`" in help_markdown(rebuild)
    assert "| `memhtml index rebuild` | — | `--embed` `--force` |" in help_markdown(None)
