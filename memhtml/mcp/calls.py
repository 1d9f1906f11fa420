"""How each tool's checked arguments become the operation call its CLI command makes.

One function per tool: it renames the MCP arguments (the original's snake_case names) into the
operation's request, exactly as the CLI command builds it from its flags, and calls that one
operation. Nothing here decides anything an operation decides. Operations are imported inside the
functions, so listing tools loads neither git nor DuckDB code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from memhtml.mcp.params import Arguments
from memhtml.mcp.resources import pinned_uri
from memhtml.operations.retrieval import facet_pairs

if TYPE_CHECKING:
    from memhtml.operations.retrieval import RetrievalRequest
    from memhtml.operations.write import WriteRequest


class Answer(NamedTuple):
    """An operation's data; `partial` when some of a batch was stored and some refused (CLI exit 3)."""

    data: Mapping[str, Any]
    partial: bool = False


def write_request(args: Arguments, *, memory_type: str, **fields: Any) -> WriteRequest:
    """The WriteRequest the CLI's write door builds, from the original's MCP write fields: `body` is
    split into claim and paragraphs exactly as an `apply` op's body is."""
    from memhtml.html.prose import split_apply_body
    from memhtml.operations.write import WriteRequest

    body = args.text("body")
    claim, bodies = split_apply_body(body) if body is not None else (None, [])
    return WriteRequest(
        title=args.text("title") or "",
        memory_type=memory_type,
        claim=claim,
        bodies=bodies,
        article_html=args.text("article_html"),
        tags=args.texts("tags"),
        entities=args.texts("entities"),
        importance=args.integer("importance"),
        confidence=args.number("confidence"),
        event_at=args.text("event_at"),
        session_id=args.text("session_id"),
        prompt_id=args.text("prompt_id"),
        turn_uuid=args.text("turn_uuid"),
        redact=args.flag("redact"),
        strip_invisible=args.flag("strip_invisible"),
        **fields,
    )


