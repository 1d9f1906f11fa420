"""The `memhtml` executable's first module: it loads the command line's code so that a Ctrl-C while it
loads still answers as every command does, with one envelope and exit status 1.

It imports nothing of ours itself, because an interrupt can land in any import; what it prints then
is a failure envelope written out here (a test holds it to the shape every door's failures have), since
the modules that build envelopes may be the ones whose import was cut short. Nothing has run yet, so it
says, for every command, that nothing was stored.
"""

from __future__ import annotations

import sys

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
        from memhtml.cli.entry import main as run_command
    except KeyboardInterrupt:
        import json

        if "--json" in sys.argv or not sys.stdout.isatty():
            sys.stdout.write(json.dumps(INTERRUPTED_ENVELOPE, indent=2) + "\n")
        else:
            sys.stderr.write(f"memhtml: {INTERRUPTED_ENVELOPE['error']}\n")
        sys.stdout.flush()
        raise SystemExit(1) from None
    run_command()
