"""The commands of memhtml: each reads its values from the parsed invocation, calls one operation and
renders the answer.

The contract grammar (`memhtml.cli.grammar`) has parsed the whole command line and refused every
usage error before a command runs: flags are known, typed, range-checked and present when required.
A command therefore only reads typed values from the `Invocation`; the global flags travel in the
`Responder`. The commands the MCP server serves too hand the `Invocation` to `memhtml.surface.calls`,
which builds their requests for both doors. No second parser runs (typer did, once: a cost in every
command for a parse already made).
"""

from __future__ import annotations

from pathlib import Path

from memhtml.cli.dispatch import command
from memhtml.cli.grammar import Invocation
from memhtml.cli.responder import Responder
from memhtml.contracts.errors import UsageError
from memhtml.surface import calls


def _root(responder: Responder) -> Path:
    assert responder.root is not None  # the entry point resolves it for every command that opens a repo
    return responder.root


def _text(invocation: Invocation, name: str) -> str:
    """A string flag that always has a value: the grammar requires it, or the contract gives it a default."""
    value = invocation.text(name)
    if value is None:
        raise UsageError("ERR_MISSING_ARGUMENT", f"--{name} is required", [f"memhtml help {_name(invocation)}"])
    return value


def _argument(invocation: Invocation, position: int) -> str:
    """A required positional argument (present: the grammar checked the arity)."""
    if position >= len(invocation.positionals):
        raise UsageError("ERR_MISSING_ARGUMENT", "an argument is missing", [f"memhtml help {_name(invocation)}"])
    return invocation.positionals[position]


def _integer(invocation: Invocation, name: str, default: int | None = None) -> int:
    """An int flag's value, its contract default, or `default` when the contract names none."""
    value = invocation.integer(name)
    if value is not None:
        return value
    if default is None:
        raise RuntimeError(f"--{name} of {_name(invocation)} has no default")
    return default


def _name(invocation: Invocation) -> str:
    return invocation.command.name if invocation.command else ""


@command("init")
def init_command(responder: Responder, invocation: Invocation) -> None:
    """Scaffold a memory repo: git init, PARA dirs, merge driver."""
    from memhtml.operations.init import init

    responder.answer("repo.init", init(_root(responder)))


@command("write")
def write_command(responder: Responder, invocation: Invocation) -> None:
    """Write one memory; an identical active memory is reported, not stored twice."""
    responder.answer("memory.written", calls.write(_root(responder), invocation).as_data())


@command("apply", "batch")
def apply_command(responder: Responder, invocation: Invocation) -> None:
    """Write many memories from JSONL: one commit, one index pass, an answer per op."""
    from memhtml.cli.envelope import EXIT_OK, EXIT_PARTIAL
    from memhtml.cli.progress import terminal_progress
    from memhtml.cli.streams import read_ops_stream

    stdin_marker = invocation.positionals[0] if invocation.positionals else None
    stream = read_ops_stream(responder.command, invocation.text("file"), stdin_marker)
    with terminal_progress(responder, "apply") as progress:
        answer = calls.apply(_root(responder), invocation, stream, progress=progress)
    responder.answer("batch.applied", answer.data, EXIT_PARTIAL if answer.partial else EXIT_OK)


@command("read")
def read_command(responder: Responder, invocation: Invocation) -> None:
    """Read one memory: its metas, links, article and format warnings."""
    responder.answer("memory.detail", calls.read(_root(responder), invocation))


@command("status")
def status_command(responder: Responder, invocation: Invocation) -> None:
    """Corpus health: HEAD, dirty state, counts by type, edges."""
    responder.answer("status.health", calls.status(_root(responder), invocation))


@command("search", opens_index="read-only")
def search_command(responder: Responder, invocation: Invocation) -> None:
    """Relevant memories for a query, best first."""
    responder.answer("memory.hits", calls.search(_root(responder), invocation))


