"""The write lifecycle's commands: batches, corrections, archiving, links and tasks.

`commands` splices these into the table at the original's positions; `batch` is our alias of `apply`.
"""

from __future__ import annotations

from typing import Final

from memhtml.contracts.vocabulary import MEMORY_RELS, MEMORY_TYPES, TASK_RELS, TASK_STATUSES
from memhtml.surface.command_shapes import ArgSpec, CommandSpec, FlagSpec
from memhtml.surface.write_flags import (
    CLAIM_OR_ARTICLE,
    DETECT_CONFLICTS_FLAG,
    DETECT_NEAR_DUPLICATES_FLAG,
    EVENT_AT_FLAG,
    PROMPT_FLAG,
    REDACT_FLAG,
    SESSION_FLAG,
    STRIP_INVISIBLE_FLAG,
    TURN_FLAG,
    WRITE_FLAGS,
)

_APPLY_FLAGS: Final[tuple[FlagSpec, ...]] = (
    FlagSpec(
        "file",
        "string",
        "JSONL ops, one JSON object per line (`-` or no --file: stdin). An unreadable file is refused at exit 2.",
    ),
    FlagSpec(
        "continue-on-error",
        "boolean",
        "Best effort: store every op that can be stored and report the refused ones in place. The "
        "answer is `partial: true` at exit 3 when some ops were refused. Without it the batch is "
        "atomic: one refused op stores nothing, and the command fails (exit 1) with that op's code "
        "and every op's result under `data`.",
        default=False,
    ),
    FlagSpec(
        "dry-run",
        "boolean",
        "Plan the batch and answer exactly what it would do (paths, outcomes, conflicts) without "
        "writing, committing or indexing anything.",
        default=False,
    ),
    DETECT_CONFLICTS_FLAG,
    DETECT_NEAR_DUPLICATES_FLAG,
    FlagSpec(
        "consolidate",
        "string",
        '`last-wins`: ops on the same frame slot ("the X of Y is …") keep only the last value, and '
        "an active memory on that slot is archived as superseded, all in the batch's ONE commit.",
        values=("last-wins",),
    ),
    SESSION_FLAG,
    PROMPT_FLAG,
    TURN_FLAG,
    FlagSpec(
        "redact",
        "boolean",
        '`--redact` of `write` for every op (an op\'s own `"redact"` wins): each secret is stored as '
        "`[REDACTED:<kind>]` and the op's result lists it in `redacted`. Without it an op carrying a "
        "secret is refused with ERR_SECRET_DETECTED (the batch, unless --continue-on-error).",
        default=False,
    ),
    FlagSpec(
        "strip-invisible",
        "boolean",
        '`--strip-invisible` of `write` for every op (an op\'s own `"strip_invisible"` wins): invisible '
        "and bidi-control characters are removed and the op's result lists them in `stripped`. Without "
        "it such an op is refused with ERR_INVISIBLE_CHARACTERS.",
        default=False,
    ),
)

APPLY_COMMANDS: Final[tuple[CommandSpec, ...]] = (
    CommandSpec(
        name="apply",
        effect="writes",
        summary="Write many memories from a JSONL op stream: ONE commit, ONE index update, per-op results.",
        args=(),
        flags=_APPLY_FLAGS,
        response_types=("batch.applied",),
        examples=(
            "memhtml apply --file ops.jsonl",
            "memhtml apply - --continue-on-error --dense",
            "memhtml apply --file ops.jsonl --dry-run",
        ),
        opens_repo=True,
        reads_stdin=True,
    ),
    CommandSpec(
        name="batch",
        effect="writes",
        summary="The same as `apply` (JSONL ops, one commit, one index pass).",
        args=(),
        flags=_APPLY_FLAGS,
        response_types=("batch.applied",),
        examples=("memhtml batch --file ops.jsonl",),
        opens_repo=True,
        reads_stdin=True,
    ),
)

