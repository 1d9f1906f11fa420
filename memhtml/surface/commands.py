"""The command table: every command, argument and flag the CLI accepts.

This is the one source the argument grammar, the manifest, per-command help and AGENTS.md are
projected from. The shapes live in `command_shapes`, the write doors' shared flags in `write_flags`, the
write lifecycle's commands in `lifecycle_commands`, the store-health commands in `health_commands`, and
the manifest's other facts (response types, configuration, the guide) in `manifest_facts`.
"""

from __future__ import annotations

from typing import Final

from memhtml.contracts.envelopes import API_VERSION
from memhtml.contracts.vocabulary import MEMORY_RELS, MEMORY_TYPES, PARA_BUCKETS
from memhtml.surface.command_shapes import (
    CLI_NAME,
    CLI_SUMMARY,
    COMPAT_VERSION,
    GLOBAL_FLAGS,
    REINFORCE_SIGNALS,
    ArgSpec,
    CommandSpec,
    ConfigVar,
    ExactlyOneOf,
    FlagSpec,
    FlagType,
    GuideTopic,
    ValueFormat,
)
from memhtml.surface.health_commands import ADDED_HEALTH_COMMANDS, HEALTH_COMMANDS
from memhtml.surface.lifecycle_commands import (
    APPLY_COMMANDS,
    ARCHIVE_COMMAND,
    CONFLICTS_AUDIT_COMMAND,
    CORRECT_COMMAND,
    ENTITY_ACTIVITY_COMMAND,
    LINK_COMMAND,
    TASK_COMMANDS,
    WHY_COMMAND,
)
from memhtml.surface.write_flags import (
    CLAIM_OR_ARTICLE,
    DETECT_CONFLICTS_FLAG,
    DETECT_NEAR_DUPLICATES_FLAG,
    PROMPT_FLAG,
    TURN_FLAG,
    WRITE_FLAGS,
)

__all__ = [
    "API_VERSION",
    "CLI_NAME",
    "CLI_SUMMARY",
    "COMPAT_VERSION",
    "GLOBAL_FLAGS",
    "REINFORCE_SIGNALS",
    "ArgSpec",
    "CommandSpec",
    "ConfigVar",
    "ExactlyOneOf",
    "FlagSpec",
    "FlagType",
    "GuideTopic",
    "ValueFormat",
]

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
    "it wrote. A value with no `=`, or a blank name before it, is refused at exit 2; an empty or blank "
    "value (`tier=`) is no filter: that facet is ignored."
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

