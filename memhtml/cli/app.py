"""The typer commands of memhtml: each parses its options, calls one operation and renders the answer.

The contract grammar (`memhtml.cli.grammar`) has already refused every usage error before typer runs,
so typer here only converts values and dispatches; the global flags travel in the `Door`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer
from typer.models import CommandInfo

from memhtml.cli.door import Door
from memhtml.cli.health import register_health_commands

if TYPE_CHECKING:
    from memhtml.operations.retrieval import RetrievalRequest

app = typer.Typer(add_completion=False, no_args_is_help=False, pretty_exceptions_enable=False)
index_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
state_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
task_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.add_typer(index_app, name="index")
app.add_typer(task_app, name="task")
entity_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.add_typer(entity_app, name="entity")
conflicts_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.add_typer(conflicts_app, name="conflicts")
app.add_typer(state_app, name="state")
eval_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.add_typer(eval_app, name="eval")
serve_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.add_typer(serve_app, name="serve")
register_health_commands(app)


# Options several write doors share, declared once.
ClaimOption = Annotated[str | None, typer.Option("--claim")]
BodiesOption = Annotated[list[str] | None, typer.Option("--body")]
EntitiesOption = Annotated[list[str] | None, typer.Option("--entity")]
TagListOption = Annotated[list[str] | None, typer.Option("--tag")]
SessionOption = Annotated[str | None, typer.Option("--session-id")]
PromptOption = Annotated[str | None, typer.Option("--prompt-id")]
TurnOption = Annotated[str | None, typer.Option("--turn-uuid")]
RedactOption = Annotated[bool, typer.Option("--redact/--no-redact")]
StripInvisibleOption = Annotated[bool, typer.Option("--strip-invisible/--no-strip-invisible")]


def _door(context: typer.Context) -> Door:
    door = context.obj
    assert isinstance(door, Door)
    return door


@app.command("init")
def init_command(context: typer.Context) -> None:
    """Scaffold a memory repo: git init, PARA dirs, merge driver."""
    from memhtml.operations.init import init

    door = _door(context)
    assert door.root is not None
    door.answer("repo.init", init(door.root))


@app.command("write")
def write_command(
    context: typer.Context,
    title: Annotated[str, typer.Option("--title")],
    memory_type: Annotated[str, typer.Option("--type")],
    claim: ClaimOption = None,
    body: BodiesOption = None,
    article_html: Annotated[str | None, typer.Option("--article-html")] = None,
    path: Annotated[str | None, typer.Option("--path")] = None,
    strict_path: Annotated[bool, typer.Option("--strict-path/--no-strict-path")] = False,
    workspace: Annotated[str | None, typer.Option("--workspace")] = None,
    tag: TagListOption = None,
    entity: EntitiesOption = None,
    importance: Annotated[int | None, typer.Option("--importance")] = None,
    confidence: Annotated[float | None, typer.Option("--confidence")] = None,
    event_at: Annotated[str | None, typer.Option("--event-at")] = None,
    session_id: SessionOption = None,
    prompt_id: PromptOption = None,
    turn_uuid: TurnOption = None,
    redact: RedactOption = False,
    strip_invisible: StripInvisibleOption = False,
    detect_conflicts: Annotated[bool, typer.Option("--detect-conflicts/--no-detect-conflicts")] = False,
    detect_near_duplicates: Annotated[
        bool, typer.Option("--detect-near-duplicates/--no-detect-near-duplicates")
    ] = False,
) -> None:
    """Write one memory; an identical active memory is reported, not stored twice."""
    from memhtml.operations.write import WriteRequest, write

    door = _door(context)
    assert door.root is not None
    request = WriteRequest(
        title=title,
        memory_type=memory_type,
        claim=claim,
        bodies=body or [],
        article_html=article_html,
        path=path,
        strict_path=strict_path,
        workspace=workspace,
        tags=tag or [],
        entities=entity or [],
        importance=importance,
        confidence=confidence,
        session_id=session_id,
        prompt_id=prompt_id,
        turn_uuid=turn_uuid,
        event_at=event_at,
        redact=redact,
        strip_invisible=strip_invisible,
    )
    answer = write(door.root, request, detect_conflicts=detect_conflicts, detect_near_duplicates=detect_near_duplicates)
    door.answer("memory.written", answer.as_data())


def apply_command(
    context: typer.Context,
    stdin_marker: Annotated[str | None, typer.Argument()] = None,
    file: Annotated[str | None, typer.Option("--file")] = None,
    continue_on_error: Annotated[bool, typer.Option("--continue-on-error/--no-continue-on-error")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run/--no-dry-run")] = False,
    detect_conflicts: Annotated[bool, typer.Option("--detect-conflicts/--no-detect-conflicts")] = False,
    detect_near_duplicates: Annotated[
        bool, typer.Option("--detect-near-duplicates/--no-detect-near-duplicates")
    ] = False,
    consolidate: Annotated[str | None, typer.Option("--consolidate")] = None,
    session_id: SessionOption = None,
    prompt_id: PromptOption = None,
    turn_uuid: TurnOption = None,
    redact: RedactOption = False,
    strip_invisible: StripInvisibleOption = False,
) -> None:
    """Write many memories from JSONL: one commit, one index pass, an answer per op."""
    from memhtml.cli.envelope import EXIT_OK, EXIT_PARTIAL
    from memhtml.cli.streams import read_ops_stream
    from memhtml.operations.apply import ApplyOptions, apply
    from memhtml.operations.batchinput import Cleaning, Provenance

    door = _door(context)
    assert door.root is not None
    stream = read_ops_stream(door.command, file, stdin_marker)
    options = ApplyOptions(
        continue_on_error=continue_on_error,
        dry_run=dry_run,
        detect_conflicts=detect_conflicts,
        detect_near_duplicates=detect_near_duplicates,
        consolidate=consolidate,
        provenance=Provenance(session_id, prompt_id, turn_uuid),
        cleaning=Cleaning(redact=redact, strip_invisible=strip_invisible),
    )
    answer = apply(door.root, stream, options)
    door.answer("batch.applied", answer.data, EXIT_PARTIAL if answer.partial else EXIT_OK)


app.command("apply")(apply_command)
app.command("batch")(apply_command)


@app.command("read")
def read_command(
    context: typer.Context,
    path: Annotated[str, typer.Argument()],
    session_id: SessionOption = None,
    prompt_id: PromptOption = None,
    turn_uuid: TurnOption = None,
) -> None:
    """Read one memory: its metas, links, article and format warnings."""
    from memhtml.operations.read import read

    door = _door(context)
    assert door.root is not None
    door.answer("memory.detail", read(door.root, path, session_id, prompt_id, turn_uuid))


@app.command("status")
def status_command(context: typer.Context) -> None:
    """Corpus health: HEAD, dirty state, counts by type, edges."""
    from memhtml.operations.status import status

    door = _door(context)
    assert door.root is not None
    door.answer("status.health", status(door.root))


def _facets(values: list[str] | None) -> list[tuple[str, str]]:
    from memhtml.operations.retrieval import facet_pairs

    return facet_pairs(values or [])


# The scope options search and recall share, declared once.
TypesOption = Annotated[list[str] | None, typer.Option("--type")]
WorkspaceOption = Annotated[str | None, typer.Option("--workspace")]
TagsOption = Annotated[list[str] | None, typer.Option("--tag")]
EntityOption = Annotated[str | None, typer.Option("--entity")]
FacetsOption = Annotated[list[str] | None, typer.Option("--facet")]
ArchivedOption = Annotated[bool, typer.Option("--include-archived/--no-include-archived")]
AsOfOption = Annotated[str | None, typer.Option("--as-of")]


def _retrieval(
    query: str,
    memory_type: list[str] | None,
    workspace: str | None,
    tag: list[str] | None,
    entity: str | None,
    facet: list[str] | None,
    include_archived: bool,
    as_of: str | None,
    *,
    limit: int = 10,
    budget: int = 16000,
) -> RetrievalRequest:
    from memhtml.operations.retrieval import RetrievalRequest

    return RetrievalRequest(
        query=query,
        memory_types=memory_type or [],
        workspace=workspace,
        tags=tag or [],
        entity=entity,
        facets=_facets(facet),
        include_archived=include_archived,
        as_of=as_of,
        limit=limit,
        budget=budget,
    )


@app.command("search")
def search_command(
    context: typer.Context,
    query: Annotated[str, typer.Argument()],
    memory_type: TypesOption = None,
    workspace: WorkspaceOption = None,
    tag: TagsOption = None,
    entity: EntityOption = None,
    facet: FacetsOption = None,
    include_archived: ArchivedOption = False,
    as_of: AsOfOption = None,
    limit: Annotated[int, typer.Option("--limit")] = 10,
) -> None:
    """Relevant memories for a query, best first."""
    from memhtml.operations.retrieval import search

    door = _door(context)
    assert door.root is not None
    request = _retrieval(query, memory_type, workspace, tag, entity, facet, include_archived, as_of, limit=limit)
    door.answer("memory.hits", search(door.root, request))


@app.command("recall")
def recall_command(
    context: typer.Context,
    query: Annotated[str, typer.Argument()],
    memory_type: TypesOption = None,
    workspace: WorkspaceOption = None,
    tag: TagsOption = None,
    entity: EntityOption = None,
    facet: FacetsOption = None,
    include_archived: ArchivedOption = False,
    as_of: AsOfOption = None,
    budget: Annotated[int, typer.Option("--budget")] = 16000,
) -> None:
    """The best memories quoted under a character budget, the rest as index lines."""
    from memhtml.operations.retrieval import recall

    door = _door(context)
    assert door.root is not None
    request = _retrieval(query, memory_type, workspace, tag, entity, facet, include_archived, as_of, budget=budget)
    door.answer("recall.pack", recall(door.root, request))


@app.command("correct")
def correct_command(
    context: typer.Context,
    target: Annotated[str, typer.Argument()],
    title: Annotated[str, typer.Option("--title")],
    claim: ClaimOption = None,
    body: BodiesOption = None,
    article_html: Annotated[str | None, typer.Option("--article-html")] = None,
    memory_type: Annotated[str | None, typer.Option("--type")] = None,
    reason: Annotated[str | None, typer.Option("--reason")] = None,
    tag: TagListOption = None,
    entity: EntitiesOption = None,
    importance: Annotated[int | None, typer.Option("--importance")] = None,
    confidence: Annotated[float | None, typer.Option("--confidence")] = None,
    event_at: Annotated[str | None, typer.Option("--event-at")] = None,
    session_id: SessionOption = None,
    prompt_id: PromptOption = None,
    turn_uuid: TurnOption = None,
    redact: RedactOption = False,
    strip_invisible: StripInvisibleOption = False,
) -> None:
    """Supersede a memory: the corrected one is written and the target archived, in one commit."""
    from memhtml.operations.lifecycle import correct
    from memhtml.operations.write import WriteRequest

    door = _door(context)
    assert door.root is not None
    request = WriteRequest(
        title=title,
        memory_type=memory_type or "",
        claim=claim,
        bodies=body or [],
        article_html=article_html,
        tags=tag or [],
        entities=entity or [],
        importance=importance,
        confidence=confidence,
        session_id=session_id,
        prompt_id=prompt_id,
        turn_uuid=turn_uuid,
        event_at=event_at,
        redact=redact,
        strip_invisible=strip_invisible,
    )
    door.answer("memory.corrected", correct(door.root, target, request, reason))


@app.command("link")
def link_command(
    context: typer.Context,
    src: Annotated[str, typer.Argument()],
    rel: Annotated[str, typer.Argument()],
    dst: Annotated[str, typer.Argument()],
) -> None:
    """Add a typed edge from one memory to another and commit it; idempotent."""
    from memhtml.operations.lifecycle import link

    door = _door(context)
    assert door.root is not None
    door.answer("memory.linked", link(door.root, src, rel, dst))


@app.command("archive")
def archive_command(
    context: typer.Context,
    path: Annotated[str, typer.Argument()],
    reason: Annotated[str, typer.Option("--reason")],
) -> None:
    """Retire a memory into archive/<YYYY>/ with its stamps; nothing is deleted."""
    from memhtml.operations.lifecycle import archive

    door = _door(context)
    assert door.root is not None
    door.answer("memory.archived", archive(door.root, path, reason))


@app.command("neighbors")
def neighbors_command(
    context: typer.Context,
    path: Annotated[str, typer.Argument()],
    depth: Annotated[int, typer.Option("--depth")] = 1,
    limit: Annotated[int, typer.Option("--limit")] = 200,
    rel: Annotated[list[str] | None, typer.Option("--rel")] = None,
) -> None:
    """Memories linked to one memory, up to two hops, edges followed both ways."""
    from memhtml.operations.browse import neighbors

    door = _door(context)
    assert door.root is not None
    door.answer("memory.neighbors", neighbors(door.root, path, depth, limit, rel or []))


@app.command("resolve")
def resolve_command(context: typer.Context, path: Annotated[str, typer.Argument()]) -> None:
    """Follow archive moves and supersedes links forward to the live memory."""
    from memhtml.operations.browse import resolve

    door = _door(context)
    assert door.root is not None
    door.answer("memory.resolved", resolve(door.root, path))


@app.command("why")
def why_command(context: typer.Context, path: Annotated[str, typer.Argument()]) -> None:
    """Where a memory came from and what replaced it, from git and the files alone."""
    from memhtml.operations.why import why

    door = _door(context)
    assert door.root is not None
    door.answer("memory.why", why(door.root, path))


@app.command("reinforce")
def reinforce_command(
    context: typer.Context,
    path: Annotated[list[str], typer.Argument()],
    signal: Annotated[str, typer.Option("--signal")] = "neutral",
) -> None:
    """Count a use of memories, with an outcome signal; at most once per 900 s per memory."""
    from memhtml.operations.browse import reinforce

    door = _door(context)
    assert door.root is not None
    door.answer("memory.reinforced", reinforce(door.root, path, signal))


@app.command("list")
def list_command(
    context: typer.Context,
    memory_type: Annotated[str | None, typer.Option("--type")] = None,
    workspace: Annotated[str | None, typer.Option("--workspace")] = None,
    tag: Annotated[str | None, typer.Option("--tag")] = None,
    entity: Annotated[str | None, typer.Option("--entity")] = None,
    facet: Annotated[list[str] | None, typer.Option("--facet")] = None,
    para: Annotated[str | None, typer.Option("--para")] = None,
    limit: Annotated[int, typer.Option("--limit")] = 50,
    cursor: Annotated[str | None, typer.Option("--cursor")] = None,
    include_archived: Annotated[bool, typer.Option("--include-archived/--no-include-archived")] = False,
) -> None:
    """Memories in path order, filtered, paged with --cursor."""
    from memhtml.operations.browse import ListRequest, list_memories

    door = _door(context)
    assert door.root is not None
    request = ListRequest(
        memory_types=[memory_type] if memory_type else [],
        workspace=workspace,
        tags=[tag] if tag else [],
        entity=entity,
        facets=_facets(facet),
        para=para,
        limit=limit,
        cursor=cursor,
        include_archived=include_archived,
    )
    door.answer("memory.list", list_memories(door.root, request))


@entity_app.command("activity")
def entity_activity_command(
    context: typer.Context,
    entity_type: Annotated[str | None, typer.Option("--type")] = None,
    limit: Annotated[int, typer.Option("--limit")] = 50,
    include_archived: Annotated[bool, typer.Option("--include-archived/--no-include-archived")] = False,
) -> None:
    """Every entity with its file count and latest activity, newest first."""
    from memhtml.operations.browse import entity_activity

    door = _door(context)
    assert door.root is not None
    door.answer("entity.activity", entity_activity(door.root, entity_type, limit, include_archived))


@conflicts_app.command("audit")
def conflicts_audit_command(context: typer.Context) -> None:
    """Every candidate pair of active memories, typed into the six conflict classes."""
    from memhtml.operations.conflicts import audit

    door = _door(context)
    assert door.root is not None
    door.answer("conflicts.audit", audit(door.root))


@task_app.command("add")
def task_add_command(
    context: typer.Context,
    title: Annotated[str, typer.Option("--title")],
    claim: ClaimOption = None,
    body: BodiesOption = None,
    status: Annotated[str, typer.Option("--status")] = "todo",
    due: Annotated[str | None, typer.Option("--due")] = None,
    workspace: Annotated[str | None, typer.Option("--workspace")] = None,
    tag: TagListOption = None,
    entity: EntitiesOption = None,
    session_id: SessionOption = None,
    prompt_id: PromptOption = None,
    turn_uuid: TurnOption = None,
    redact: RedactOption = False,
    strip_invisible: StripInvisibleOption = False,
) -> None:
    """Open a task (never deduped: two identical tasks are two tasks)."""
    from memhtml.operations.lifecycle import task_add, task_request

    door = _door(context)
    assert door.root is not None
    request = task_request(
        title,
        claim,
        body or [],
        status,
        due=due,
        workspace=workspace,
        tags=tag or [],
        entities=entity or [],
        session_id=session_id,
        prompt_id=prompt_id,
        turn_uuid=turn_uuid,
        redact=redact,
        strip_invisible=strip_invisible,
    )
    door.answer("task.written", task_add(door.root, request))


@task_app.command("status")
def task_status_command(
    context: typer.Context,
    path: Annotated[str, typer.Argument()],
    status: Annotated[str, typer.Argument()],
    reason: Annotated[str | None, typer.Option("--reason")] = None,
) -> None:
    """Move a task's status; `done` archives it in the same commit."""
    from memhtml.operations.lifecycle import task_status

    door = _door(context)
    assert door.root is not None
    door.answer("task.updated", task_status(door.root, path, status, reason))


