"""The `memhtml` executable: grammar first, then manifest/help from our own code, then one command.

`manifest`, `help` and `--help` answer without importing rich, git or duckdb, so they start fast and
work with no repository at all; every other command is one handler looked up by its name.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
from typing import Any, NoReturn

from memhtml import __version__
from memhtml.cli.grammar import Invocation, parse_command_line
from memhtml.cli.responder import Responder
from memhtml.contracts import lifetime
from memhtml.contracts.errors import Interrupted, MemhtmlError, UsageError, os_failure
from memhtml.operations.config import Config, calm_blas_threads, load_config
from memhtml.store import interrupts


def main(argv: list[str] | None = None, *, noted: list[int] | None = None) -> NoReturn:
    """Run one command line and end the process. `noted` holds the signals the launcher's handlers
    noted after its imports (they stay installed until the command takes the signals here)."""
    lifetime.end_by_exit()  # `_end_process`: what the kernel releases at the exit may wait for it
    calm_blas_threads()
    _open_missing_streams()
    arguments = sys.argv[1:] if argv is None else argv
    with interrupts.signals_taken():  # held to the exit, so a landed write's answer is never cut off
        if noted:
            _end_process(_interrupted(arguments))
        _end_process(run(arguments))


def _open_missing_streams() -> None:
    """A process started with stdout or stderr closed has no stream object for it: point it at the null
    device, so the command still runs and its exit status still says what it did (a write that lands
    exits 0 whether or not anyone reads the answer)."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 (lives as long as the process)


def _end_process(status: int) -> NoReturn:
    """Exit with `status` once the answer is out.

    Every file and child process a command opens is closed before `run` returns, and what it left open
    for the exit (its DuckDB connection: `lifetime.ends_by_exit`) holds nothing the kernel does not
    release, so Python's own teardown (finalizing every module and DuckDB's native state, a noticeable
    share of each command) only delays the caller. It is skipped unless something may still need it: a running thread
    that is not a daemon, a child process still alive (a pool's worker shuts down at exit), a profiler or
    tracer writing its report at exit, or a standard stream that cannot be flushed.

    A command that ran a pool (a rebuild, `validate` or `doctor` of many files) has shut it down before
    it answers; after one, this ending still reaches the exit sooner than the teardown did (figures in
    docs/performance.md). Its exit functions still run first: multiprocessing's finalizers
    unlink and unregister any semaphore still alive, which its resource tracker would otherwise report as
    leaked once this process is gone.
    """
    threading = sys.modules.get("threading")
    multiprocessing = sys.modules.get("multiprocessing")
    needs_teardown = (
        (threading is not None and _threads_to_wait_for(threading))
        or (multiprocessing is not None and bool(multiprocessing.active_children()))
        or sys.getprofile() is not None
        or sys.gettrace() is not None
    )
    if not needs_teardown:
        try:
            if multiprocessing is not None:
                atexit._run_exitfuncs()  # each guards itself: the teardown below may run them again
            logging = sys.modules.get("logging")
            if logging is not None:
                logging.shutdown()  # flushes any handler a library configured
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            needs_teardown = True
    if needs_teardown:
        # Python's teardown would meet what was left open half torn down; closing it cannot change what
        # the command did, so a failure there must not change its exit status either.
        with contextlib.suppress(Exception):
            lifetime.release_deferred()
        sys.exit(status)
    os._exit(status)


def _threads_to_wait_for(threading: Any) -> bool:
    """Whether a thread other than this one is alive and not a daemon. A daemon thread is one its starter
    let the process end without (an index open started ahead and never taken, a git scan whose answer
    was not needed): `os._exit` ends it with the process, where Python's teardown would wait for none
    either, but would meet it half done."""
    main = threading.main_thread()
    return any(thread is not main and not thread.daemon and thread.is_alive() for thread in threading.enumerate())


def run(argv: list[str]) -> int:
    """Answer one command line with exactly one result on stdout; return the exit status. SIGTERM and
    SIGHUP interrupt it as Ctrl-C does, until a commit of it lands; from then on nothing does."""
    try:
        with interrupts.signals_taken():
            return _run(argv)
    except KeyboardInterrupt:  # before the command's own handling began, or while it answered
        return _interrupted(argv)