@command("recall", opens_index="read-only")
def recall_command(responder: Responder, invocation: Invocation) -> None:
    """The best memories quoted under a character budget, the rest as index lines."""
    responder.answer("recall.pack", calls.recall(_root(responder), invocation))


@command("correct")
def correct_command(responder: Responder, invocation: Invocation) -> None:
    """Supersede a memory: the corrected one is written and the target archived, in one commit."""
    responder.answer("memory.corrected", calls.correct(_root(responder), invocation))


@command("link")
def link_command(responder: Responder, invocation: Invocation) -> None:
    """Add a typed edge from one memory to another and commit it; idempotent."""
    responder.answer("memory.linked", calls.link(_root(responder), invocation))


@command("archive")
def archive_command(responder: Responder, invocation: Invocation) -> None:
    """Retire a memory into archive/<YYYY>/ with its stamps; nothing is deleted."""
    responder.answer("memory.archived", calls.archive(_root(responder), invocation))


@command("neighbors")
def neighbors_command(responder: Responder, invocation: Invocation) -> None:
    """Memories linked to one memory, up to two hops, edges followed both ways."""
    responder.answer("memory.neighbors", calls.neighbors(_root(responder), invocation))


@command("resolve")
def resolve_command(responder: Responder, invocation: Invocation) -> None:
    """Follow archive moves and supersedes links forward to the live memory."""
    responder.answer("memory.resolved", calls.resolve(_root(responder), invocation))


@command("why")
def why_command(responder: Responder, invocation: Invocation) -> None:
    """Where a memory came from and what replaced it, from git and the files alone."""
    from memhtml.operations.why import why

    responder.answer("memory.why", why(_root(responder), _argument(invocation, 0)))


@command("reinforce")
def reinforce_command(responder: Responder, invocation: Invocation) -> None:
    """Count a use of memories, with an outcome signal; at most once per 900 s per memory."""
    responder.answer("memory.reinforced", calls.reinforce(_root(responder), invocation))


@command("list")
def list_command(responder: Responder, invocation: Invocation) -> None:
    """Memories in path order, filtered, paged with --cursor."""
    responder.answer("memory.list", calls.list_memories(_root(responder), invocation))


@command("entity activity")
def entity_activity_command(responder: Responder, invocation: Invocation) -> None:
    """Every entity with its file count and latest activity, newest first."""
    from memhtml.operations.browse import entity_activity

    answer = entity_activity(
        _root(responder), invocation.text("type"), _integer(invocation, "limit"), invocation.flag("include-archived")
    )
    responder.answer("entity.activity", answer)


@command("conflicts audit")
def conflicts_audit_command(responder: Responder, invocation: Invocation) -> None:
    """Every candidate pair of active memories, typed into the six conflict classes."""
    from memhtml.operations.conflicts import audit

    responder.answer("conflicts.audit", audit(_root(responder)))


@command("task add")
def task_add_command(responder: Responder, invocation: Invocation) -> None:
    """Open a task (never deduped: two identical tasks are two tasks)."""
    responder.answer("task.written", calls.task_add(_root(responder), invocation))


@command("task status")
def task_status_command(responder: Responder, invocation: Invocation) -> None:
    """Move a task's status; `done` archives it in the same commit."""
    responder.answer("task.updated", calls.task_status(_root(responder), invocation))


@command("task list")
def task_list_command(responder: Responder, invocation: Invocation) -> None:
    """Tasks in path order with their live blockers."""
    responder.answer("task.list", calls.task_list(_root(responder), invocation))


@command("index rebuild", opens_index="read-write", projects_store=True)
def index_rebuild_command(responder: Responder, invocation: Invocation) -> None:
    """Rebuild the index from HEAD and the working tree."""
    from memhtml.cli.progress import terminal_progress
    from memhtml.operations.indexing import rebuild_index

    with terminal_progress(responder, "index rebuild") as progress:
        report = rebuild_index(_root(responder), embed=invocation.flag("embed"), progress=progress)
    responder.answer("index.report", report)


