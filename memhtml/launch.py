"""The `memhtml` executable's first module: it loads the command line's code so that a Ctrl-C while it
loads still answers as every command does, with one envelope and exit status 1.

An interrupt that lands inside an import can do worse than stop it: Python wraps one raised in a class
body's `__set_name__` in a RuntimeError, swallows one raised in its import locks' callbacks (printing
"Exception ignored" and going on), and a native module being built aborts the process. So while the
command line's modules load, SIGINT, SIGTERM and SIGHUP are only noted, and one that arrived is answered
once they have loaded; one that arrives after that, before the command takes the signals itself, is
handed to the command, which answers it as an interrupt. This module sits at the top of the package, not
in `memhtml.cli`, so no package's own start-up runs before it, and it imports nothing at module level
(not even `__future__`, which is a real import).

What it prints is a failure envelope written out here (a test holds it to the shape every door's
failures have): nothing has run yet, so it says, for every command, that nothing was stored. Once
`memhtml.cli.entry.main` runs, it takes the signals itself before any command starts.
"""

INTERRUPTED_ENVELOPE = {
    "apiVersion": "1",
    "error": "interrupted before the command started; nothing was read or written",
    "code": "ERR_UNKNOWN",
    "suggestions": ["retry the same command"],
    "retryable": True,
    "stored": False,
    "outcome": "failed",
}


def main() -> None:
    """Run the command line; `memhtml.cli.entry.main` never returns (it ends the process)."""
    try:
        import signal

        arrived: list[int] = []
        taken = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {number: signal.signal(number, lambda signum, _: arrived.append(signum)) for number in taken}
        try:
            from memhtml.cli.entry import main as run_command
        except BaseException:
            for number, handler in previous.items():
                signal.signal(number, handler)
            raise
        if arrived:
            answer_interrupted()
        # The noting handlers stay until the command takes the signals itself: one raised by Python's
        # own handler in between could land in a callback of the import machinery and be lost.
        run_command(noted=arrived)
    except KeyboardInterrupt:
        answer_interrupted()


def answer_interrupted() -> None:
    """Print the interrupted envelope (or, on a terminal, its message) and exit with status 1."""
    import json
    import sys

    if "--json" in sys.argv or not sys.stdout.isatty():
        sys.stdout.write(json.dumps(INTERRUPTED_ENVELOPE, indent=2) + "\n")
    else:
        sys.stderr.write(f"memhtml: {INTERRUPTED_ENVELOPE['error']}\n")
    sys.stdout.flush()
    raise SystemExit(1) from None