def _interrupted(argv: list[str]) -> int:
    """Answer an interrupt that came before the command's own handling began."""
    responder = Responder(command="", json_mode="--json" in argv or not sys.stdout.isatty(), dense="--dense" in argv)
    responder.refuse(Interrupted())
    return responder.status


def _run(argv: list[str]) -> int:
    config = load_config()
    stdout_is_tty = sys.stdout.isatty()
    try:
        invocation = parse_command_line(argv, refuse_env_root=config.refuse_env_root, stdout_is_tty=stdout_is_tty)
        config.embed_setting()  # a bad MEMHTML_EMBED is refused before any I/O
        config.coverage_floor()  # so is a bad MEMHTML_VECTOR_COVERAGE_FLOOR
    except UsageError as error:
        responder = Responder(
            command=error.command or "",
            json_mode=_wants_json(argv, config, stdout_is_tty),
            dense="--dense" in argv,
        )
        responder.refuse(error)
        return responder.status
    json_mode = invocation.json or config.force_json or not stdout_is_tty
    name = invocation.command.name if invocation.command else "manifest"
    responder = Responder(command=name, json_mode=json_mode, dense=invocation.dense)
    if name in ("manifest", "help", "version") or invocation.help:
        return _describe(responder, invocation)
    responder.root = config.resolve_root(invocation.repo)
    return _dispatch(responder, invocation)


def _describe(responder: Responder, invocation: Invocation) -> int:
    from memhtml.cli.manifest import help_data, help_markdown, manifest_data, version_data

    if invocation.command is not None and invocation.command.name == "version" and not invocation.help:
        responder.answer("cli.version", version_data(__version__))
        return responder.status
    target = invocation.help_target()
    # The manifest is a machine contract: JSON even on a terminal, as in the original.
    describing_help = invocation.help or (invocation.command is not None and invocation.command.name == "help")
    if responder.json_mode or not describing_help:
        responder.json_mode = True
        if target is None:
            responder.answer("cli.manifest", manifest_data(__version__))
        else:
            responder.answer("cli.help", help_data(target))
    else:
        from memhtml.cli.render import render_markdown

        responder.show(lambda: render_markdown(help_markdown(target)))
    return responder.status


def _dispatch(responder: Responder, invocation: Invocation) -> int:
    from memhtml.cli.dispatch import handler_for, index_mode, projects_store

    handler = handler_for(invocation.command.name) if invocation.command else None
    try:
        if handler is None:  # the contract names a command no module answers: a defect, said as one
            raise RuntimeError(f"no handler for {responder.command!r}")
        mode = index_mode(responder.command)
        if responder.root is not None and projects_store(responder.command):
            from memhtml.operations.opening import fork_workers_ahead

            fork_workers_ahead(responder.root)  # first: forking must come before the open's threads
        if mode is not None and responder.root is not None:
            from memhtml.operations.opening import open_index_ahead

            open_index_ahead(responder.root, read_only=mode == "read-only")
        handler(responder, invocation)
    except MemhtmlError as error:
        responder.refuse(error)
    except KeyboardInterrupt:
        # Ctrl-C, or SIGTERM/SIGHUP during a write: a write interrupted before its commit has put
        # every byte back.
        responder.refuse(Interrupted())
    except OSError as error:  # a full disk, a read-only store: the same code whoever met it
        responder.refuse(os_failure(error, responder.root))
    except Exception as error:  # the one envelope still answers an unmapped defect
        if isinstance(error.__cause__, KeyboardInterrupt):  # Python wraps one landing in `__set_name__`
            responder.refuse(Interrupted())
        else:
            responder.crash(error)
    else:
        if not responder.answered:
            responder.crash(RuntimeError("no answer"))
    return responder.status


def _wants_json(argv: list[str], config: Config, stdout_is_tty: bool) -> bool:
    return "--json" in argv or config.force_json or not stdout_is_tty