@task_app.command("list")
def task_list_command(
    context: typer.Context,
    status: Annotated[str | None, typer.Option("--status")] = None,
    workspace: Annotated[str | None, typer.Option("--workspace")] = None,
    due_before: Annotated[str | None, typer.Option("--due-before")] = None,
    limit: Annotated[int, typer.Option("--limit")] = 50,
    cursor: Annotated[str | None, typer.Option("--cursor")] = None,
    include_archived: Annotated[bool, typer.Option("--include-archived/--no-include-archived")] = False,
    detected: Annotated[bool, typer.Option("--detected/--no-detected")] = False,
) -> None:
    """Tasks in path order with their live blockers."""
    from memhtml.operations.lifecycle import task_list

    door = _door(context)
    assert door.root is not None
    answer = task_list(
        door.root,
        status=status,
        workspace=workspace,
        due_before=due_before,
        limit=limit,
        cursor=cursor,
        include_archived=include_archived,
    )
    door.answer("task.list", answer)


@index_app.command("rebuild")
def index_rebuild_command(
    context: typer.Context,
    embed: Annotated[bool, typer.Option("--embed/--no-embed")] = True,
    force: Annotated[bool, typer.Option("--force/--no-force")] = False,
) -> None:
    """Rebuild the index from HEAD and the working tree."""
    from memhtml.operations.indexing import rebuild_index

    door = _door(context)
    assert door.root is not None
    door.answer("index.report", rebuild_index(door.root, embed=embed))


