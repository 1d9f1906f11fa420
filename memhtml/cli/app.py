"""The typer commands of memhtml: each parses its options, calls one operation and renders the answer.

The contract grammar (`memhtml.cli.grammar`) has already refused every usage error before typer runs,
so typer here only converts values and dispatches; the global flags travel in the `Door`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from memhtml.cli.door import Door

if TYPE_CHECKING:
    from memhtml.operations.retrieval import RetrievalRequest

app = typer.Typer(add_completion=False, no_args_is_help=False, pretty_exceptions_enable=False)
index_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
state_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.add_typer(index_app, name="index")
app.add_typer(state_app, name="state")


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
    claim: Annotated[str | None, typer.Option("--claim")] = None,
    body: Annotated[list[str] | None, typer.Option("--body")] = None,
    article_html: Annotated[str | None, typer.Option("--article-html")] = None,
    path: Annotated[str | None, typer.Option("--path")] = None,
    strict_path: Annotated[bool, typer.Option("--strict-path/--no-strict-path")] = False,
    workspace: Annotated[str | None, typer.Option("--workspace")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag")] = None,
    entity: Annotated[list[str] | None, typer.Option("--entity")] = None,
    importance: Annotated[int | None, typer.Option("--importance")] = None,
    confidence: Annotated[float | None, typer.Option("--confidence")] = None,
    session_id: Annotated[str | None, typer.Option("--session-id")] = None,
    prompt_id: Annotated[str | None, typer.Option("--prompt-id")] = None,
    turn_uuid: Annotated[str | None, typer.Option("--turn-uuid")] = None,
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
    )
    door.answer("memory.written", write(door.root, request).as_data())


@app.command("read")
def read_command(
    context: typer.Context,
    path: Annotated[str, typer.Argument()],
    session_id: Annotated[str | None, typer.Option("--session-id")] = None,
    prompt_id: Annotated[str | None, typer.Option("--prompt-id")] = None,
    turn_uuid: Annotated[str | None, typer.Option("--turn-uuid")] = None,
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
    """`name=value` pairs (the grammar already refused any other shape); whitespace collapsed."""
    pairs = []
    for value in values or []:
        name, _, text = value.partition("=")
        pairs.append((name.strip(), " ".join(text.split())))
    return pairs


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
    door.answer("index.report", rebuild_index(door.root))


@index_app.command("update")
def index_update_command(
    context: typer.Context, embed: Annotated[bool, typer.Option("--embed/--no-embed")] = True
) -> None:
    """Index what changed since the watermark, plus the dirty working tree."""
    from memhtml.operations.indexing import update_index

    door = _door(context)
    assert door.root is not None
    door.answer("index.report", update_index(door.root))


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