@command("index update", opens_index="read-write")
def index_update_command(responder: Responder, invocation: Invocation) -> None:
    """Index what changed since the watermark, plus the dirty working tree."""
    from memhtml.operations.indexing import update_index

    responder.answer("index.report", update_index(_root(responder), embed=invocation.flag("embed")))


@command("index embed")
def index_embed_command(responder: Responder, invocation: Invocation) -> None:
    """Give every chunk without a vector one (replacing vectors of another space)."""
    from memhtml.cli.progress import terminal_progress
    from memhtml.operations.embedding import embed_index

    with terminal_progress(responder, "index embed") as progress:
        report = embed_index(_root(responder), dry_run=invocation.flag("dry-run"), progress=progress)
    responder.answer("index.report", report)


@command("index status")
def index_status_command(responder: Responder, invocation: Invocation) -> None:
    """Watermark, freshness and row counts."""
    from memhtml.operations.indexing import index_status

    responder.answer("index.report", index_status(_root(responder)))


@command("state export")
def state_export_command(responder: Responder, invocation: Invocation) -> None:
    """Write the access counters to the committed sidecar and commit it."""
    from memhtml.operations.statefile import export_state

    responder.answer("state.export", export_state(_root(responder)))


@command("state import")
def state_import_command(responder: Responder, invocation: Invocation) -> None:
    """Replay the committed sidecar into the state database; counters merge by max."""
    from memhtml.operations.statefile import import_state

    responder.answer("state.import", import_state(_root(responder)))


@command("eval discriminate")
def eval_discriminate_command(responder: Responder, invocation: Invocation) -> None:
    """Run the retrieval gate on a generated store (never opens a repo)."""
    import datetime as dt

    from memhtml.evaluation.discrimination import DEFAULT_SEED
    from memhtml.evaluation.discrimination_gate import discriminate

    now = invocation.integer("now")
    data = discriminate(
        mode=_text(invocation, "mode"),
        seed=_integer(invocation, "seed", DEFAULT_SEED),
        size=_integer(invocation, "size"),
        probes=_integer(invocation, "probes"),
        mrr_floor=float(_text(invocation, "mrr-floor")),
        now=dt.datetime.fromtimestamp(now / 1000, dt.UTC) if now is not None else None,
    )
    responder.answer("eval.discrimination", data)


@command("eval locomo")
def eval_locomo_command(responder: Responder, invocation: Invocation) -> None:
    """Score retrieval on the LoCoMo release in temporary stores (never opens a repo)."""
    from memhtml.evaluation.locomo_eval import eval_locomo

    report = eval_locomo(
        Path(_text(invocation, "data")).expanduser(),
        mode=_text(invocation, "mode"),
        conversations=invocation.integer("conversations"),
        limit=_integer(invocation, "limit"),
    )
    responder.answer("eval.locomo", report)


@command("eval supersession")
def eval_supersession_command(responder: Responder, invocation: Invocation) -> None:
    """Run the supersession benchmark on a generated store (never opens a repo)."""
    from memhtml.evaluation.supersession import DEFAULT_SEED
    from memhtml.evaluation.supersession_eval import eval_supersession

    answer = eval_supersession(seed=_integer(invocation, "seed", DEFAULT_SEED), mode=_text(invocation, "mode"))
    responder.answer("eval.supersession", answer)


@command("serve mcp")
def serve_mcp_command(responder: Responder, invocation: Invocation) -> None:
    """Serve the repo over MCP on stdin/stdout until the client closes stdin."""
    from memhtml.mcp.server import serve

    serve(_root(responder))  # the server owns stdin and stdout until the session ends
    responder.answer_beside_protocol("serve.exit", {"server": "memhtml-mcp", "exitCode": 0, "signal": None})