def memory_write(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.write import write

    request = write_request(
        args,
        memory_type=args.text("memory_type") or "",
        path=args.text("path"),
        strict_path=args.flag("strict_path"),
        workspace=args.text("workspace"),
    )
    report = write(
        root,
        request,
        detect_conflicts=args.flag("detect_conflicts"),
        detect_near_duplicates=args.flag("detect_near_duplicates"),
    )
    return Answer(report.as_data())


def ops_stream(ops: Sequence[Mapping[str, Any]]) -> str:
    """The batch as the `apply` JSONL stream, one op per line, so op N is line N+1 of every message:
    `memory_type` is the MCP spelling of the stream's `type`, and `op` defaults to `write`."""
    lines = []
    for op in ops:
        renamed = {("type" if key == "memory_type" and "type" not in op else key): value for key, value in op.items()}
        lines.append(json.dumps({"op": "write", **renamed}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def memory_write_batch(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.apply import ApplyOptions, apply
    from memhtml.operations.batchinput import Cleaning, Provenance

    options = ApplyOptions(
        continue_on_error=args.flag("continue_on_error"),
        dry_run=args.flag("dry_run"),
        detect_conflicts=args.flag("detect_conflicts"),
        detect_near_duplicates=args.flag("detect_near_duplicates"),
        consolidate=args.text("consolidate"),
        provenance=Provenance(args.text("session_id"), args.text("prompt_id"), args.text("turn_uuid")),
        cleaning=Cleaning(redact=args.flag("redact"), strip_invisible=args.flag("strip_invisible")),
    )
    answer = apply(root, ops_stream(args.objects("ops")), options)
    return Answer(answer.data, partial=answer.partial)


def memory_read(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.read import read

    path = args.text("path") or ""
    return Answer(read(root, path, args.text("session_id"), args.text("prompt_id"), args.text("turn_uuid")))


def retrieval_request(args: Arguments, *, limit: int = 10, budget: int = 16000) -> RetrievalRequest:
    from memhtml.operations.retrieval import RetrievalRequest

    return RetrievalRequest(
        query=args.text("query") or "",
        memory_types=args.texts("memory_types"),
        workspace=args.text("workspace"),
        tags=args.texts("tags"),
        entity=args.text("entity"),
        facets=facet_pairs(args.texts("facets")),
        include_archived=args.flag("include_archived"),
        as_of=args.text("as_of"),
        limit=limit,
        budget=budget,
    )


def memory_search(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.retrieval import search

    return Answer(search(root, retrieval_request(args, limit=args.integer("limit") or 10)))


def memory_recall(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.retrieval import recall

    budget = args.integer("budget_chars")  # 0 is a budget (index lines only), so no `or` default here
    return Answer(recall(root, retrieval_request(args, budget=16000 if budget is None else budget)))


def memory_correct(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.lifecycle import correct

    # An empty type tells the operation to keep the target's, as the CLI's omitted --type does.
    request = write_request(args, memory_type=args.text("memory_type") or "")
    return Answer(correct(root, args.text("target_path") or "", request, args.text("reason")))


def memory_link(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.lifecycle import link

    return Answer(link(root, args.text("src_path") or "", args.text("rel") or "", args.text("dst_path") or ""))


def memory_neighbors(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.browse import neighbors

    depth, limit = args.integer("depth") or 1, args.integer("limit") or 200
    return Answer(neighbors(root, args.text("path") or "", depth, limit, args.texts("rels")))


def memory_resolve(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.browse import resolve

    resolved = resolve(root, args.text("path") or "")
    return Answer({**resolved, "pinnedUri": pinned_uri(resolved)})


def memory_archive(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.lifecycle import archive

    return Answer(archive(root, args.text("path") or "", args.text("reason") or ""))


def memory_reinforce(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.browse import reinforce

    return Answer(reinforce(root, args.texts("paths"), args.text("signal") or "neutral"))


def memory_list(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.browse import ListRequest, list_memories

    memory_type, tag = args.text("memory_type"), args.text("tag")
    request = ListRequest(
        memory_types=[memory_type] if memory_type else [],
        workspace=args.text("workspace"),
        tags=[tag] if tag else [],
        entity=args.text("entity"),
        facets=facet_pairs(args.texts("facets")),
        para=args.text("para"),
        limit=args.integer("limit") or 50,
        cursor=args.text("cursor"),
        include_archived=args.flag("include_archived"),
    )
    return Answer(list_memories(root, request))


def memory_status(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.status import status

    return Answer(status(root))


def task_add(root: Path, args: Arguments) -> Answer:
    from memhtml.html.prose import split_paragraphs
    from memhtml.operations.lifecycle import task_add, task_request

    body = args.text("body")
    request = task_request(
        args.text("title") or "",
        args.text("claim"),
        split_paragraphs(body) if body is not None else [],
        args.text("status") or "todo",
        due=args.text("due"),
        workspace=args.text("workspace"),
        tags=args.texts("tags"),
        entities=args.texts("entities"),
        session_id=args.text("session_id"),
        prompt_id=args.text("prompt_id"),
        turn_uuid=args.text("turn_uuid"),
        redact=args.flag("redact"),
        strip_invisible=args.flag("strip_invisible"),
    )
    return Answer(task_add(root, request))


def task_status(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.lifecycle import task_status

    return Answer(task_status(root, args.text("path") or "", args.text("status") or "", args.text("reason")))


def task_list(root: Path, args: Arguments) -> Answer:
    from memhtml.operations.lifecycle import task_list

    answer = task_list(
        root,
        status=args.text("status"),
        workspace=args.text("workspace"),
        due_before=args.text("due_before"),
        limit=args.integer("limit") or 50,
        cursor=args.text("cursor"),
        include_archived=args.flag("include_archived"),
    )
    return Answer(answer)
