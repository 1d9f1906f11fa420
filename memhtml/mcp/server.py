"""The stdio MCP server: `memhtml-mcp --repo PATH`, `python -m memhtml.mcp`, and `serve(root)` for
`memhtml serve mcp`.

The server holds nothing between requests: every tool call runs one operation, which opens the
store and the index, catches the index up with HEAD (so commits made by other processes, a CLI
included, are seen on the next call) and closes them again. DuckDB lets one process hold a database
file read-write at a time, so a CLI writing to the same store is never locked out by an idle server.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any, Final

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from memhtml import __version__
from memhtml.contracts.errors import MemhtmlError, UsageError, os_failure
from memhtml.domain.nearest import nearest
from memhtml.mcp.answers import answered, crashed, refused, resource_crash, resource_error
from memhtml.mcp.params import check_arguments
from memhtml.mcp.resources import TEMPLATES, read_resource
from memhtml.mcp.tools import TOOLS, TOOLS_BY_NAME
from memhtml.operations.config import calm_blas_threads, load_config

SERVER_NAME: Final[str] = "memhtml"
EXIT_USAGE: Final[int] = 2
EXIT_INTERRUPTED: Final[int] = 130

logger = logging.getLogger("memhtml.mcp")


def main(argv: list[str] | None = None) -> None:
    """`memhtml-mcp`: resolve the store's root as the CLI does, then serve it on stdin/stdout."""
    calm_blas_threads()
    parser = argparse.ArgumentParser(
        prog="memhtml-mcp",
        description="Serve a memhtml store over MCP on stdin/stdout (JSON-RPC); logs go to stderr.",
    )
    parser.add_argument("--repo", help="the store's root (default: $MEMHTML_ROOT, else ~/memhtml)")
    parser.add_argument("--version", action="version", version=f"memhtml-mcp {__version__}")
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    config = load_config()
    for setting in (config.embed_setting, config.coverage_floor):  # refused before the server starts
        try:
            setting()
        except UsageError as error:
            print(f"memhtml-mcp: {error.envelope_code}: {error.message}", file=sys.stderr)
            sys.exit(EXIT_USAGE)
    # A blank --repo names nothing, so the usual fallbacks (or the refusal) apply, as on the CLI.
    repo = options.repo if options.repo and options.repo.strip() else None
    if config.refuse_env_root and repo is None:
        print(
            "memhtml-mcp: ERR_REPO_REQUIRED: MEMHTML_REFUSE_ENV_ROOT is set, so the root is not read from "
            "MEMHTML_ROOT or ~/memhtml: name it with --repo",
            file=sys.stderr,
        )
        sys.exit(EXIT_USAGE)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="memhtml-mcp %(levelname)s %(message)s")
    try:
        serve(config.resolve_root(repo))
    except* KeyboardInterrupt:
        # Ctrl-C, or SIGTERM/SIGHUP during a write (whose rollback has run): stop without a traceback.
        sys.exit(EXIT_INTERRUPTED)


def serve(root: Path) -> None:
    """Serve the store at `root` over stdio until the client closes stdin."""
    from memhtml.index.database import share_one_instance

    # Calls run one at a time, each opening the index: attaching it to one DuckDB instance kept for
    # the session saves starting an instance on every call, and still lets go of the files
    # between calls so a CLI can write.
    share_one_instance()
    anyio.run(_serve_stdio, build_server(root))


async def _serve_stdio(server: Server[Any]) -> None:
    # stdio_server points file descriptor 1 at stderr while it serves, so nothing a git child process
    # prints can corrupt the JSON-RPC stream.
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def build_server(root: Path) -> Server[Any]:
    """The low-level SDK server: tools and resource templates over the store at `root`."""

    async def list_tools(
        context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_definitions())

    async def call(context: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        # Run on the event loop's own (main) thread, one call at a time: the store turns SIGTERM into a
        # rollback only on the main thread, and one process must not open the index twice at once.
        return call_tool(root, params.name, params.arguments)

    async def list_templates(
        context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=list(TEMPLATES))

    async def list_resources(
        context: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        # Memories are reached through the templates; listing every file of a large store helps no one.
        return types.ListResourcesResult(resources=[])

    async def read(
        context: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            return read_resource(root, str(params.uri))
        except MemhtmlError as error:
            raise resource_error(error) from None
        except OSError as error:
            raise resource_error(os_failure(error, root)) from None
        except Exception as error:  # the SDK would put the exception's own text on the wire
            logger.exception("reading %s failed unexpectedly", params.uri)
            raise resource_crash(error) from None

    return Server(
        SERVER_NAME,
        version=__version__,
        on_list_tools=list_tools,
        on_call_tool=call,
        on_list_resource_templates=list_templates,
        on_list_resources=list_resources,
        on_read_resource=read,
    )


def tool_definitions() -> list[types.Tool]:
    return [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.schema(),
            annotations=types.ToolAnnotations(
                read_only_hint=tool.read_only,
                # Nothing is ever deleted: archiving and correcting move a memory into archive/.
                destructive_hint=False,
                idempotent_hint=tool.read_only or None,
                open_world_hint=False,
            ),
        )
        for tool in TOOLS
    ]


def call_tool(root: Path, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """One tool call: check the arguments, run the tool's operation, answer its data or its failure."""
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        unknown = UsageError(
            "ERR_UNKNOWN_COMMAND",
            f"unknown tool: {name}",
            nearest(name, list(TOOLS_BY_NAME)) or ["tools/list"],
        )
        return refused(unknown, write_tool=False)
    try:
        checked = check_arguments(tool.name, tool.params, arguments, tool.exactly_one)
        answer = tool.run(root, checked)
    except MemhtmlError as error:
        return refused(error, write_tool=tool.writes)
    except OSError as error:  # a full disk, a read-only store: the same code as the CLI door gives
        return refused(os_failure(error, root), write_tool=tool.writes)
    except Exception as error:  # a defect still answers one typed envelope, as the CLI's does
        logger.exception("%s failed unexpectedly", name)
        return crashed(error, write_tool=tool.writes)
    return answered(answer.data, partial=answer.partial)
