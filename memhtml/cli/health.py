"""The commands of the store-health family (`doctor`, `validate`, `hooks install`, `hooks uninstall`): each
reads its values from the parsed invocation, calls one operation and renders the answer, like the
commands of `cli.app`.
"""

from __future__ import annotations

from pathlib import Path

from memhtml.cli.dispatch import command
from memhtml.cli.grammar import Invocation
from memhtml.cli.responder import Responder


def _root(responder: Responder) -> Path:
    assert responder.root is not None  # the entry point resolves it for every command that opens a repo
    return responder.root


@command("doctor")
def doctor_command(responder: Responder, invocation: Invocation) -> None:
    """Check the whole store; with --fix, repair what has one safe repair. Exit 1 when unhealthy."""
    from memhtml.cli.envelope import EXIT_FAILURE, EXIT_OK
    from memhtml.cli.progress import terminal_progress
    from memhtml.operations.doctor import doctor

    with terminal_progress(responder, "doctor") as progress:
        answer = doctor(_root(responder), fix=invocation.flag("fix"), progress=progress)
    responder.answer("doctor.report", answer.data, EXIT_OK if answer.healthy else EXIT_FAILURE)


@command("validate")
def validate_command(responder: Responder, invocation: Invocation) -> None:
    """Check memory files (working tree or staged) with every check a write runs; list every violation."""
    from memhtml.operations.validation import validate

    report = validate(_root(responder), list(invocation.positionals), staged=invocation.flag("staged"))
    responder.answer("validate.report", report)


@command("hooks install")
def hooks_install_command(responder: Responder, invocation: Invocation) -> None:
    """Install the git pre-commit hook that runs `validate --staged` with this installation's Python."""
    import sys

    from memhtml.operations.githooks import install_hook

    responder.answer("hooks.report", install_hook(_root(responder), sys.executable, force=invocation.flag("force")))


@command("hooks uninstall")
def hooks_uninstall_command(responder: Responder, invocation: Invocation) -> None:
    """Remove the pre-commit hook memhtml installed; any other hook is left alone."""
    from memhtml.operations.githooks import uninstall_hook

    responder.answer("hooks.report", uninstall_hook(_root(responder)))
