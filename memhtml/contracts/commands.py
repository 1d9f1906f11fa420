"""The command table: every command, argument and flag the CLI accepts, with the manifest's metadata.

This is the one source the argument grammar, the manifest, per-command help and (later) AGENTS.md are
projected from. Names, flag types and response types keep the original memhtml 0.15.1 contract;
fields the original does not publish (ranges, value formats) drive our stricter validation.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Final, Literal

from memhtml.contracts.instants import is_sortable_instant
from memhtml.contracts.vocabulary import MEMORY_TYPES

FlagType = Literal["string", "int", "boolean"]

CLI_NAME: Final[str] = "memhtml"
CLI_SUMMARY: Final[str] = "Read and write the git-backed memory repo."
API_VERSION: Final[str] = "1"
# The original release whose command contract this table keeps.
COMPAT_VERSION: Final[str] = "0.15.1"

_INTEGER: Final = re.compile(r"^[+-]?\d+$")
# Plain decimal notation only: `nan`, `inf` and `1_0` parse in Python but are not numbers to a caller.
_DECIMAL: Final = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class ArgSpec:
    """One positional argument."""

    name: str
    description: str
    required: bool
    repeatable: bool = False


@dataclass(frozen=True)
class FlagSpec:
    """One `--flag`. `minimum`/`maximum`, `number`, `instant` and `entity` are our validation extras.

    `number` marks a string flag whose value must parse as a finite decimal number (the original
    publishes `--confidence` as a string); `instant` a flag taking `YYYY-MM-DD` or
    `YYYY-MM-DDThh:mm:ssZ`; `entity` a flag taking `type:name`.
    """

    name: str
    type: FlagType
    description: str
    default: str | int | bool | None = None
    values: tuple[str, ...] | None = None
    required: bool = False
    repeatable: bool = False
    minimum: int | float | None = None
    maximum: int | float | None = None
    number: bool = False
    instant: bool = False
    entity: bool = False

    @property
    def takes_value(self) -> bool:
        """String and int flags consume a value; booleans never do."""
        return self.type != "boolean"

    @property
    def value_format(self) -> str | None:
        """The name of the value grammar beyond the plain type, for the manifest's `format` key."""
        if self.number:
            return "number"
        if self.instant:
            return "instant"
        if self.entity:
            return "entity"
        return None

    def problem_with(self, value: str) -> tuple[str, list[str]] | None:
        """Why `value` is refused (with example values to suggest), or None when this flag admits it.

        Checked: the instant grammar, the closed vocabulary, integers, numbers and ranges, `type:name`.
        """
        name, shown = f"--{self.name}", json.dumps(value, ensure_ascii=False)
        if self.instant and not is_sortable_instant(value):
            return (
                f"{name} must be an ISO date or datetime (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ), not {shown}",
                ["2026-08-24", "2026-08-24T13:00:00Z"],
            )
        if self.values is not None and value not in self.values:
            return f"{name} must be one of: {', '.join(self.values)}", []
        if self.type == "int" and not self._in_range(_as_int(value)):
            return f"{name} must be {self._range_words('an integer')}, not {shown}", [self._range_hint()]
        if self.number and not (
            _DECIMAL.match(value) and math.isfinite(float(value)) and self._in_range(float(value))
        ):
            return f"{name} must be {self._range_words('a number')}, not {shown}", [self._range_hint()]
        if self.entity and not _is_entity(value):
            return (
                f"{name} must be a `type:name` entity reference (a non-empty type, a colon, a "
                f"non-empty name), not {shown}",
                ["<type>:<name>"],
            )
        return None

    def _in_range(self, number: float | None) -> bool:
        if number is None:
            return False
        if self.minimum is not None and number < self.minimum:
            return False
        return self.maximum is None or number <= self.maximum

    def _range_words(self, kind: str) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f"{kind} from {self.minimum} to {self.maximum}"
        if self.minimum is not None:
            return f"{kind} of at least {self.minimum}"
        if self.maximum is not None:
            return f"{kind} of at most {self.maximum}"
        return kind

    def _range_hint(self) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f"<{self.minimum}-{self.maximum}>"
        return "<number>" if self.number else "<int>"


def _as_int(value: str) -> int | None:
    """The integer `value` spells in plain decimal, or None (Python refuses over 4300 digits)."""
    if not _INTEGER.match(value):
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _is_entity(value: str) -> bool:
    entity_type, colon, entity_name = value.partition(":")
    return bool(colon) and bool(entity_type.strip()) and bool(entity_name.strip())


@dataclass(frozen=True)
class ExactlyOneOf:
    """Two flags of which exactly one must carry a non-blank value (write's claim/article choice)."""

    flags: tuple[str, str]
    # Why giving both is refused rather than one silently winning.
    conflict: str
    # How each flag's value is shown in the suggested command lines.
    placeholders: tuple[str, str]


