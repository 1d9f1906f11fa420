"""The commands of the store-health family (`doctor`, `validate`, `hooks install`, `hooks uninstall`): each
reads its values from the parsed invocation, calls one operation and renders the answer, like the
commands of `cli.app`.
"""

from __future__ import annotations

from pathlib import Path

from memhtml.cli.dispatch import command
from memhtml.cli.door import Door
from memhtml.cli.grammar import Invocation


def _root(door: Door) -> Path:
    assert door.root is not None  # the entry point resolves it for every command that opens a repo
    return door.root


@command("doctor")
def doctor_command(door: Door, invocation: Invocation) -> None:
    """Check the whole store; with --fix, repair what has one safe repair. Exit 1 when unhealthy."""
    from memhtml.cli.envelope import EXIT_FAILURE, EXIT_OK
    from memhtml.cli.progress import terminal_progress
    from memhtml.operations.doctor import doctor

    with terminal_progress(door, "doctor") as progress:
        answer = doctor(_root(door), fix=invocation.flag("fix"), progress=progress)
    door.answer("doctor.report", answer.data, EXIT_OK if answer.healthy else EXIT_FAILURE)


@command("validate")
def validate_command(door: Door, invocation: Invocation) -> None:
    """Check memory files (working tree or staged) with every check a write runs; list every violation."""
    from memhtml.operations.validation import validate

    report = validate(_root(door), list(invocation.positionals), staged=invocation.flag("staged"))
    door.answer("validate.report", report)


@command("hooks install")
def hooks_install_command(door: Door, invocation: Invocation) -> None:
    """Install the git pre-commit hook that runs `validate --staged` with this installation's Python."""
    import sys

    from memhtml.operations.githooks import install_hook

    door.answer("hooks.report", install_hook(_root(door), sys.executable, force=invocation.flag("force")))


@command("hooks uninstall")
def hooks_uninstall_command(door: Door, invocation: Invocation) -> None:
    """Remove the pre-commit hook memhtml installed; any other hook is left alone."""
    from memhtml.operations.githooks import uninstall_hook

    door.answer("hooks.report", uninstall_hook(_root(door)))
