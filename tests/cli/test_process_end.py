"""The process ends right after its answer, skipping Python's teardown only when nothing needs it."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from memhtml.cli import entry


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


@pytest.mark.usefixtures("endings")
def test_a_running_thread_gets_the_full_teardown() -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        with pytest.raises(Ended) as ended:
            entry._end_process(0)
    finally:
        release.set()
        worker.join()
    assert (ended.value.how, ended.value.status) == ("teardown", 0)


@pytest.mark.usefixtures("endings")
def test_worker_processes_get_the_full_teardown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "multiprocessing", object())
    with pytest.raises(Ended) as ended:
        entry._end_process(1)
    assert (ended.value.how, ended.value.status) == ("teardown", 1)


def test_a_large_answer_arrives_whole_through_a_pipe() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "memhtml", "manifest"], capture_output=True, text=True, check=False, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    assert len(completed.stdout) > 64 * 1024  # more than a pipe's buffer holds
    manifest = json.loads(completed.stdout)
    assert manifest["type"] == "cli.manifest"