_EMBED_FLAG = FlagSpec(
    "embed",
    "boolean",
    "Give new or changed chunks a vector with the configured embedder (MEMHTML_EMBED); --no-embed "
    "leaves them without one (`index embed` fills them later). Vectors are keyed by content, so "
    "unchanged and renamed memories are never re-embedded either way.",
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
        name="version",
        summary="Print this CLI's version and the memhtml command contract it keeps; `memhtml --version` "
        "and `memhtml -V` are the same.",
        args=(),
        flags=(),
        response_types=("cli.version",),
        examples=("memhtml version", "memhtml --version"),
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
        effect="changes",
        summary="Scaffold a memory repo at --repo/$MEMHTML_ROOT: git init, PARA dirs, merge driver.",
        args=(),
        flags=(),
        response_types=("repo.init",),
        examples=("memhtml init --repo ~/memhtml",),
        opens_repo=True,
    ),
    CommandSpec(
        name="write",
        effect="writes",
        summary="Write one memory. Content-hash duplicates return the existing path, uncommitted.",
        args=(),
        flags=(*WRITE_FLAGS, DETECT_CONFLICTS_FLAG, DETECT_NEAR_DUPLICATES_FLAG),
        response_types=("memory.written",),
        examples=(
            'memhtml write --title "One writer and many readers share the index" --claim "WAL admits '
            'a single writer at a time and any number of concurrent readers." --type semantic --tag infra',
            'memhtml write --title "Checkout retries" --claim "The checkout service retries twice." '
            "--type procedural --entity service:checkout --workspace payments",
        ),
        opens_repo=True,
        exactly_one_of=(CLAIM_OR_ARTICLE,),
    ),
    *APPLY_COMMANDS,
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
            PROMPT_FLAG,
            TURN_FLAG,
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
    CORRECT_COMMAND,
    LINK_COMMAND,
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
    ARCHIVE_COMMAND,
    WHY_COMMAND,
    CommandSpec(
        name="reinforce",
        effect="changes",
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
                "The `nextCursor` from the previous page: the last path returned (a leading `/` is allowed). "
                "An empty or blank value is the first page, so a paging loop may pass its last `nextCursor` "
                "from the first round on.",
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
    ENTITY_ACTIVITY_COMMAND,
    *TASK_COMMANDS,
    CONFLICTS_AUDIT_COMMAND,
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
                "Accepted for the original's command lines. A rebuild here keeps every vector whose "
                "chunk survives, so a --no-embed rebuild destroys no vector and is never refused: "
                "--force changes nothing.",
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
        name="index embed",
        summary="Fill in missing vectors without a rebuild, with the configured embedder. When the "
        "index holds vectors of another space (a different MEMHTML_EMBED), they are replaced, never "
        "mixed.",
        args=(),
        flags=(
            FlagSpec(
                "dry-run",
                "boolean",
                "Count what would be embedded; write nothing.",
                default=False,
            ),
        ),
        response_types=("index.report",),
        examples=("memhtml index embed", "memhtml index embed --dry-run"),
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
    *HEALTH_COMMANDS,
    CommandSpec(
        name="eval discriminate",
        summary="The refusable retrieval gate: every probe must outrank its own wrong-fact twins.",
        args=(),
        flags=(
            FlagSpec(
                "mode",
                "string",
                "`fake`: the deterministic hash embedder (what CI runs). `live`: the static model shipped "
                "with the package (offline, no credentials).",
                default="fake",
                values=("fake", "live"),
            ),
            FlagSpec(
                "seed",
                "int",
                "The fixture's seed (default 20260802): the same seed gives the same corpus and probes.",
                minimum=0,
                maximum=4294967295,
            ),
            FlagSpec(
                "now",
                "int",
                "The fixture's clock, in milliseconds since the epoch (default: 2026-11-30).",
                minimum=0,
                maximum=32503680000000,
            ),
            FlagSpec(
                "size",
                "int",
                "Base memories in the fixture (twins come on top).",
                default=200,
                minimum=1,
                maximum=20000,
            ),
            FlagSpec(
                "probes",
                "int",
                "Targets probed, each with up to three wrong twins.",
                default=36,
                minimum=0,
                maximum=2000,
            ),
            FlagSpec(
                "mrr-floor",
                "string",
                "The MRR the gate needs, a number from 0 to 1.",
                default="0.85",
                minimum=0,
                maximum=1,
                value_format="number",
            ),
        ),
        response_types=("eval.discrimination",),
        examples=("memhtml eval discriminate", "memhtml eval discriminate --mode live --seed 7"),
        opens_repo=False,
    ),
    CommandSpec(
        name="eval locomo",
        summary="Answer-free retrieval quality on the LoCoMo release: every turn written as a memory "
        "through apply (one temporary store per conversation), every question of categories 1-4 "
        "searched, hit@1/5/10, recall@5/10/20 and MRR per category, against the original and the "
        "audit-corrected evidence. Never opens a repo.",
        args=(),
        flags=(
            FlagSpec(
                "data",
                "string",
                "The LoCoMo release: locomo10.json or the folder holding it. The audit's errors.json "
                "beside it is applied when present. Read only; nothing of it is stored.",
                required=True,
                value_format="nonblank",
            ),
            FlagSpec(
                "mode",
                "string",
                "`live`: the static model shipped with the package (the real measurement). `fake`: the "
                "deterministic hash embedder.",
                default="live",
                values=("fake", "live"),
            ),
            FlagSpec(
                "conversations",
                "int",
                "Score only the first N conversations (default: all).",
                minimum=1,
                maximum=10000,
            ),
            FlagSpec(
                "limit",
                "int",
                "Search depth: hits asked for per question (recall@20 needs 20).",
                default=20,
                minimum=1,
                maximum=100,
            ),
        ),
        response_types=("eval.locomo",),
        examples=(
            "memhtml eval locomo --data ../shared/data/locomo",
            "memhtml eval locomo --data locomo10.json --conversations 2 --mode fake",
        ),
        opens_repo=False,
    ),
    CommandSpec(
        name="eval supersession",
        summary="A seeded benchmark of facts that change over time, written through correct and plain "
        "writes with event times: the current value must rank first, --as-of a past day the value "
        "valid then (single- and multi-hop), and both sides of a recorded contradiction come back "
        "together. Accuracy per case. Never opens a repo.",
        args=(),
        flags=(
            FlagSpec(
                "seed",
                "int",
                "The benchmark's seed (default 20261130): the same seed gives the same chains and probes.",
                minimum=0,
                maximum=4294967295,
            ),
            FlagSpec(
                "mode",
                "string",
                "`live`: the static model shipped with the package. `fake`: the deterministic hash embedder.",
                default="live",
                values=("fake", "live"),
            ),
        ),
        response_types=("eval.supersession",),
        examples=("memhtml eval supersession", "memhtml eval supersession --seed 7 --mode fake"),
        opens_repo=False,
    ),
    CommandSpec(
        name="state export",
        effect="changes",
        summary="Write .memhtml/state/access.jsonl, the only durable copy of the state plane, and commit.",
        args=(),
        flags=(),
        response_types=("state.export",),
        examples=("memhtml state export",),
        opens_repo=True,
    ),
    CommandSpec(
        name="state import",
        effect="changes",
        summary="Replay the committed sidecar into the state plane (.memhtml/state.duckdb). Counters "
        "merge by max, never last-wins.",
        args=(),
        flags=(),
        response_types=("state.import",),
        examples=("memhtml state import",),
        opens_repo=True,
    ),
    CommandSpec(
        name="serve mcp",
        summary="Run the `memhtml-mcp` stdio server over this repo: 16 tools (the original's 13 memory "
        "tools plus task_add, task_status, task_list) and 2 resource templates, answering exactly as the "
        "CLI does.",
        args=(),
        flags=(),
        response_types=("serve.exit",),
        examples=("memhtml serve mcp --repo ~/memhtml",),
        opens_repo=True,
    ),
)

COMMANDS_BY_NAME: Final[dict[str, CommandSpec]] = {command.name: command for command in COMMANDS}


def command_named(name: str) -> CommandSpec | None:
    """The command whose full name (one or two words) is `name`."""
    return COMMANDS_BY_NAME.get(name)


# Commands the original does not have.
ADDED_COMMANDS: Final[tuple[str, ...]] = (
    *("version", "batch", "why", "conflicts audit", "eval locomo", "eval supersession"),
    *(command.name for command in ADDED_HEALTH_COMMANDS),
)

# The original's commands this version does not have yet; naming one gets a plain answer, not a typo hint.
NOT_YET_BUILT: Final[tuple[str, ...]] = (
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
    "exec",
    "agents-doc",
    "integrations install",
    "integrations uninstall",
    "integrations list",
    "integrations doctor",
    "integrations shell",
    "hook",
)
