"""The shapes of the command table (commands, arguments, flags, config variables) and the global flags.

Names, flag types and response types keep the original memhtml 0.15.1 contract; fields the original
does not publish (ranges, value formats) drive our stricter validation.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple

FlagType = Literal["string", "int", "boolean"]
# `reinforce --signal`, as the original.
REINFORCE_SIGNALS: Final[tuple[str, ...]] = ("positive", "negative", "neutral")
# Value grammars beyond the plain type, each checked by the grammar before any I/O:
# `number` a finite decimal (the original publishes `--confidence` as a string); `instant`
# `YYYY-MM-DD` or `YYYY-MM-DDThh:mm:ssZ`; `instant-or-commit` either of those or a commit sha of
# 4 to 40 hex digits; `entity` `type:name`; `facet` `name=value` with a non-blank name; `nonblank`
# any text that is not empty or whitespace only.
# What running a command does to the store. `writes` stores, corrects or retires memories: its failure
# says `stored: false` and its outcome. `changes` commits or changes other state (the state plane, git
# hooks, a new repository, an access count): its exit status says what landed even when its answer could
# not be printed. `reads` changes nothing, so an answer that could not be printed fails the command.
CommandEffect = Literal["reads", "changes", "writes"]
ValueFormat = Literal["number", "instant", "instant-or-commit", "entity", "facet", "nonblank"]

CLI_NAME: Final[str] = "memhtml"
CLI_SUMMARY: Final[str] = "Read and write the git-backed memory repo."
# The original release whose command contract this table keeps.
COMPAT_VERSION: Final[str] = "0.15.1"


class ArgSpec(NamedTuple):
    """One positional argument."""

    name: str
    description: str
    required: bool
    repeatable: bool = False
    values: tuple[str, ...] | None = None  # a closed vocabulary, checked at exit 2 like a flag's


class FlagSpec(NamedTuple):
    """One `--flag`. `minimum`/`maximum` (inclusive) and `value_format` are our validation extras.

    The grammar (`memhtml.cli.grammar_values`) refuses a value outside them at exit 2; the original
    publishes neither and clamps or defaults silently.
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
    value_format: ValueFormat | None = None

    @property
    def takes_value(self) -> bool:
        """String and int flags consume a value; booleans never do."""
        return self.type != "boolean"

    @property
    def instant(self) -> bool:
        """Whether the value is a point in time, checked before the other values (as the original)."""
        return self.value_format in ("instant", "instant-or-commit")


class ExactlyOneOf(NamedTuple):
    """Two flags of which exactly one must carry a non-blank value (write's claim/article choice)."""

    flags: tuple[str, str]
    # Why giving both is refused rather than one silently winning.
    conflict: str
    # How each flag's value is shown in the suggested command lines.
    placeholders: tuple[str, str]


class CommandSpec(NamedTuple):
    """One command: its contract (manifest entry) and whether running it opens a repository."""

    name: str
    summary: str
    args: tuple[ArgSpec, ...]
    flags: tuple[FlagSpec, ...]
    response_types: tuple[str, ...]
    examples: tuple[str, ...]
    opens_repo: bool
    exactly_one_of: tuple[ExactlyOneOf, ...] = ()
    reads_stdin: bool = False  # a lone positional `-` names stdin (not an argument of the contract)
    effect: CommandEffect = "reads"

    def flag(self, name: str) -> FlagSpec | None:
        """This command's own flag called `name` (globals are not included)."""
        return next((flag for flag in self.flags if flag.name == name), None)

    @property
    def writes_memories(self) -> bool:
        return self.effect == "writes"

    @property
    def changes_store(self) -> bool:
        """True for a command whose success is what it changed, not what it printed."""
        return self.effect != "reads"

    @property
    def family(self) -> str | None:
        """The noun of a two-word command (`index` for `index rebuild`), None for one-word commands."""
        noun, _, verb = self.name.partition(" ")
        return noun if verb else None


class ConfigVar(NamedTuple):
    """One configuration variable the CLI reads (the config module does the reading)."""

    name: str
    description: str
    fallback: str | None


class GuideTopic(NamedTuple):
    """One short piece of orientation prose shipped in the manifest."""

    topic: str
    body: str


GLOBAL_FLAGS: Final[tuple[FlagSpec, ...]] = (
    FlagSpec("dense", "boolean", "Minify JSON and drop null fields, for pasting into a context window.", False),
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