_TARGET_ARG = ArgSpec("target", "The memory to supersede (an active memory path).", required=True)

CORRECT_COMMAND: Final[CommandSpec] = CommandSpec(
    name="correct",
    effect="writes",
    summary="Supersede a memory: write the new file and archive the target in ONE commit.",
    args=(_TARGET_ARG,),
    flags=(
        FlagSpec("title", "string", "The corrected memory's title.", required=True),
        *(flag for flag in WRITE_FLAGS if flag.name in ("claim", "body", "article-html")),
        FlagSpec(
            "type",
            "string",
            "The corrected memory's type; defaults to the target's.",
            values=MEMORY_TYPES,
        ),
        FlagSpec(
            "reason",
            "string",
            "Why the fact changed. Recorded in the commit (`Memhtml-Reason` trailer) and shown by `why`.",
        ),
        *(flag for flag in WRITE_FLAGS if flag.name in ("tag", "entity", "importance", "confidence")),
        EVENT_AT_FLAG,
        SESSION_FLAG,
        PROMPT_FLAG,
        TURN_FLAG,
        REDACT_FLAG,
        STRIP_INVISIBLE_FLAG,
    ),
    response_types=("memory.corrected",),
    examples=(
        'memhtml correct resources/gateway/retry-budget.html --title "Retry budget" '
        '--claim "The retry budget of the gateway is 4." --reason "lowered after the incident"',
    ),
    opens_repo=True,
    exactly_one_of=(CLAIM_OR_ARTICLE,),
)

LINK_COMMAND: Final[CommandSpec] = CommandSpec(
    name="link",
    effect="writes",
    summary="Add an authored edge to the source file and commit it. Idempotent.",
    args=(
        ArgSpec("src", "The memory that states the edge (the file that carries the <link>).", required=True),
        ArgSpec(
            "rel",
            "The edge type: a memory rel between two non-task memories, or a task rel between two tasks.",
            required=True,
            values=MEMORY_RELS + TASK_RELS,
        ),
        ArgSpec("dst", "The memory the edge points at.", required=True),
    ),
    flags=(),
    response_types=("memory.linked",),
    examples=("memhtml link areas/inbox/a.html caused_by resources/db/b.html",),
    opens_repo=True,
)

ARCHIVE_COMMAND: Final[CommandSpec] = CommandSpec(
    name="archive",
    effect="writes",
    summary="Soft-evict: `git mv` into archive/<YYYY>/ with the archive stamps. Never a delete.",
    args=(ArgSpec("path", "The active memory to archive.", required=True),),
    flags=(
        FlagSpec(
            "reason",
            "string",
            "Why it is retired; goes into the commit subject. A blank reason is refused at exit 2.",
            required=True,
            value_format="nonblank",
        ),
    ),
    response_types=("memory.archived",),
    examples=('memhtml archive resources/custom/explicit-one.html --reason "no longer relevant"',),
    opens_repo=True,
)

_TASK_WRITE_FLAGS: Final[tuple[FlagSpec, ...]] = (
    FlagSpec("title", "string", "The task's title.", required=True),
    FlagSpec("claim", "string", "The task's one-sentence statement; defaults to the title."),
    FlagSpec("body", "string", "A prose paragraph after the claim. Repeatable.", repeatable=True),
    FlagSpec(
        "status",
        "string",
        "The opening status. A task opened `done` is written straight into the archive, in the same commit.",
        values=TASK_STATUSES,
        default="todo",
    ),
    FlagSpec("due", "string", "The deadline, YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ.", value_format="instant"),
    FlagSpec("workspace", "string", "Routes the task to projects/<slug>/tasks/."),
    FlagSpec("tag", "string", "A tag (never used for placement). Repeatable.", repeatable=True),
    *(flag for flag in WRITE_FLAGS if flag.name == "entity"),
    SESSION_FLAG,
    PROMPT_FLAG,
    TURN_FLAG,
    REDACT_FLAG,
    STRIP_INVISIBLE_FLAG,
)

