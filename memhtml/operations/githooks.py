"""`hooks install` and `hooks uninstall`: the git pre-commit hook that runs `validate --staged` on every
commit of the store, through the Python of this very installation, so it works without memhtml on PATH.

The hook goes where git looks for hooks (`git rev-parse --git-path hooks`, so core.hooksPath is
respected). The file memhtml writes carries a marker line and is recognized by its exact text: a hook
someone else wrote, or one memhtml wrote and someone edited since, is never replaced without --force
and never removed. Installing twice changes nothing.
"""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path
from typing import Final, Literal, NamedTuple, NotRequired, TypedDict

from memhtml.contracts.errors import IntegrationModified
from memhtml.store.gitcmd import git_text
from memhtml.store.repository import Store, open_store

HOOK_NAME: Final[str] = "pre-commit"
MARKER: Final[str] = "# memhtml-managed-hook: pre-commit"
_EXECUTABLE: Final[int] = 0o755
_TEMPLATE: Final[str] = """#!/bin/sh
{marker}
# Written by `memhtml hooks install`; `memhtml hooks uninstall` removes it. Once edited, memhtml leaves
# it alone (and replaces it only with `hooks install --force`).
# Refuses the commit when a staged memory file fails `memhtml validate --staged`. Git runs a hook at the
# top of the work tree and hands it the index being committed (GIT_INDEX_FILE), which validate reads.
# A repository without the four PARA buckets is not a memory store: its commits are not checked.
for bucket in projects areas resources archive; do
  [ -d "$bucket" ] || exit 0
done
python={interpreter}
if [ ! -x "$python" ]; then
  echo "memhtml pre-commit hook: $python is gone; run 'memhtml hooks install' again to point it at yours" >&2
  exit 1
fi
exec "$python" -m memhtml validate --staged --repo .
"""

HookState = Literal["absent", "ours", "edited", "foreign"]


class HookReport(TypedDict):
    """What `hooks install` or `hooks uninstall` did to the pre-commit hook, and where it is."""

    hook: str
    outcome: str
    changed: bool
    shared: bool
    interpreter: NotRequired[str | None]  # a file is there: the Python memhtml's hook runs, else None
    edited: NotRequired[bool]  # kept: memhtml's hook, edited since
    foreign: NotRequired[bool]  # kept: a hook memhtml did not write


class _Hook(NamedTuple):
    """The pre-commit hook file of a store and what occupies it."""

    store: Store
    path: Path
    text: str | None  # None: no file there

    @property
    def state(self) -> HookState:
        if self.text is None:
            return "absent"
        if MARKER not in self.text.splitlines():
            return "foreign"
        return "ours" if _interpreter_of(self.text) is not None else "edited"

    def answer(self, outcome: str, *, changed: bool) -> HookReport:
        data: HookReport = {
            "hook": _shown_location(self.store, self.path),
            "outcome": outcome,
            "changed": changed,
            # A hooks directory outside the store (a shared core.hooksPath) runs for other repositories too.
            "shared": not (_inside(self.path, self.store.root) or _inside(self.path, self.store.git_dir)),
        }
        if self.text is not None:
            data["interpreter"] = _interpreter_of(self.text)
        return data


def hook_text(interpreter: str) -> str:
    """The hook memhtml writes for `interpreter` (the absolute path of a Python that imports memhtml)."""
    return _TEMPLATE.format(marker=MARKER, interpreter=shlex.quote(interpreter))


def install_hook(root: Path, interpreter: str, *, force: bool) -> HookReport:
    """Install the pre-commit hook; the `hooks.report` data. `outcome`: `installed`, `unchanged` (the same
    hook was there), `updated` (memhtml's hook for another interpreter, or not executable), `replaced`
    (another hook, with --force). Another hook without --force: `IntegrationModified`."""
    hook = _locate(root)
    wanted = hook_text(interpreter)
    state = hook.state
    if hook.text == wanted and _is_executable(hook.path):
        return _Hook(hook.store, hook.path, wanted).answer("unchanged", changed=False)
    if state in ("foreign", "edited") and not force:
        whose = "memhtml's hook, edited since" if state == "edited" else "a hook memhtml did not write"
        raise IntegrationModified(
            f"a pre-commit hook is already installed at {_shown_location(hook.store, hook.path)} and it is "
            f"{whose}; it was left as it is",
            ["memhtml hooks install --force", "memhtml hooks uninstall"],
        )
    _write_executable(hook.path, wanted)
    outcome = {"absent": "installed", "ours": "updated"}.get(state, "replaced")
    return _Hook(hook.store, hook.path, wanted).answer(outcome, changed=True)


def uninstall_hook(root: Path) -> HookReport:
    """Remove the pre-commit hook memhtml wrote; the `hooks.report` data. `outcome`: `removed`, `absent`
    (no hook), `kept` (a hook memhtml did not write, or one edited since: left alone)."""
    hook = _locate(root)
    state = hook.state
    if state == "absent":
        return hook.answer("absent", changed=False)
    if state != "ours":
        data = hook.answer("kept", changed=False)
        if state == "edited":
            data["edited"] = True
        else:
            data["foreign"] = True
        return data
    hook.path.unlink()
    return _Hook(hook.store, hook.path, None).answer("removed", changed=True)


def _locate(root: Path) -> _Hook:
    store = open_store(root)
    hooks = Path(git_text(store.root, ["rev-parse", "--git-path", "hooks"]))
    path = (hooks if hooks.is_absolute() else store.root / hooks) / HOOK_NAME
    return _Hook(store, path, _read(path))


def _read(path: Path) -> str | None:
    if not os.path.lexists(path):
        return None
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:  # a dangling link or a directory: something is there, and it is not ours
        return ""


def _interpreter_of(text: str) -> str | None:
    """The interpreter of `text` when it is exactly the hook memhtml writes, else None."""
    for line in text.splitlines():
        if line.startswith("python="):
            try:
                words = shlex.split(line.removeprefix("python="))
            except ValueError:
                return None
            if len(words) == 1 and hook_text(words[0]) == text:
                return words[0]
            return None
    return None


def _write_executable(path: Path, text: str) -> None:
    """Put `text` at `path`, executable, in one rename: a commit starting meanwhile sees the old hook or
    the new one, never half of one; a link there is replaced, not written through."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.memhtml-{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.chmod(_EXECUTABLE)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _is_executable(path: Path) -> bool:
    try:
        return bool(path.stat().st_mode & stat.S_IXUSR)
    except OSError:
        return False


def _inside(path: Path, directory: Path) -> bool:
    return path.resolve().is_relative_to(directory.resolve())


def _shown_location(store: Store, path: Path) -> str:
    """The hook's path relative to the store root when it lies inside it, else as git names it."""
    return path.relative_to(store.root).as_posix() if path.is_relative_to(store.root) else str(path)
