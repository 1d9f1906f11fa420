"""The command table: every command, argument and flag the CLI accepts, with the manifest's metadata.

This is the one source the argument grammar, the manifest, per-command help and (later) AGENTS.md are
projected from. Names, flag types and response types keep the original memhtml 0.15.1 contract;
fields the original does not publish (ranges, value formats) drive our stricter validation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from memhtml.contracts.vocabulary import MEMORY_RELS, MEMORY_TYPES, PARA_BUCKETS

FlagType = Literal["string", "int", "boolean"]
# `reinforce --signal`, as the original.
REINFORCE_SIGNALS: Final[tuple[str, ...]] = ("positive", "negative", "neutral")
# Value grammars beyond the plain type, each checked by the grammar before any I/O:
# `number` a finite decimal (the original publishes `--confidence` as a string); `instant`
# `YYYY-MM-DD` or `YYYY-MM-DDThh:mm:ssZ`; `instant-or-commit` either of those or a commit sha of
# 4 to 40 hex digits; `entity` `type:name`; `facet` `name=value` with a non-blank name; `nonblank`
# any text that is not empty or whitespace only.
ValueFormat = Literal["number", "instant", "instant-or-commit", "entity", "facet", "nonblank"]

CLI_NAME: Final[str] = "memhtml"
CLI_SUMMARY: Final[str] = "Read and write the git-backed memory repo."
API_VERSION: Final[str] = "1"
# The original release whose command contract this table keeps.
COMPAT_VERSION: Final[str] = "0.15.1"


@dataclass(frozen=True)
class ArgSpec:
    """One positional argument."""

    name: str
    description: str
    required: bool
    repeatable: bool = False


@dataclass(frozen=True)
class FlagSpec:
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
        value_format="entity",
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
        "0-1. 1.0 is an unqualified assertion. A value that is not a number from 0 to 1 is refused at exit 2.",
        minimum=0,
        maximum=1,
        value_format="number",
    ),
    _SESSION_FLAG,
    _PROMPT_FLAG,
    _TURN_FLAG,
)

# search and recall cannot select `arc`: arcs are packed separately by recall (list can page them).
_RETRIEVAL_TYPES: Final[tuple[str, ...]] = tuple(name for name in MEMORY_TYPES if name != "arc")
_ENTITY_RULE = "A value without a non-empty type and name is refused at exit 2."
_FACET_DESCRIPTION = (
    "Restrict to memories carrying a `<dl>` facet, as name=value; the value may contain `=`, the name "
    "may not. Repeatable, and the composition is fixed: values under the SAME name broaden (--facet "
    "doc-type=runbook --facet doc-type=guide is either), DIFFERENT names narrow (--facet "
    "doc-type=runbook --facet tier=1 is both). This is the extension axis: memhtml's element and meta "
    "vocabularies are closed, so a consumer's own document kinds, states, and tiers live in "
    "`<dt>`/`<dd>` pairs and are queried here. The match is on the facet's TEXT with no case folding, "
    "so write the halves you mean to query. The stored form is the element's text content, which the "
    "parser collapses whitespace runs in and trims — so `<dd>runbook  rollback</dd>` is stored and "
    "queried single-spaced. There is no numeric comparison: a `<data value>` is indexed UNITLESS "
    "because the unit lives in the prose beside it, so the caller owns the unit and matches the text "
    "it wrote. A value with no `=`, or a blank name before it, is refused at exit 2; an empty value "
    "after it is allowed."
)
_QUERY_ARG = ArgSpec(
    "query",
    "Prose. A double-quoted span demands those words in that order; nothing else is syntax. A blank "
    "query is refused at exit 2: it could match nothing.",
    required=True,
)

# The scope flags search and recall share, in the original's order.
_RETRIEVAL_SCOPE: Final[tuple[FlagSpec, ...]] = (
    FlagSpec(
        "type",
        "string",
        "Restrict to one memory type. Repeatable; each occurrence broadens (ANY-of). `arc` is not "
        "one of them: recall packs arcs separately, and `memhtml list --type arc` pages them.",
        values=_RETRIEVAL_TYPES,
        repeatable=True,
    ),
    FlagSpec(
        "workspace",
        "string",
        "Restrict to one workspace. STRICT: a scoped query never returns a memory with no workspace.",
    ),
    FlagSpec(
        "tag",
        "string",
        "Restrict to memories carrying any of these tags. Repeatable; each broadens.",
        repeatable=True,
    ),
    FlagSpec(
        "entity",
        "string",
        "Restrict to memories carrying one `type:name` entity reference, e.g. service:checkout-api, "
        "the form a hit's `entities` publishes, so a hop is a copy. A scope matching nothing returns "
        f"no hits and says so; it never widens. {_ENTITY_RULE}",
        value_format="entity",
    ),
    FlagSpec("facet", "string", _FACET_DESCRIPTION, repeatable=True, value_format="facet"),
    FlagSpec(
        "include-archived",
        "boolean",
        "Include archived memories. Eviction is a `git mv`, so they still exist.",
        default=False,
    ),
    FlagSpec(
        "as-of",
        "string",
        "Point-in-time view. A date or instant (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ) returns what was "
        "believed valid then, on the event-time axis: coalesce(valid_from, event_at, created_at) <= "
        "as-of < valid_until, since-superseded memories included and marked supersededBy. A commit sha "
        "(4 to 40 hex digits, full or abbreviated) returns what the corpus held at that commit, on "
        "the transaction-time axis; it is resolved against git when the command runs. A 4-to-40-digit "
        "number such as 2026 reads as a sha, so write a year as 2026-01-01. Anything else is refused "
        "at exit 2.",
        value_format="instant-or-commit",
    ),
)

# Vectors arrive with a later capability; until then the embedding switches keep the original's
# command lines working and change nothing.
_EMBED_FLAG = FlagSpec(
    "embed",
    "boolean",
    "Fill missing vectors (--no-embed: leave new or changed chunks without one). Vectors are a later "
    "capability of this version: none is written yet, so --embed and --no-embed are both accepted "
    "and change nothing.",
    default=True,
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
        examples=("memhtml help search", "memhtml help index rebuild --json", "memhtml search --help"),
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
        name="search",
        summary="Ranked search: lexical, recency and salience arms fused by RRF, then MMR. Returns "
        "only memories that match the query.",
        args=(_QUERY_ARG,),
        flags=(
            *_RETRIEVAL_SCOPE,
            FlagSpec(
                "limit",
                "int",
                "Hits to return, 1 to 200. Anything else is refused at exit 2, never clamped.",
                default=10,
                minimum=1,
                maximum=200,
            ),
        ),
        response_types=("memory.hits",),
        examples=(
            'memhtml search "why the VIP drain was reverted" --limit 5',
            "memhtml search rollback --type semantic --type procedural --tag infra",
            "memhtml search deploy --facet doc-type=runbook --include-archived --dense",
        ),
        opens_repo=True,
    ),
    CommandSpec(
        name="recall",
        summary="A disclosure pack under a character budget: arcs and memories folded separately.",
        args=(_QUERY_ARG,),
        flags=(
            *_RETRIEVAL_SCOPE,
            FlagSpec(
                "budget",
                "int",
                "Characters of quoted body, 0 to 1000000; 0 discloses no body and lists every match "
                "as an index line. Arcs get their own envelope on top. A negative or non-integer "
                "value is refused at exit 2.",
                default=16000,
                minimum=0,
                maximum=1_000_000,
            ),
        ),
        response_types=("recall.pack",),
        examples=(
            'memhtml recall "what do we know about the checkout service" --budget 8000',
            "memhtml recall incident --workspace payments --as-of 2026-08-01T00:00:00Z",
        ),
        opens_repo=True,
    ),
    CommandSpec(
        name="neighbors",
        summary="The memory graph around one path, to a fixed depth of at most two hops.",
        args=(ArgSpec("path", "The center of the neighborhood.", required=True),),
        flags=(
            FlagSpec(
                "depth",
                "int",
                "1 or 2. Never more: any other value is refused at exit 2, not clamped.",
                default=1,
                minimum=1,
                maximum=2,
            ),
            FlagSpec(
                "limit",
                "int",
                "Distinct nodes to return, 1 to 200 (anything else is refused at exit 2, not "
                "clamped). `nodesDropped` counts the paths the walk reached and this limit turned "
                "away, and `scanSaturated` says the walk stopped at its own 10000-row cap, which no "
                "limit recovers.",
                default=200,
                minimum=1,
                maximum=200,
            ),
            FlagSpec(
                "rel",
                "string",
                "Restrict to these rels. Repeatable.",
                values=MEMORY_RELS,
                repeatable=True,
            ),
        ),
        response_types=("memory.neighbors",),
        examples=(
            "memhtml neighbors areas/inbox/retry-budget.html",
            "memhtml neighbors areas/inbox/retry-budget.html --depth 2 --rel supersedes --rel caused_by",
        ),
        opens_repo=True,
    ),
    CommandSpec(
        name="resolve",
        summary="Follow a possibly-moved path forward to the memory that carries the fact now.",
        args=(ArgSpec("path", "The path a receipt, citation, or older answer recorded.", required=True),),
        flags=(),
        response_types=("memory.resolved",),
        examples=("memhtml resolve resources/gateway/retry-budget.html",),
        opens_repo=True,
    ),
    CommandSpec(
        name="reinforce",
        summary="Bump access bookkeeping, gated by a 900-second per-path cooldown that a plain `read` does not trip.",
        args=(
            ArgSpec(
                "path",
                "A memory path. Repeat the argument for more.",
                required=True,
                repeatable=True,
            ),
        ),
        flags=(
            FlagSpec(
                "signal",
                "string",
                "`neutral` bumps access without claiming the memory was right.",
                values=REINFORCE_SIGNALS,
                default="neutral",
            ),
        ),
        response_types=("memory.reinforced",),
        examples=(
            "memhtml reinforce areas/inbox/retry-budget.html --signal positive",
            "memhtml reinforce areas/inbox/a.html resources/db/b.html",
        ),
        opens_repo=True,
    ),
    CommandSpec(
        name="list",
        summary="Page through the corpus by type, workspace, tag, entity, facet, or PARA bucket.",
        args=(),
        flags=(
            FlagSpec(
                "type",
                "string",
                "One memory type. `arc` pages the authored and synthesized arcs alike.",
                values=MEMORY_TYPES,
            ),
            FlagSpec("workspace", "string", "One workspace."),
            FlagSpec("tag", "string", "One tag."),
            FlagSpec(
                "entity",
                "string",
                f"One `type:name` entity reference. {_ENTITY_RULE}",
                value_format="entity",
            ),
            FlagSpec("facet", "string", _FACET_DESCRIPTION, repeatable=True, value_format="facet"),
            FlagSpec("para", "string", "One PARA bucket.", values=PARA_BUCKETS),
            FlagSpec(
                "limit",
                "int",
                "Rows per page, 1 to 1000. Anything else is refused at exit 2, never clamped.",
                default=50,
                minimum=1,
                maximum=1000,
            ),
            FlagSpec(
                "cursor",
                "string",
                "The `nextCursor` from the previous page: the last path returned. A blank value is refused at exit 2.",
                value_format="nonblank",
            ),
            FlagSpec("include-archived", "boolean", "Include archived memories.", default=False),
        ),
        response_types=("memory.list",),
        examples=(
            "memhtml list --type episodic --limit 20",
            "memhtml list --facet doc-type=daily-journal --include-archived",
        ),
        opens_repo=True,
    ),
    CommandSpec(
        name="index rebuild",
        summary="Rebuild the index (.memhtml/index.duckdb) from the git tree at HEAD, then the dirty "
        "working tree. Destroys nothing outside .memhtml/.",
        args=(),
        flags=(
            _EMBED_FLAG,
            FlagSpec(
                "force",
                "boolean",
                "Run a rebuild that cannot write vectors over a store that already carries them; "
                "without it that call is refused with ERR_REBUILD_NO_EMBED_REFUSED, because a store "
                "with vectors was embedded on purpose. Vectors are a later capability of this "
                "version: no index carries them yet, so --force is accepted and changes nothing.",
                default=False,
            ),
        ),
        response_types=("index.report",),
        examples=(
            "memhtml index rebuild --no-embed",
            "memhtml index rebuild --no-embed --force",
            "memhtml index rebuild --repo /srv/memory",
        ),
        opens_repo=True,
    ),
    CommandSpec(
        name="index update",
        summary="Index only what moved since the recorded watermark, plus the dirty working tree.",
        args=(),
        flags=(_EMBED_FLAG,),
        response_types=("index.report",),
        examples=("memhtml index update",),
        opens_repo=True,
    ),
    CommandSpec(
        name="index status",
        summary="The index watermark, the vector space it was built in, and its row counts.",
        args=(),
        flags=(),
        response_types=("index.report",),
        examples=("memhtml index status --dense",),
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
    CommandSpec(
        name="state export",
        summary="Write .memhtml/state/access.jsonl, the only durable copy of the state plane, and commit.",
        args=(),
        flags=(),
        response_types=("state.export",),
        examples=("memhtml state export",),
        opens_repo=True,
    ),
    CommandSpec(
        name="state import",
        summary="Replay the committed sidecar into the state plane (.memhtml/state.duckdb). Counters "
        "merge by max, never last-wins.",
        args=(),
        flags=(),
        response_types=("state.import",),
        examples=("memhtml state import",),
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
        "The memory repo's root: a git repository holding the corpus and `.memhtml/`. Used when --repo is not given.",
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
    "correct",
    "link",
    "archive",
    "entity activity",
    "task add",
    "task status",
    "task list",
    "index embed",
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
    "agents-doc",
    "serve mcp",
    "integrations install",
    "integrations uninstall",
    "integrations list",
    "integrations doctor",
    "integrations shell",
    "hook",
)
