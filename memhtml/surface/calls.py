"""The operation call of each command both doors serve, built once from the call's arguments.

One function per command: it reads the arguments by the command table's names (`CallArguments`, with
the table's defaults), builds that operation's request and calls the one operation. The CLI's command
handlers and the MCP tools both come here, so a default, a renamed field or a normalisation (one
`--type` of `list` as a list of one, `name=value` facets as pairs) cannot differ between them. What
stays with a door is its own spelling: where the batch's ops come from (a file or stdin, or the tool's
`ops` array), a progress display, how a result is printed.

Operations are imported inside the functions, so importing this module loads neither git nor DuckDB.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memhtml.surface.arguments import CallArguments

if TYPE_CHECKING:
    from memhtml.operations.apply import ApplyAnswer
    from memhtml.operations.browse import MemoryList, Neighborhood, Reinforcement, Resolution
    from memhtml.operations.indexing import PhaseProgress
    from memhtml.operations.lifecycle import Archived, Corrected, Linked, TaskAdded, TaskMoved, TaskPage
    from memhtml.operations.read import MemoryDetail
    from memhtml.operations.retrieval import RecallPack, RetrievalRequest, SearchHits
    from memhtml.operations.status import StatusHealth
    from memhtml.operations.write import WriteReport, WriteRequest


def _session(args: CallArguments) -> tuple[str | None, str | None, str | None]:
    """The session, prompt and turn a write records (plain values: `Provenance` is the batch's, and its
    module is not one a single write loads)."""
    return args.text("session-id"), args.text("prompt-id"), args.text("turn-uuid")


def _cleaning(args: CallArguments) -> tuple[bool, bool]:
    """Whether secrets are redacted and invisible characters stripped."""
    return args.flag("redact"), args.flag("strip-invisible")


def _memory_request(args: CallArguments) -> WriteRequest:
    """The memory `write` and `correct` both state: its text, type, head and provenance."""
    from memhtml.operations.write import WriteRequest

    session_id, prompt_id, turn_uuid = _session(args)
    redact, strip_invisible = _cleaning(args)
    return WriteRequest(
        title=args.text("title") or "",
        memory_type=args.text("type") or "",
        claim=args.text("claim"),
        bodies=args.texts("body"),
        article_html=args.text("article-html"),
        tags=args.texts("tag"),
        entities=args.texts("entity"),
        importance=args.integer("importance"),
        confidence=args.number("confidence"),
        event_at=args.text("event-at"),
        session_id=session_id,
        prompt_id=prompt_id,
        turn_uuid=turn_uuid,
        redact=redact,
        strip_invisible=strip_invisible,
    )


def write_request(args: CallArguments) -> WriteRequest:
    """The memory and where it goes (only `write` places one: `correct` keeps the target's place)."""
    return _memory_request(args)._replace(
        path=args.text("path"), strict_path=args.flag("strict-path"), workspace=args.text("workspace")
    )


def write(root: Path, args: CallArguments) -> WriteReport:
    from memhtml.operations.write import write

    return write(
        root,
        write_request(args),
        detect_conflicts=args.flag("detect-conflicts"),
        detect_near_duplicates=args.flag("detect-near-duplicates"),
    )


def apply(root: Path, args: CallArguments, stream: str, progress: PhaseProgress | None = None) -> ApplyAnswer:
    """`stream` is the batch as `apply` JSONL, wherever the door read it from."""
    from memhtml.operations.apply import ApplyOptions, apply
    from memhtml.operations.batchinput import Cleaning, Provenance

    redact, strip_invisible = _cleaning(args)

    options = ApplyOptions(
        continue_on_error=args.flag("continue-on-error"),
        dry_run=args.flag("dry-run"),
        detect_conflicts=args.flag("detect-conflicts"),
        detect_near_duplicates=args.flag("detect-near-duplicates"),
        consolidate=args.text("consolidate"),
        provenance=Provenance(*_session(args)),
        cleaning=Cleaning(redact=redact, strip_invisible=strip_invisible),
    )
    return apply(root, stream, options, progress=progress)


def read(root: Path, args: CallArguments) -> MemoryDetail:
    from memhtml.operations.read import read

    return read(root, args.text("path") or "", *_session(args))


def _retrieval_request(args: CallArguments, **sizes: int) -> RetrievalRequest:
    from memhtml.operations.retrieval import RetrievalRequest, facet_pairs

    return RetrievalRequest(
        query=args.text("query") or "",
        memory_types=args.texts("type"),
        workspace=args.text("workspace"),
        tags=args.texts("tag"),
        entity=args.text("entity"),
        facets=facet_pairs(args.texts("facet")),
        include_archived=args.flag("include-archived"),
        as_of=args.text("as-of"),
        **sizes,
    )


def search(root: Path, args: CallArguments) -> SearchHits:
    from memhtml.operations.retrieval import search

    return search(root, _retrieval_request(args, limit=_table_integer(args, "limit")))


def recall(root: Path, args: CallArguments) -> RecallPack:
    from memhtml.operations.retrieval import recall

    return recall(root, _retrieval_request(args, budget=_table_integer(args, "budget")))


def correct(root: Path, args: CallArguments) -> Corrected:
    from memhtml.operations.lifecycle import correct

    # An empty type tells the operation to keep the target's.
    return correct(root, args.text("target") or "", _memory_request(args), args.text("reason"))


def link(root: Path, args: CallArguments) -> Linked:
    from memhtml.operations.lifecycle import link

    return link(root, args.text("src") or "", args.text("rel") or "", args.text("dst") or "")


def archive(root: Path, args: CallArguments) -> Archived:
    from memhtml.operations.lifecycle import archive

    return archive(root, args.text("path") or "", args.text("reason") or "")


def neighbors(root: Path, args: CallArguments) -> Neighborhood:
    from memhtml.operations.browse import neighbors

    depth, limit = _table_integer(args, "depth"), _table_integer(args, "limit")
    return neighbors(root, args.text("path") or "", depth, limit, args.texts("rel"))


def resolve(root: Path, args: CallArguments) -> Resolution:
    from memhtml.operations.browse import resolve

    return resolve(root, args.text("path") or "")


def reinforce(root: Path, args: CallArguments) -> Reinforcement:
    from memhtml.operations.browse import reinforce

    return reinforce(root, args.texts("path"), args.text("signal") or "")


def list_memories(root: Path, args: CallArguments) -> MemoryList:
    from memhtml.operations.browse import ListRequest, list_memories
    from memhtml.operations.retrieval import facet_pairs

    memory_type, tag = args.text("type"), args.text("tag")
    request = ListRequest(
        memory_types=[memory_type] if memory_type else [],
        workspace=args.text("workspace"),
        tags=[tag] if tag else [],
        entity=args.text("entity"),
        facets=facet_pairs(args.texts("facet")),
        para=args.text("para"),
        limit=_table_integer(args, "limit"),
        cursor=args.text("cursor"),
        include_archived=args.flag("include-archived"),
    )
    return list_memories(root, request)


def status(root: Path, args: CallArguments) -> StatusHealth:
    from memhtml.operations.status import status

    return status(root)


def task_add(root: Path, args: CallArguments) -> TaskAdded:
    from memhtml.operations.lifecycle import task_add, task_request

    session_id, prompt_id, turn_uuid = _session(args)
    redact, strip_invisible = _cleaning(args)
    request = task_request(
        args.text("title") or "",
        args.text("claim"),
        args.texts("body"),
        args.text("status") or "",
        due=args.text("due"),
        workspace=args.text("workspace"),
        tags=args.texts("tag"),
        entities=args.texts("entity"),
        session_id=session_id,
        prompt_id=prompt_id,
        turn_uuid=turn_uuid,
        redact=redact,
        strip_invisible=strip_invisible,
    )
    return task_add(root, request)


def task_status(root: Path, args: CallArguments) -> TaskMoved:
    from memhtml.operations.lifecycle import task_status

    return task_status(root, args.text("path") or "", args.text("status") or "", args.text("reason"))


def task_list(root: Path, args: CallArguments) -> TaskPage:
    from memhtml.operations.lifecycle import task_list

    return task_list(
        root,
        status=args.text("status"),
        workspace=args.text("workspace"),
        due_before=args.text("due-before"),
        limit=_table_integer(args, "limit"),
        cursor=args.text("cursor"),
        include_archived=args.flag("include-archived"),
    )


def _table_integer(args: CallArguments, name: str) -> int:
    """An int flag the command table gives a default, so it always has a value."""
    value = args.integer(name)
    if value is None:
        raise KeyError(f"--{name} has no default in the command table")
    return value