@index_app.command("update")
def index_update_command(
    context: typer.Context, embed: Annotated[bool, typer.Option("--embed/--no-embed")] = True
) -> None:
    """Index what changed since the watermark, plus the dirty working tree."""
    from memhtml.operations.indexing import update_index

    door = _door(context)
    assert door.root is not None
    door.answer("index.report", update_index(door.root, embed=embed))


@index_app.command("embed")
def index_embed_command(
    context: typer.Context, dry_run: Annotated[bool, typer.Option("--dry-run/--no-dry-run")] = False
) -> None:
    """Give every chunk without a vector one (replacing vectors of another space)."""
    from memhtml.operations.embedding import embed_index

    door = _door(context)
    assert door.root is not None
    door.answer("index.report", embed_index(door.root, dry_run=dry_run))


@index_app.command("status")
def index_status_command(context: typer.Context) -> None:
    """Watermark, freshness and row counts."""
    from memhtml.operations.indexing import index_status

    door = _door(context)
    assert door.root is not None
    door.answer("index.report", index_status(door.root))


@state_app.command("export")
def state_export_command(context: typer.Context) -> None:
    """Write the access counters to the committed sidecar and commit it."""
    from memhtml.operations.statefile import export_state

    door = _door(context)
    assert door.root is not None
    door.answer("state.export", export_state(door.root))


