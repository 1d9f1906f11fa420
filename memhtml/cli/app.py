"""The typer commands of memhtml: each parses its options, calls one operation and renders the answer.

The contract grammar (`memhtml.cli.grammar`) has already refused every usage error before typer runs,
so typer here only converts values and dispatches; the global flags travel in the `Door`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from memhtml.cli.door import Door

app = typer.Typer(add_completion=False, no_args_is_help=False, pretty_exceptions_enable=False)


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
    door.answer("memory.detail", read(door.root, path))


@app.command("status")
def status_command(context: typer.Context) -> None:
    """Corpus health: HEAD, dirty state, counts by type, edges."""
    from memhtml.operations.status import status

    door = _door(context)
    assert door.root is not None
    door.answer("status.health", status(door.root))
