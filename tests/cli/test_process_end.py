"""The process ends right after its answer, skipping Python's teardown only when nothing needs it."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from memhtml.cli import entry
from memhtml.contracts import lifetime


class Ended(Exception):
    def __init__(self, how: str, status: int) -> None:
        super().__init__(how, status)
        self.how = how
        self.status = status


@pytest.fixture
def endings(monkeypatch: pytest.MonkeyPatch) -> None:
    """`os._exit` and `sys.exit` raise instead of ending the test run, naming which one was taken."""

    def fast(status: int) -> None:
        raise Ended("fast", status)

    def slow(status: object = 0) -> None:
        raise Ended("teardown", int(status) if isinstance(status, int) else 1)

    monkeypatch.setattr(entry.os, "_exit", fast)
    monkeypatch.setattr(entry.sys, "exit", slow)
    # Other tests of this worker may have started pools; the fast way is judged without them.
    monkeypatch.delitem(sys.modules, "multiprocessing", raising=False)
    monkeypatch.setattr(sys, "gettrace", lambda: None)
    monkeypatch.setattr(sys, "getprofile", lambda: None)


@pytest.mark.usefixtures("endings")
def test_a_finished_command_ends_without_teardown_and_keeps_its_status() -> None:
    with pytest.raises(Ended) as ended:
        entry._end_process(3)
    assert (ended.value.how, ended.value.status) == ("fast", 3)


# A running thread gets the full teardown; a daemon one (an open started ahead, never taken) is left to
# the fast ending.
@pytest.mark.parametrize(("daemon", "how"), [(False, "teardown"), (True, "fast")])
@pytest.mark.usefixtures("endings")
def test_a_running_thread_decides_the_ending(daemon: bool, how: str) -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=daemon)
    worker.start()
    try:
        with pytest.raises(Ended) as ended:
            entry._end_process(2)
    finally:
        release.set()
        worker.join()
    assert (ended.value.how, ended.value.status) == (how, 2)


@pytest.mark.usefixtures("endings")
def test_a_child_process_still_running_gets_the_full_teardown(monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing

    monkeypatch.setitem(sys.modules, "multiprocessing", multiprocessing)
    context = multiprocessing.get_context("spawn")
    release = context.Event()
    child = context.Process(target=release.wait, daemon=True)
    child.start()
    try:
        with pytest.raises(Ended) as ended:
            entry._end_process(1)
    finally:
        release.set()
        child.join(timeout=60)
    assert (ended.value.how, ended.value.status) == ("teardown", 1)
    assert child.exitcode == 0


# A command that ran a pool ends the fast way once the pool is shut down, and still runs the exit functions
# first: without them the resource tracker reports a semaphore still alive as leaked after the exit.
AFTER_A_POOL = """
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor

from memhtml.cli import entry

if __name__ == "__main__":
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        assert sum(pool.map(abs, range(-50, 50))) == 2500
    # A semaphore still alive at the end, as a pool's are when a cycle holds them: the resource tracker
    # would unlink it and warn about it, were its finalizer not run.
    lock = context.Lock()

    def teardown(status):
        print("teardown", flush=True)
        raise SystemExit(status)

    sys.exit = teardown
    print("answered", flush=True)
    entry._end_process(4)
"""


def test_a_finished_pool_leaves_the_fast_ending_and_nothing_leaked(tmp_path: Path) -> None:
    script = tmp_path / "after_a_pool.py"
    script.write_text(AFTER_A_POOL, encoding="utf-8")
    # The pipes close only once every process holding them ended: the fork server and the resource
    # tracker too, whose report of leaked semaphores would arrive on stderr.
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False, timeout=120)
    assert (done.returncode, done.stdout.split()) == (4, ["answered"]), done.stderr[-2000:]
    assert done.stderr == ""


@pytest.fixture
def deferred(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Two releases left for the exit, the first of them failing; returns what was released."""
    monkeypatch.setattr(lifetime, "_deferred", [])
    released: list[str] = []

    def failing() -> None:
        released.append("failing")
        raise OSError("the release failed")

    lifetime.defer_release(failing)
    lifetime.defer_release(lambda: released.append("second"))
    lifetime.defer_release(failing)  # deferred once, however often asked
    return released


@pytest.mark.usefixtures("endings")
def test_the_fast_ending_leaves_what_was_left_for_the_exit_to_the_kernel(deferred: list[str]) -> None:
    with pytest.raises(Ended) as ended:
        entry._end_process(0)
    assert ended.value.how == "fast"
    assert deferred == []


@pytest.mark.usefixtures("endings")
def test_the_full_teardown_releases_what_was_left_for_the_exit_first(
    deferred: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A child still running is what keeps the teardown.
    monkeypatch.setitem(sys.modules, "multiprocessing", SimpleNamespace(active_children=lambda: ["a worker"]))
    with pytest.raises(Ended) as ended:
        entry._end_process(0)
    # Every release ran once, in order, the failing one included; the status is the command's.
    assert (ended.value.how, ended.value.status) == ("teardown", 0)
    assert deferred == ["failing", "second"]
    assert lifetime._deferred == []


LIFETIME_PROBE = """
import sys
import memhtml.cli.entry as entry
from memhtml.contracts import lifetime

def report(argv):
    print(lifetime.ends_by_exit())
    return 0

entry.run = report
entry.main(["manifest"])
"""


def test_the_executable_says_it_ends_by_exit_and_a_library_caller_does_not() -> None:
    done = subprocess.run([sys.executable, "-c", LIFETIME_PROBE], capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["True"], done.stderr[-2000:]
    assert not lifetime.ends_by_exit()  # this test process only imported the entry point


def test_a_large_answer_arrives_whole_through_a_pipe() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "memhtml", "manifest"], capture_output=True, text=True, check=False, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    assert len(completed.stdout) > 64 * 1024  # more than a pipe's buffer holds
    manifest = json.loads(completed.stdout)
    assert manifest["type"] == "cli.manifest"


BLAS_PROBE = """
import os, sys
import memhtml.cli.entry as entry
import memhtml.mcp.server as server

def report(argv):
    # What NumPy would read if it loaded now: the command runs after this point.
    print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"), "numpy" in sys.modules)
    return 0

def stop_serving():
    report([])
    raise SystemExit(0)

entry.run = report
server.load_config = stop_serving  # the server's first step after its own start
if sys.argv[1] == "mcp":
    server.main([])
else:
    entry.main(["manifest"])
"""


@pytest.mark.parametrize("preset", [None, "9"], ids=["unset", "the user's own"])
@pytest.mark.parametrize("program", ["cli", "mcp"])
def test_the_process_has_openblas_threads_sleep_before_numpy_loads(program: str, preset: str | None) -> None:
    """Both executables set it before any command runs (NumPy reads it as it loads); a user's setting wins."""
    import os

    environment = {key: value for key, value in os.environ.items() if key != "OPENBLAS_THREAD_TIMEOUT"}
    if preset is not None:
        environment["OPENBLAS_THREAD_TIMEOUT"] = preset
    done = subprocess.run(
        [sys.executable, "-c", BLAS_PROBE, program], capture_output=True, text=True, env=environment, check=False
    )
    assert done.stdout.split() == [preset or "4", "False"], done.stderr[-2000:]
