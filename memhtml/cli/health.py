"""The typer commands of the store-health family (`doctor`, `validate`, `hooks install`, `hooks uninstall`): each
parses its options, calls one operation and renders the answer, like the commands of `cli.app`, which
registers them with `register_health_commands`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from memhtml.cli.door import Door

hooks_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def register_health_commands(app: typer.Typer) -> None:
    """Add this module's commands to the `memhtml` app."""
    app.command("doctor")(doctor_command)
    app.command("validate")(validate_command)
    app.add_typer(hooks_app, name="hooks")


def _door(context: typer.Context) -> Door:
    door = context.obj
    assert isinstance(door, Door)
    return door


def doctor_command(context: typer.Context, fix: Annotated[bool, typer.Option("--fix/--no-fix")] = False) -> None:
    """Check the whole store; with --fix, repair what has one safe repair. Exit 1 when unhealthy."""
    from memhtml.cli.envelope import EXIT_FAILURE, EXIT_OK
    from memhtml.operations.doctor import doctor

    door = _door(context)
    assert door.root is not None
    answer = doctor(door.root, fix=fix)
    door.answer("doctor.report", answer.data, EXIT_OK if answer.healthy else EXIT_FAILURE)


def validate_command(
    context: typer.Context,
    path: Annotated[list[str] | None, typer.Argument()] = None,
    staged: Annotated[bool, typer.Option("--staged/--no-staged")] = False,
) -> None:
    """Check memory files (working tree or staged) with every check a write runs; list every violation."""
    from memhtml.operations.validation import validate

    door = _door(context)
    assert door.root is not None
    door.answer("validate.report", validate(door.root, path or [], staged=staged))


@hooks_app.command("install")
def hooks_install_command(
    context: typer.Context, force: Annotated[bool, typer.Option("--force/--no-force")] = False
) -> None:
    """Install the git pre-commit hook that runs `validate --staged` with this installation's Python."""
    import sys

    from memhtml.operations.githooks import install_hook

    door = _door(context)
    assert door.root is not None
    door.answer("hooks.report", install_hook(door.root, sys.executable, force=force))


@hooks_app.command("uninstall")
def hooks_uninstall_command(context: typer.Context) -> None:
    """Remove the pre-commit hook memhtml installed; any other hook is left alone."""
    from memhtml.operations.githooks import uninstall_hook

    door = _door(context)
    assert door.root is not None
    door.answer("hooks.report", uninstall_hook(door.root))