@dataclass(frozen=True)
class CommandSpec:
    """One command: its contract (manifest entry) and whether running it opens a repository."""

    name: str
    summary: str
    args: tuple[ArgSpec, ...]
    flags: tuple[FlagSpec, ...]
    response_types: tuple[str, ...]
    examples: tuple[str, ...]
    opens_repo: bool
    exactly_one_of: tuple[ExactlyOneOf, ...] = ()

    def flag(self, name: str) -> FlagSpec | None:
        """This command's own flag called `name` (globals are not included)."""
        return next((flag for flag in self.flags if flag.name == name), None)

    @property
    def family(self) -> str | None:
        """The noun of a two-word command (`index` for `index rebuild`), None for one-word commands."""
        noun, _, verb = self.name.partition(" ")
        return noun if verb else None


@dataclass(frozen=True)
class ConfigVar:
    """One configuration variable the CLI reads (the config module does the reading)."""

    name: str
    description: str
    fallback: str | None


@dataclass(frozen=True)
class GuideTopic:
    """One short piece of orientation prose shipped in the manifest."""

    topic: str
    body: str


GLOBAL_FLAGS: Final[tuple[FlagSpec, ...]] = (
    FlagSpec(
        "dense", "boolean", "Minify JSON and drop null fields, for pasting into a context window.", False
    ),
    FlagSpec(
        "repo",
        "string",
        "Path to the memory repo. Defaults to $MEMHTML_ROOT, then ~/memhtml.",
        "",
    ),
    FlagSpec(
        "help",
        "boolean",
        "Describe this command instead of running it: usage, arguments, flags, response type, "
        "examples. Also `-h`. Markdown when stdout is a terminal, a `cli.help` envelope when piped or "
        "with --json. Other flags are not checked, nothing is opened or written, exit 0.",
        False,
    ),
    FlagSpec(
        "json",
        "boolean",
        "Emit the JSON envelope even when stdout is a terminal (as MEMHTML_OUTPUT=json does), so a "
        "script never receives rendered text by accident.",
        False,
    ),
)

_SESSION_FLAG = FlagSpec(
    "session-id", "string", "The Claude Code session. Stamped into the head AND indexed as a link."
)
_PROMPT_FLAG = FlagSpec("prompt-id", "string", "The prompt within that session.")
_TURN_FLAG = FlagSpec("turn-uuid", "string", "The turn within that session.")

_CLAIM_OR_ARTICLE = ExactlyOneOf(
    flags=("claim", "article-html"),
    conflict="--article-html is the whole article, so a --claim beside it would be silently discarded",
    placeholders=("<sentence>", "'<p>…</p>'"),
)

_WRITE_FLAGS: Final[tuple[FlagSpec, ...]] = (
    FlagSpec(
        "title",
        "string",
        "The memory's title. Becomes the <title> and the filename slug. A blank title counts as missing.",
        required=True,
    ),
    FlagSpec(
        "claim",
        "string",
        "The one load-bearing sentence. Becomes the <mark> span and files.gist. Exactly one of "
        "--claim or --article-html; a blank value counts as absent.",
    ),
    FlagSpec("body", "string", "A prose paragraph after the claim. Repeatable.", repeatable=True),
    FlagSpec(
        "article-html",
        "string",
        "Raw <article> markup used verbatim in place of --claim/--body. Must contain exactly one "
        "<mark> in the first <p> or <li>; the first <time datetime> becomes the memory's event time. "
        "The store refuses format violations before any commit. Exactly one of --claim or "
        "--article-html; a blank value counts as absent.",
    ),
    FlagSpec(
        "type",
        "string",
        "The memory type. `arc` is admitted here, on the operator surface, for curated import and "
        "deliberately authored rules; the agent tools (`memory_write`) still refuse it, because an "
        "agent naming an arc asserts a conclusion the corpus has not earned.",
        values=MEMORY_TYPES,
        required=True,
    ),
    FlagSpec(
        "path",
        "string",
        "An explicit path override. One that is not a usable memory path (rooted in a PARA bucket, "
        "ending in .html, no `.` or `..` segment) is IGNORED and the placement rule decides instead, "
        "so a malformed override lands the memory somewhere you did not name — pass --strict-path to "
        "have it refused instead. One a file ALREADY occupies is REFUSED with ERR_WRITE_CONFLICT and "
        "nothing is written or committed: this corpus overwrites nothing, and an explicit path gets "
        "no `-2` suffix because you named one path. To replace what a memory says, use "
        "`memhtml correct <path>`.",
    ),
    FlagSpec(
        "strict-path",
        "boolean",
        "Refuse an unusable --path instead of letting the placement rule decide. By default a --path "
        "that is not a usable memory path is re-derived, so the memory lands somewhere you did not "
        "name and the response reports that other path as a success. With this flag the write is "
        "REFUSED with ERR_INVALID_MEMORY naming the clause the path broke, and nothing is written, "
        "staged, or committed. It governs the path you NAMED: with no --path there is nothing to be "
        "strict about and the flag changes nothing, while an EMPTY or blank --path is named rather "
        "than absent and is refused — that is what your own path template renders when it produced "
        "nothing. An OCCUPIED path is refused with ERR_WRITE_CONFLICT with or "
        "without it.",
        default=False,
    ),
    FlagSpec("workspace", "string", "Routes the memory to projects/<slug>/."),
    FlagSpec(
        "tag",
        "string",
        "A tag. Repeatable; the first one routes an unplaced resource memory.",
        repeatable=True,
    ),
    FlagSpec(
        "entity",
        "string",
        "A `type:name` entity reference, e.g. service:checkout-api. Repeatable. A value without a "
        "non-empty type and name is refused at exit 2.",
        repeatable=True,
        entity=True,
    ),
    FlagSpec(
        "importance",
        "int",
        "1-10, a display ordinal. The retention scorer divides by 10. Anything else is refused at exit 2.",
        minimum=1,
        maximum=10,
    ),
    FlagSpec(
        "confidence",
        "string",
        "0-1. 1.0 is an unqualified assertion. A value that is not a number from 0 to 1 is refused "
        "at exit 2.",
        minimum=0,
        maximum=1,
        number=True,
    ),
    _SESSION_FLAG,
    _PROMPT_FLAG,
    _TURN_FLAG,
)

