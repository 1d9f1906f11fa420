"""Which function answers which command: the registry the command modules fill and the entry point reads.

The grammar has already named the command and checked every value, so dispatching is a lookup: no
second parser runs. The command modules (`cli.app`, `cli.health`) register their handlers when they
are imported, which happens only once a command that needs them is about to run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from memhtml.cli.grammar import Invocation
    from memhtml.cli.responder import Responder

Handler = Callable[["Responder", "Invocation"], None]
IndexMode = Literal["read-write", "read-only"]

_HANDLERS: dict[str, Handler] = {}
# The commands whose first use of the index is an open in this mode, which the entry point may start
# before the handler runs (`operations.opening`).
_OPENS_INDEX: dict[str, IndexMode] = {}
# The commands that project every memory of the store on every core, whose workers the entry point may
# fork before anything starts a thread (`operations.opening`).
_PROJECTS_STORE: set[str] = set()


def command(
    *names: str, opens_index: IndexMode | None = None, projects_store: bool = False
) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of each of `names` (`"index update"`);
    `opens_index`: the first thing it does with the index is an open in this mode; `projects_store`:
    it projects every memory of the store."""

    def register(handler: Handler) -> Handler:
        taken = [name for name in names if name in _HANDLERS]
        if taken:
            raise RuntimeError(f"two handlers for the command {taken[0]!r}")
        _HANDLERS.update(dict.fromkeys(names, handler))
        if opens_index is not None:
            _OPENS_INDEX.update(dict.fromkeys(names, opens_index))
        if projects_store:
            _PROJECTS_STORE.update(names)
        return handler

    return register


def handler_for(name: str) -> Handler | None:
    """The handler of command `name`, or None when no command module answers it."""
    _load_command_modules()
    return _HANDLERS.get(name)


def index_mode(name: str) -> IndexMode | None:
    """How command `name` first opens the index, when its handler says (`command(opens_index=...)`)."""
    _load_command_modules()
    return _OPENS_INDEX.get(name)


def projects_store(name: str) -> bool:
    """Whether command `name` projects every memory of its store (`command(projects_store=True)`)."""
    _load_command_modules()
    return name in _PROJECTS_STORE


def registered_commands() -> frozenset[str]:
    """Every command name that has a handler."""
    _load_command_modules()
    return frozenset(_HANDLERS)


def _load_command_modules() -> None:
    # Importing a command module registers its handlers (once: Python imports a module once).
    import memhtml.cli.app
    import memhtml.cli.health  # noqa: F401
