"""A Ctrl-C while the executable loads its modules answers one envelope, never a traceback, and one while
DuckDB's native module loads interrupts the command instead of aborting the process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memhtml.cli.responder import Responder
from memhtml.contracts.errors import Interrupted
from memhtml.launch import INTERRUPTED_ENVELOPE

# Runs the launcher with a Ctrl-C (a real SIGINT) sent while it looks for the named module.
SIGNAL_DURING_IMPORT = """
import os, signal, sys
name = sys.argv[1]

class SignalWhileFinding:
    def find_spec(self, fullname, path=None, target=None):
        if fullname == name:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass  # a handler that raises would raise here, inside the import
        return None

sys.meta_path.insert(0, SignalWhileFinding())
sys.argv = ["memhtml", *sys.argv[2:]]
from memhtml.launch import main
main()
"""


def _launched_with_a_signal_in(module: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SIGNAL_DURING_IMPORT, module, *arguments], capture_output=True, text=True, check=False
    )


def test_the_launchers_envelope_has_the_shape_of_the_doors_own(capsys: pytest.CaptureFixture[str]) -> None:
    responder = Responder(command="write", json_mode=True, dense=False)
    responder.refuse(Interrupted())
    envelope = json.loads(capsys.readouterr().out)
    assert set(envelope) == set(INTERRUPTED_ENVELOPE)
    for key in ("apiVersion", "code", "retryable", "stored"):
        assert INTERRUPTED_ENVELOPE[key] == envelope[key], key


@pytest.mark.parametrize("module", ["memhtml.cli", "memhtml.cli.entry", "memhtml.operations.config"])
def test_a_signal_while_the_modules_load_is_answered_with_the_envelope_once_they_have(
    store_root: Path, module: str
) -> None:
    done = _launched_with_a_signal_in(module, "status", "--repo", str(store_root))
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    assert json.loads(done.stdout) == INTERRUPTED_ENVELOPE


def test_a_signal_after_the_command_took_the_signals_is_the_doors_to_answer(store_root: Path) -> None:
    # The index database module loads during the command: the door answers its own interrupted envelope.
    done = _launched_with_a_signal_in("memhtml.index.database", "status", "--repo", str(store_root))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["code"] == "ERR_UNKNOWN" and envelope["retryable"] is True
    assert envelope["error"].startswith("interrupted before the command finished")


def test_a_signal_while_duckdb_loads_waits_until_it_has_loaded() -> None:
    # The signal is sent from inside the native module's import (as a Ctrl-C arriving then would be);
    # it must reach the handler only once the import is over, never inside it.
    script = textwrap.dedent(
        """
        import builtins, os, signal, sys
        events = []
        def handler(signum, frame):
            events.append("handled")
        signal.signal(signal.SIGINT, handler)
        real_import = builtins.__import__
        def importing(name, *args, **kwargs):
            if name in ("_duckdb", "duckdb") and "sent" not in events:
                events.append("sent")
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(1000):
                    pass  # the handler would run here, inside the import, were it not held back
                module = real_import(name, *args, **kwargs)
                events.append("imported")
                return module
            return real_import(name, *args, **kwargs)
        builtins.__import__ = importing
        import memhtml.index.database
        print(" ".join(events))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["sent", "imported", "handled"]


def test_the_launcher_is_the_first_code_of_ours_to_run_and_imports_nothing_before_its_guard() -> None:
    # A package's `__init__` runs before any module in it: the launcher sits directly under `memhtml`,
    # whose `__init__` only names the version, and imports nothing at module level (`__future__` too).
    import ast

    import memhtml
    import memhtml.launch

    assert Path(memhtml.launch.__file__).parent == Path(memhtml.__file__).parent
    for module in (memhtml.launch, memhtml):
        tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
        assert not [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)], module
    entry_points = (Path(memhtml.__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert 'memhtml = "memhtml.launch:main"' in entry_points


# Runs the launcher with a Ctrl-C (a real SIGINT) sent in the hand-over from the launcher to the
# command, from inside a weakref callback, where Python prints an exception and goes on (as it does in
# its import locks' callbacks, which run whenever a lock is collected).
SIGNAL_IN_THE_HAND_OVER = """
import os, signal, sys, weakref
import memhtml.cli.entry as entry

command = entry.main

def handed_over(*args, **kwargs):
    class Box:
        pass
    box = Box()
    watcher = weakref.ref(box, lambda _: [os.kill(os.getpid(), signal.SIGINT), sum(range(1000))])
    del box
    command(*args, **kwargs)

entry.main = handed_over
sys.argv = ["memhtml", *sys.argv[1:]]
from memhtml.launch import main
main()
"""


def test_a_signal_between_the_launcher_and_the_command_interrupts_it_in_one_envelope(store_root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_IN_THE_HAND_OVER, "status", "--repo", str(store_root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stdout
    envelope = json.loads(done.stdout)
    assert envelope["code"] == "ERR_UNKNOWN" and envelope["retryable"] is True
    assert envelope["error"].startswith("interrupted before the command")


# The command's own handler, asked to raise while the import machinery runs (where Python would print
# the exception and go on), raises the signal again instead, to be taken once the machinery is left.
SIGNAL_INSIDE_THE_IMPORT_MACHINERY = """
import signal, time, types
from memhtml.store import interrupts

inside = types.SimpleNamespace(f_code=types.SimpleNamespace(co_filename="<frozen importlib._bootstrap>"))
interrupts.RETRY_SECONDS = 0.5  # the retry must not land before the first block below is left, on a busy machine
with interrupts.signals_taken():
    try:
        interrupts._on_signal(signal.SIGINT, inside)
    except KeyboardInterrupt:
        raise SystemExit("raised inside the import machinery")
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pass
    except KeyboardInterrupt as taken:
        raise SystemExit(0 if str(taken) == "signal 2" else f"taken as {taken!r}")
raise SystemExit("the signal was lost")
"""


def test_a_signal_inside_the_import_machinery_is_taken_once_it_is_left() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_INSIDE_THE_IMPORT_MACHINERY], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