TASK_COMMANDS: Final[tuple[CommandSpec, ...]] = (
    CommandSpec(
        name="task add",
        effect="writes",
        summary="Open a task: a `task` memory in projects/<ws>/tasks/ or areas/inbox/tasks/.",
        args=(),
        flags=_TASK_WRITE_FLAGS,
        response_types=("task.written",),
        examples=(
            'memhtml task add --title "Rotate the deploy key" --claim "The deploy key expires on the first." '
            "--due 2026-10-01",
        ),
        opens_repo=True,
    ),
    CommandSpec(
        name="task status",
        effect="writes",
        summary="Move a task's status. `done` stamps AND archives it, in one commit.",
        args=(
            ArgSpec("path", "The task.", required=True),
            ArgSpec("status", "The new status.", required=True, values=TASK_STATUSES),
        ),
        flags=(FlagSpec("reason", "string", "Why; becomes the archive commit's reason when the task is done."),),
        response_types=("task.updated",),
        examples=("memhtml task status projects/payments/tasks/rotate-the-deploy-key.html done --reason rotated",),
        opens_repo=True,
    ),
    CommandSpec(
        name="task list",
        summary="The task working set: a direct indexed scan with blockers, never ranked retrieval.",
        args=(),
        flags=(
            FlagSpec("status", "string", "One task status.", values=TASK_STATUSES),
            FlagSpec("workspace", "string", "One workspace."),
            FlagSpec(
                "due-before",
                "string",
                "Only tasks due strictly before this day or instant.",
                value_format="instant",
            ),
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
                "The `nextCursor` of the previous page (a leading `/` is allowed); an empty or blank value is "
                "the first page.",
            ),
            FlagSpec("include-archived", "boolean", "Include done (archived) tasks.", default=False),
            FlagSpec(
                "detected",
                "boolean",
                "Also list tasks detected by curation. Curation does not exist in this version, so "
                "there are none and the flag changes nothing.",
                default=False,
            ),
        ),
        response_types=("task.list",),
        examples=("memhtml task list --status todo", "memhtml task list --due-before 2026-12-01"),
        opens_repo=True,
    ),
)


ENTITY_ACTIVITY_COMMAND: Final[CommandSpec] = CommandSpec(
    name="entity activity",
    summary="Every entity with its file count and its last activity, newest first. Report only.",
    args=(),
    flags=(
        FlagSpec("type", "string", "Only entities of this type (the part before the colon), e.g. service."),
        FlagSpec(
            "limit",
            "int",
            "Entities to return, 1 to 500. Anything else is refused at exit 2, never clamped.",
            default=50,
            minimum=1,
            maximum=500,
        ),
        FlagSpec("include-archived", "boolean", "Count archived memories too.", default=False),
    ),
    response_types=("entity.activity",),
    examples=("memhtml entity activity --type service --limit 20",),
    opens_repo=True,
)

WHY_COMMAND: Final[CommandSpec] = CommandSpec(
    name="why",
    summary="Where a memory came from: the commit and author that wrote it, its session/prompt/turn, "
    "every commit since, and the facts it replaced and that replaced it. From git and the files alone.",
    args=(ArgSpec("path", "A memory path, active or archived.", required=True),),
    flags=(),
    response_types=("memory.why",),
    examples=("memhtml why resources/gateway/retry-budget.html",),
    opens_repo=True,
)

CONFLICTS_AUDIT_COMMAND: Final[CommandSpec] = CommandSpec(
    name="conflicts audit",
    summary="Type every candidate pair of active memories (shared entity or frame key) into the six "
    "conflict classes. Report only; says how many memories and pairs it examined.",
    args=(),
    flags=(),
    response_types=("conflicts.audit",),
    examples=("memhtml conflicts audit --dense",),
    opens_repo=True,
)