COMMANDS: Final[tuple[CommandSpec, ...]] = (
    CommandSpec(
        name="manifest",
        summary="Emit this CLI's full machine-readable contract.",
        args=(),
        flags=(),
        response_types=("cli.manifest",),
        examples=("memhtml manifest --dense",),
        opens_repo=False,
    ),
    CommandSpec(
        name="help",
        summary="Describe one command: usage, arguments, flags, response type, examples. Markdown on "
        "a terminal, a cli.help envelope when piped.",
        args=(
            ArgSpec(
                "command",
                "The command to describe, one or two words (`write`, `index rebuild`). Omitted: the "
                "whole manifest, as Markdown on a terminal and as the cli.manifest envelope when piped.",
                required=False,
                repeatable=True,
            ),
        ),
        flags=(),
        response_types=("cli.help", "cli.manifest"),
        examples=("memhtml help write", "memhtml help read --json", "memhtml write --help"),
        opens_repo=False,
    ),
    CommandSpec(
        name="init",
        summary="Scaffold a memory repo at --repo/$MEMHTML_ROOT: git init, PARA dirs, merge driver.",
        args=(),
        flags=(),
        response_types=("repo.init",),
        examples=("memhtml init --repo ~/memhtml",),
        opens_repo=True,
    ),
    CommandSpec(
        name="write",
        summary="Write one memory. Content-hash duplicates return the existing path, uncommitted.",
        args=(),
        flags=_WRITE_FLAGS,
        response_types=("memory.written",),
        examples=(
            'memhtml write --title "One writer and many readers share the index" --claim "WAL admits '
            'a single writer at a time and any number of concurrent readers." --type semantic --tag infra',
            'memhtml write --title "Checkout retries" --claim "The checkout service retries twice." '
            "--type procedural --entity service:checkout --workspace payments",
        ),
        opens_repo=True,
        exactly_one_of=(_CLAIM_OR_ARTICLE,),
    ),
    CommandSpec(
        name="read",
        summary="Read one memory: its metas, links, article, and format warnings.",
        args=(ArgSpec("path", "Repo-root-relative path to the memory.", required=True),),
        flags=(
            FlagSpec(
                "session-id",
                "string",
                "Records a `read` session link, so provenance is queryable both ways.",
            ),
            _PROMPT_FLAG,
            _TURN_FLAG,
        ),
        response_types=("memory.detail",),
        examples=("memhtml read areas/inbox/one-writer-and-many-readers-share-the-index.html --dense",),
        opens_repo=True,
    ),
    CommandSpec(
        name="status",
        summary="Corpus health: HEAD, dirty state, counts by type, edges, index freshness.",
        args=(),
        flags=(),
        response_types=("status.health",),
        examples=("memhtml status --dense",),
        opens_repo=True,
    ),
)

COMMANDS_BY_NAME: Final[dict[str, CommandSpec]] = {command.name: command for command in COMMANDS}


def command_named(name: str) -> CommandSpec | None:
    """The command whose full name (one or two words) is `name`."""
    return COMMANDS_BY_NAME.get(name)


