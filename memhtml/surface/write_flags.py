"""The flags every write door shares (write, apply, correct, task add): authoring, placement, metadata,
session provenance and the safety notary's two permissions, declared once so their wording and ranges
never drift apart."""

from __future__ import annotations

from typing import Final

from memhtml.contracts.vocabulary import MEMORY_TYPES
from memhtml.surface.command_shapes import ExactlyOneOf, FlagSpec

SESSION_FLAG = FlagSpec("session-id", "string", "The Claude Code session. Stamped into the head AND indexed as a link.")
PROMPT_FLAG = FlagSpec("prompt-id", "string", "The prompt within that session.")
TURN_FLAG = FlagSpec("turn-uuid", "string", "The turn within that session.")

CLAIM_OR_ARTICLE = ExactlyOneOf(
    flags=("claim", "article-html"),
    conflict="--article-html is the whole article, so a --claim beside it would be silently discarded",
    placeholders=("<sentence>", "'<p>…</p>'"),
)

EVENT_AT_FLAG = FlagSpec(
    "event-at",
    "string",
    "When the fact happened (world time), YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ. Written as the "
    "article's first <time datetime>, where every memhtml reads event time; the element carries no "
    "text, so the content hash (and dedupe) is unchanged. Restating a stored fact with a new event "
    "time updates it in place.",
    value_format="instant",
)

REDACT_FLAG = FlagSpec(
    "redact",
    "boolean",
    "Store the memory with each value shaped like a secret (AWS, GitHub, GitLab, Slack, Google and "
    "Stripe keys, JWTs, private-key blocks, bearer tokens, passwords in URLs, high-entropy values after "
    "`password=`, `token=`, `secret=`, `api_key=`, …) replaced by `[REDACTED:<kind>]`; the answer "
    "lists them in `redacted` [{kind, field}]. Without it such a write is REFUSED with "
    "ERR_SECRET_DETECTED and nothing is written: a secret that reaches a commit stays in git history. "
    "The refusal names the kind, the field and the offset, never the secret.",
    default=False,
)
STRIP_INVISIBLE_FLAG = FlagSpec(
    "strip-invisible",
    "boolean",
    "Remove invisible and bidirectional-control characters (zero-width spaces, joiners and BOMs, "
    "bidi embeddings, overrides and isolates, tag characters, other Unicode format characters); the "
    "answer lists them in `stripped` [{character, field}]. Without it such a write is REFUSED with "
    "ERR_INVISIBLE_CHARACTERS naming the code points and where: they can hide or reorder what a "
    "reader sees. A joiner between two non-ASCII letters or emoji (Persian and Indic words, family "
    "emoji) is text, not a finding.",
    default=False,
)

WRITE_FLAGS: Final[tuple[FlagSpec, ...]] = (
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
    EVENT_AT_FLAG,
    SESSION_FLAG,
    PROMPT_FLAG,
    TURN_FLAG,
    REDACT_FLAG,
    STRIP_INVISIBLE_FLAG,
)

DETECT_CONFLICTS_FLAG = FlagSpec(
    "detect-conflicts",
    "boolean",
    "Report-only: the active memories this one may conflict with (sharing an entity or a frame key), "
    "each typed into one of six classes (temporal update, preference change, scope difference, "
    "precision difference, logical contradiction, source conflict) with a suggested action. Never "
    "changes what is written; resolve with `memhtml correct`.",
    default=False,
)

DETECT_NEAR_DUPLICATES_FLAG = FlagSpec(
    "detect-near-duplicates",
    "boolean",
    "Report-only: active memories (and, in a batch, earlier ops) whose embedding is at least 0.92 "
    "cosine-similar, at most three, best first, as `near_duplicates` [{path, batch_index, similarity, "
    "claim}]. A pair that differs in a negation, a number or a variant qualifier is never reported "
    "(the divergence veto); tasks and arcs are not compared; an identical memory is a dedupe, not a "
    "near-duplicate. With the embedder off or unusable every value is null (not checked) and "
    "`near_duplicates_degraded` is true.",
    default=False,
)
