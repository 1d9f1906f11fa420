"""How this process ends, for the parts that hold resources the operating system would release anyway.

The `memhtml` executable ends with `os._exit` once its answer is out (`cli.entry`), so whatever is
still open then (file descriptors, locks, memory) is released by the kernel at no cost to the caller.
The executable says so once, at its start (`end_by_exit`); a part that would otherwise spend time
tearing something down may then leave it for the exit, registering how to release it properly
(`defer_release`) for the case where the process ends the ordinary way after all (a thread or a
worker pool still running). A process that lives on (tests, the MCP server, a library caller) never
says so, and every part releases what it holds at once, as before.
"""

from __future__ import annotations

from collections.abc import Callable

_ends_by_exit: list[bool] = [False]
_deferred: list[Callable[[], None]] = []


def end_by_exit() -> None:
    """This process ends with `os._exit` right after its one command (the executable's entry point)."""
    _ends_by_exit[0] = True


def ends_by_exit() -> bool:
    """Whether a teardown the kernel would do anyway may be left to the exit."""
    return _ends_by_exit[0]


def defer_release(release: Callable[[], None]) -> None:
    """Run `release` if the process ends the ordinary way (`release_deferred`); `os._exit` skips it."""
    if release not in _deferred:
        _deferred.append(release)


def release_deferred() -> None:
    """Release, in the order deferred, whatever was left for the exit: the process is about to end
    through Python's own teardown instead. Each release runs once, and a failing one does not keep the
    others from running."""
    failures: list[BaseException] = []
    while _deferred:
        release = _deferred.pop(0)
        try:
            release()
        except Exception as error:  # the others must still run; the first failure is raised after
            failures.append(error)
    if failures:
        raise failures[0]