@state_app.command("import")
def state_import_command(context: typer.Context) -> None:
    """Replay the committed sidecar into the state database; counters merge by max."""
    from memhtml.operations.statefile import import_state

    door = _door(context)
    assert door.root is not None
    door.answer("state.import", import_state(door.root))


@eval_app.command("discriminate")
def eval_discriminate_command(
    context: typer.Context,
    mode: Annotated[str, typer.Option("--mode")] = "fake",
    seed: Annotated[int, typer.Option("--seed")] = 20260802,
    now: Annotated[int | None, typer.Option("--now")] = None,
    size: Annotated[int, typer.Option("--size")] = 200,
    probes: Annotated[int, typer.Option("--probes")] = 36,
    mrr_floor: Annotated[str, typer.Option("--mrr-floor")] = "0.85",
) -> None:
    """Run the retrieval gate on a generated store (never opens a repo)."""
    import datetime as dt

    from memhtml.operations.discriminate import discriminate

    door = _door(context)
    instant = dt.datetime.fromtimestamp(now / 1000, dt.UTC) if now is not None else None
    data = discriminate(mode=mode, seed=seed, size=size, probes=probes, mrr_floor=float(mrr_floor), now=instant)
    door.answer("eval.discrimination", data)


@eval_app.command("locomo")
def eval_locomo_command(
    context: typer.Context,
    data: Annotated[str, typer.Option("--data")],
    mode: Annotated[str, typer.Option("--mode")] = "live",
    conversations: Annotated[int | None, typer.Option("--conversations")] = None,
    limit: Annotated[int, typer.Option("--limit")] = 20,
) -> None:
    """Score retrieval on the LoCoMo release in temporary stores (never opens a repo)."""
    from pathlib import Path

    from memhtml.operations.eval_locomo import eval_locomo

    door = _door(context)
    report = eval_locomo(Path(data).expanduser(), mode=mode, conversations=conversations, limit=limit)
    door.answer("eval.locomo", report)


