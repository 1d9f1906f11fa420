"""The tool table: every MCP tool, its arguments, and the CLI command whose operation it calls.

Each tool names the CLI command that calls the same `memhtml.operations` function, and its mapping
in `calls` only renames arguments and builds that operation's request, so the two doors cannot
disagree about what a call does. Names and arguments are the original's (`memory_*`), plus the task
tools and the CLI's additions (`event_at`, `detect_conflicts`, `dry_run`, scope filters on
`memory_recall`). Descriptions start with the command table's summary of the command.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, NamedTuple

from memhtml.contracts.vocabulary import MEMORY_TYPES
from memhtml.mcp import calls
from memhtml.mcp.calls import Answer
from memhtml.mcp.params import Arguments, Param, flag_rule, input_schema, positional_rule
from memhtml.surface.commands import command_named

# Agents may not write `arc`: an agent naming an arc asserts a conclusion the corpus has not earned
# (the CLI admits it on the operator surface only).
AGENT_TYPES: Final[tuple[str, ...]] = tuple(name for name in MEMORY_TYPES if name != "arc")
BODY_OR_ARTICLE: Final[tuple[str, str]] = ("body", "article_html")


class Tool(NamedTuple):
    name: str
    command: str  # the CLI command whose operation this tool calls
    params: tuple[Param, ...]
    run: Callable[[Path, Arguments], Answer]
    read_only: bool
    note: str = ""  # what the MCP door adds to the command's summary
    exactly_one: tuple[str, str] | None = None

    @property
    def writes(self) -> bool:
        """A write's failure says `stored: false` and its outcome, as its CLI command's does (the table says which)."""
        spec = command_named(self.command)
        return spec is not None and spec.writes_memories

    @property
    def description(self) -> str:
        spec = command_named(self.command)
        summary = spec.summary if spec is not None else ""
        return f"{summary} {self.note}".strip()

    def schema(self) -> dict[str, Any]:
        return input_schema(self.params)


def _text(name: str, description: str, *, required: bool = False, rule: tuple[str, str] | None = None) -> Param:
    return Param(name, "string", description, required=required, rule=flag_rule(*rule) if rule else None)


# ---------------------------------------------------------------- arguments several tools share

_SESSION = _text("session_id", "The agent session; stamped into the head and indexed as a link.")
_PROMPT = _text("prompt_id", "The prompt within that session.")
_TURN = _text("turn_uuid", "The turn within that session.")
_PROVENANCE = (_SESSION, _PROMPT, _TURN)
_BODY = Param(
    "body",
    "string",
    "Prose: the first sentence is the claim (up to the first . ! or ? followed by whitespace), the rest "
    "are paragraphs split on blank lines; a ``` fence stays whole. Exactly one of body or article_html.",
    prose="claim-and-paragraphs",
)
_ARTICLE = _text(
    "article_html",
    "Raw <article> markup used verbatim, with exactly one <mark> in its first <p> or <li>. Exactly one "
    "of body or article_html.",
)
_TAGS = Param("tags", "strings", "Tags; the first routes an unplaced resource memory.", rule=flag_rule("write", "tag"))
_ENTITIES = Param(
    "entities",
    "strings",
    "`type:name` entity references, e.g. service:checkout-api.",
    rule=flag_rule("write", "entity"),
)
_IMPORTANCE = Param("importance", "integer", "1-10, a display ordinal.", rule=flag_rule("write", "importance"))
_CONFIDENCE = Param(
    "confidence", "number", "0-1; 1 is an unqualified assertion.", rule=flag_rule("write", "confidence")
)
_EVENT_AT = _text(
    "event_at", "When the fact happened (world time), YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ.", rule=("write", "event-at")
)
_DETECT_CONFLICTS = Param(
    "detect_conflicts",
    "boolean",
    "Report the active memories this one may conflict with, typed into six classes; never changes what is written.",
    default=False,
)

_DETECT_NEAR_DUPLICATES = Param(
    "detect_near_duplicates",
    "boolean",
    "Report active memories whose meaning is nearly the same (by embedding); report-only.",
    default=False,
)
_REDACT = Param(
    "redact",
    "boolean",
    "Store each value shaped like a secret as [REDACTED:<kind>] (listed in `redacted`) instead of "
    "refusing the write with ERR_SECRET_DETECTED.",
    default=False,
)
_STRIP_INVISIBLE = Param(
    "strip_invisible",
    "boolean",
    "Remove invisible and bidi-control characters (listed in `stripped`) instead of refusing the write "
    "with ERR_INVISIBLE_CHARACTERS.",
    default=False,
)
_SAFETY = (_REDACT, _STRIP_INVISIBLE)


def _scope(command: str) -> tuple[Param, ...]:
    """The retrieval scope search and recall share, with the command's own rules."""
    return (
        Param("memory_types", "strings", "Restrict to these types (any of them).", rule=flag_rule(command, "type")),
        _text("workspace", "Restrict to one workspace; a scoped query never returns memories without one."),
        Param("tags", "strings", "Restrict to memories carrying any of these tags.", rule=flag_rule(command, "tag")),
        _text("entity", "Restrict to one `type:name` entity reference.", rule=(command, "entity")),
        Param(
            "facets",
            "strings",
            "`name=value` facets: values under the same name broaden, different names narrow.",
            rule=flag_rule(command, "facet"),
        ),
        Param("include_archived", "boolean", "Include archived memories.", default=False),
        _text(
            "as_of",
            "A date or instant (event time) or a commit sha (what the corpus held at that commit).",
            rule=(command, "as-of"),
        ),
    )