# The original's 41 response types in its order; append-only, so ours may only add at the end.
RESPONSE_TYPES: Final[tuple[str, ...]] = (
    "cli.manifest",
    "cli.help",
    "repo.init",
    "memory.written",
    "batch.applied",
    "memory.detail",
    "memory.hits",
    "recall.pack",
    "memory.corrected",
    "memory.linked",
    "memory.neighbors",
    "memory.resolved",
    "memory.archived",
    "memory.reinforced",
    "memory.list",
    "entity.activity",
    "task.written",
    "task.updated",
    "task.list",
    "index.report",
    "trace.report",
    "trace.sessions",
    "trace.links",
    "sleep.report",
    "sleep.review",
    "sleep.merge",
    "sleep.plan",
    "status.health",
    "publish.report",
    "doctor.report",
    "eval.discrimination",
    "exec.report",
    "state.export",
    "state.import",
    "agents.doc",
    "serve.exit",
    "integrations.report",
    "integrations.list",
    "integrations.doctor",
    "integrations.shell",
    "hook.output",
)

CONFIG_VARS: Final[tuple[ConfigVar, ...]] = (
    ConfigVar(
        "MEMHTML_ROOT",
        "The memory repo's root: a git repository holding the corpus and `.memhtml/`. Used when "
        "--repo is not given.",
        "~/memhtml",
    ),
    ConfigVar(
        "MEMHTML_REFUSE_ENV_ROOT",
        "Any value except blank, `0`, `false`, `no` or `off` (case-insensitive) makes --repo the "
        "only way to name the repo: a command that opens a repo without --repo is refused with "
        "ERR_REPO_REQUIRED at exit 2 before anything is opened. `manifest` and `help` are unaffected. "
        "Meant for CI, test suites and agent runtimes that export MEMHTML_ROOT to every child.",
        None,
    ),
    ConfigVar(
        "MEMHTML_OUTPUT",
        "`json` makes every command print the JSON envelope even when stdout is a terminal, like "
        "--json; for agents that run commands under a pseudo-terminal. Anything else: rendered "
        "output on a terminal, the envelope when piped.",
        None,
    ),
)

GUIDE: Final[tuple[GuideTopic, ...]] = (
    GuideTopic(
        "first-call",
        "Call `memhtml manifest` (or a bare `memhtml`) first: it lists every command, flag, response "
        "type, error code and configuration variable, and it answers with no repo, no database and no "
        "credentials, so it doubles as a liveness check. Every command prints exactly one JSON "
        "envelope on stdout: `{apiVersion, type, data}` on success, `{apiVersion, error, code, "
        "suggestions, retryable}` on failure. Exit 0 means done, 2 means change the command line, 1 "
        "means change the repo or the setup. Branch on `type` and `code`, never on the prose; "
        "`suggestions` are runnable command lines. Add `--dense` when the output goes into a prompt.",
    ),
    GuideTopic(
        "write-surfaces",
        "`memhtml write` stores one memory per call, as one HTML file and one git commit. It needs "
        "`--title`, `--type`, and either `--claim` (one sentence, optionally followed by `--body` "
        "paragraphs) or `--article-html` (markup you own, with exactly one `<mark>`). Text identical "
        "to an active memory stores nothing new: the answer names the existing path. The store "
        "chooses the location unless you pass `--path`; `--strict-path` refuses an unusable path "
        "instead of re-placing the memory. Check what landed with `memhtml read <path>` and the "
        "corpus as a whole with `memhtml status`.",
    ),
    GuideTopic(
        "authoring",
        "Keep one durable fact per memory: a decision and its reason, a correction, an incident and "
        "its fix, a stated preference, something you had to look up. Make the claim a single "
        "sentence that stands on its own out of context, and put evidence and sources in the body. "
        "Name what the fact is about with `--entity type:name`; give `--importance` (1-10) and "
        "`--confidence` (0-1) when they matter. Out-of-range values are refused, never stored. Do "
        "not store transcripts, session summaries, or what the code in front of you already says.",
    ),
)


# The original's commands this version does not have yet; naming one gets a plain answer, not a typo hint.
NOT_YET_BUILT: Final[tuple[str, ...]] = (
    "apply",
    "search",
    "recall",
    "correct",
    "link",
    "neighbors",
    "resolve",
    "archive",
    "reinforce",
    "list",
    "entity activity",
    "task add",
    "task status",
    "task list",
    "index rebuild",
    "index update",
    "index embed",
    "index status",
    "trace index",
    "trace search",
    "trace links",
    "sleep run",
    "sleep resume",
    "sleep review",
    "sleep merge",
    "sleep status",
    "sleep plan",
    "publish",
    "doctor",
    "eval discriminate",
    "exec",
    "state export",
    "state import",
    "agents-doc",
    "serve mcp",
    "integrations install",
    "integrations uninstall",
    "integrations list",
    "integrations doctor",
    "integrations shell",
    "hook",
)