@eval_app.command("supersession")
def eval_supersession_command(
    context: typer.Context,
    seed: Annotated[int, typer.Option("--seed")] = 20261130,
    mode: Annotated[str, typer.Option("--mode")] = "live",
) -> None:
    """Run the supersession benchmark on a generated store (never opens a repo)."""
    from memhtml.operations.eval_supersession import eval_supersession

    door = _door(context)
    door.answer("eval.supersession", eval_supersession(seed=seed, mode=mode))


@serve_app.command("mcp")
def serve_mcp_command(context: typer.Context) -> None:
    """Serve the repo over MCP on stdin/stdout until the client closes stdin."""
    from memhtml.mcp.server import serve

    door = _door(context)
    assert door.root is not None
    serve(door.root)  # the server owns stdin and stdout until the session ends
    door.answer("serve.exit", {"server": "memhtml-mcp", "exitCode": 0, "signal": None})


def command_app(words: Sequence[str]) -> tuple[typer.Typer, int]:
    """A typer app holding only the command named by `words` (`["index", "update"]`), and how many of
    the words it consumes; the whole app and 0 when no registered command has that name.

    typer builds a click command for every registered command before it dispatches (≈30 ms for this
    app); the grammar has already named the one command, so only that one is built."""
    found = _registered_command(app, list(words))
    if found is None:
        return app, 0
    single = typer.Typer(add_completion=False, no_args_is_help=False, pretty_exceptions_enable=False)
    single.registered_commands.append(found)
    return single, len(words)


def _registered_command(group: typer.Typer, words: list[str]) -> CommandInfo | None:
    if len(words) == 1:
        return next((info for info in group.registered_commands if info.name == words[0]), None)
    for info in group.registered_groups:
        if info.name == words[0] and info.typer_instance is not None:
            return _registered_command(info.typer_instance, words[1:])
    return None