# ---------------------------------------------------------------- the table

_OP_FIELDS: Final[dict[str, str]] = {
    "title": "string",
    "memory_type": "string",
    "body": "string",
    "article_html": "string",
    "path": "string",
    "strict_path": "boolean",
    "workspace": "string",
    "tags": "array",
    "entities": "array",
    "importance": "integer",
    "confidence": "number",
    "event_at": "string",
    "status": "string",
    "due": "string",
    "session_id": "string",
    "prompt_id": "string",
    "turn_uuid": "string",
    "redact": "boolean",
    "strip_invisible": "boolean",
}
_OP_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "description": "One write: the fields of memory_write (plus `status` and `due` for a task).",
    "properties": {
        name: {"type": kind, "items": {"type": "string"}} if kind == "array" else {"type": kind}
        for name, kind in _OP_FIELDS.items()
    },
    "required": ["title", "memory_type"],
}

TOOLS: Final[tuple[Tool, ...]] = (
    Tool(
        "memory_write",
        "write",
        (
            _text("title", "The memory's title; becomes the <title> and the filename slug.", required=True),
            Param(
                "memory_type",
                "string",
                "The memory type (`arc` is not writable by agents).",
                required=True,
                rule=flag_rule("write", "type", values=AGENT_TYPES),
            ),
            _BODY,
            _ARTICLE,
            _text("path", "An explicit path; an occupied one is refused (ERR_WRITE_CONFLICT), never overwritten."),
            Param("strict_path", "boolean", "Refuse an unusable path instead of placing the memory.", default=False),
            _text("workspace", "Routes the memory to projects/<workspace>/."),
            _TAGS,
            _ENTITIES,
            _IMPORTANCE,
            _CONFIDENCE,
            _EVENT_AT,
            *_PROVENANCE,
            *_SAFETY,
            _DETECT_CONFLICTS,
            _DETECT_NEAR_DUPLICATES,
        ),
        calls.memory_write,
        read_only=False,
        note="Every answer says `stored` and `outcome` (written, unchanged, updated); a refusal is an error result.",
        exactly_one=BODY_OR_ARTICLE,
    ),
    Tool(
        "memory_write_batch",
        "apply",
        (
            Param("ops", "objects", "The writes, in order.", required=True, items=_OP_SCHEMA, door_only=True),
            Param(
                "continue_on_error",
                "boolean",
                "Store every op that can be stored; some refused makes the answer `partial` (an error result).",
                default=False,
            ),
            Param("dry_run", "boolean", "Plan and answer without writing anything.", default=False),
            _DETECT_CONFLICTS,
            _DETECT_NEAR_DUPLICATES,
            _text("consolidate", "`last-wins`: one value per frame slot.", rule=("apply", "consolidate")),
            *_PROVENANCE,
            *_SAFETY,
        ),
        calls.memory_write_batch,
        read_only=False,
        note="Atomic unless continue_on_error: one refused op stores nothing and the error result carries "
        "every op's result under `data`.",
    ),
    Tool(
        "memory_read",
        "read",
        (_text("path", "Repo-relative path of the memory.", required=True), *_PROVENANCE),
        calls.memory_read,
        read_only=False,  # an explicit read is counted as an access
    ),
    Tool(
        "memory_search",
        "search",
        (
            _text("query", "Prose; a double-quoted span demands those words in that order.", required=True),
            Param("limit", "integer", "Hits to return.", rule=flag_rule("search", "limit"), default=10),
            *_scope("search"),
        ),
        calls.memory_search,
        read_only=True,
    ),
    Tool(
        "memory_recall",
        "recall",
        (
            _text("query", "Prose; a double-quoted span demands those words in that order.", required=True),
            Param(
                "budget_chars",
                "integer",
                "Characters of quoted body; 0 lists every match as an index line.",
                rule=flag_rule("recall", "budget"),
                default=16000,
            ),
            *_scope("recall"),
        ),
        calls.memory_recall,
        read_only=True,
    ),
    Tool(
        "memory_correct",
        "correct",
        (
            Param("target_path", "string", "The active memory to supersede.", required=True, table_name="target"),
            _text("title", "The corrected memory's title.", required=True),
            _text("reason", "Why the fact changed; recorded in the commit.", required=True),
            _BODY,
            _ARTICLE,
            Param(
                "memory_type",
                "string",
                "The corrected memory's type; defaults to the target's.",
                rule=flag_rule("correct", "type", values=AGENT_TYPES),
            ),
            _TAGS,
            _ENTITIES,
            _IMPORTANCE,
            _CONFIDENCE,
            _EVENT_AT,
            *_PROVENANCE,
            *_SAFETY,
        ),
        calls.memory_correct,
        read_only=False,
        exactly_one=BODY_OR_ARTICLE,
    ),
    Tool(
        "memory_link",
        "link",
        (
            Param("src_path", "string", "The memory that states the edge.", required=True, table_name="src"),
            Param("rel", "string", "The edge type.", required=True, rule=positional_rule("link", "rel")),
            Param("dst_path", "string", "The memory the edge points at.", required=True, table_name="dst"),
        ),
        calls.memory_link,
        read_only=False,
        note="Task rels (blocks, subtask_of) link two tasks.",
    ),
    Tool(
        "memory_neighbors",
        "neighbors",
        (
            _text("path", "The center of the neighborhood.", required=True),
            Param("depth", "integer", "Hops, 1 or 2.", rule=flag_rule("neighbors", "depth"), default=1),
            Param("rels", "strings", "Restrict to these rels.", rule=flag_rule("neighbors", "rel")),
            Param("limit", "integer", "Distinct nodes to return.", rule=flag_rule("neighbors", "limit"), default=200),
        ),
        calls.memory_neighbors,
        read_only=True,
    ),
    Tool(
        "memory_resolve",
        "resolve",
        (_text("path", "The path a receipt, citation or older answer recorded.", required=True),),
        calls.memory_resolve,
        read_only=True,
        note="`pinned_uri` is a memhtml://at/<commit>/<path> citation that cannot move.",
    ),
    Tool(
        "memory_archive",
        "archive",
        (
            _text("path", "The active memory to archive.", required=True),
            _text("reason", "Why it is retired.", required=True, rule=("archive", "reason")),
        ),
        calls.memory_archive,
        read_only=False,
    ),
    Tool(
        "memory_reinforce",
        "reinforce",
        (
            Param("paths", "strings", "The memories used.", required=True, table_name="path"),
            _text("signal", "Whether the memory was right.", required=True, rule=("reinforce", "signal")),
        ),
        calls.memory_reinforce,
        read_only=False,
    ),
    Tool(
        "memory_list",
        "list",
        (
            _text("memory_type", "One memory type.", rule=("list", "type")),
            _text("workspace", "One workspace."),
            _text("tag", "One tag."),
            _text("entity", "One `type:name` entity reference.", rule=("list", "entity")),
            Param("facets", "strings", "`name=value` facets.", rule=flag_rule("list", "facet")),
            _text("para", "One PARA bucket.", rule=("list", "para")),
            Param("limit", "integer", "Rows per page.", rule=flag_rule("list", "limit"), default=50),
            _text("cursor", "The `next_cursor` of the previous page.", rule=("list", "cursor")),
            Param("include_archived", "boolean", "Include archived memories.", default=False),
        ),
        calls.memory_list,
        read_only=True,
    ),
    Tool("memory_status", "status", (), calls.memory_status, read_only=True),
    Tool(
        "task_add",
        "task add",
        (
            _text("title", "The task's title.", required=True),
            _text("claim", "The task's one-sentence statement; defaults to the title."),
            Param("body", "string", "Prose paragraphs after the claim, split on blank lines.", prose="paragraphs"),
            Param("status", "string", "The opening status.", rule=flag_rule("task add", "status"), default="todo"),
            _text("due", "The deadline, YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ.", rule=("task add", "due")),
            _text("workspace", "Routes the task to projects/<workspace>/tasks/."),
            Param("tags", "strings", "Tags (never used for placement).", rule=flag_rule("task add", "tag")),
            Param("entities", "strings", "`type:name` entity references.", rule=flag_rule("task add", "entity")),
            *_PROVENANCE,
            *_SAFETY,
        ),
        calls.task_add,
        read_only=False,
    ),
    Tool(
        "task_status",
        "task status",
        (
            _text("path", "The task.", required=True),
            Param("status", "string", "The new status.", required=True, rule=positional_rule("task status", "status")),
            _text("reason", "Why; the archive commit's reason when the task is done."),
        ),
        calls.task_status,
        read_only=False,
    ),
    Tool(
        "task_list",
        "task list",
        (
            _text("status", "One task status.", rule=("task list", "status")),
            _text("workspace", "One workspace."),
            _text(
                "due_before", "Only tasks due strictly before this day or instant.", rule=("task list", "due-before")
            ),
            Param("limit", "integer", "Rows per page.", rule=flag_rule("task list", "limit"), default=50),
            _text("cursor", "The `next_cursor` of the previous page.", rule=("task list", "cursor")),
            Param("include_archived", "boolean", "Include done (archived) tasks.", default=False),
        ),
        calls.task_list,
        read_only=True,
    ),
)

TOOLS_BY_NAME: Final[dict[str, Tool]] = {tool.name: tool for tool in TOOLS}
