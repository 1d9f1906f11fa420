"""stdout that cannot take the answer (a full disk, a closed descriptor) never produces a traceback, and
the exit status still says what the command did: a write that landed exits 0, a read whose answer was
lost exits 1 and says why on stderr."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import commit_count, run_cli

FULL_DEVICE = Path("/dev/full")
needs_full_device = pytest.mark.skipif(not FULL_DEVICE.exists(), reason="no /dev/full on this system")


def _memhtml(root: Path, *arguments: str, redirect: str) -> subprocess.CompletedProcess[str]:
    command = shlex.join([sys.executable, "-m", "memhtml", *arguments, "--repo", str(root), "--json"])
    return subprocess.run(["sh", "-c", f"exec {command} {redirect}"], capture_output=True, text=True, check=False)


def _write_arguments(claim: str) -> list[str]:
    return ["write", "--title", "Pool", "--type", "semantic", "--claim", claim]


@needs_full_device
def test_a_write_whose_answer_meets_a_full_disk_exits_0_because_it_landed(store_root: Path) -> None:
    commits = commit_count(store_root)
    completed = _memhtml(store_root, *_write_arguments("The pool ceiling is 64."), redirect=">/dev/full")
    assert completed.returncode == 0, completed.stderr
    assert commit_count(store_root) == commits + 1
    assert "Traceback" not in completed.stderr
    assert "could not be written to stdout" in completed.stderr


@needs_full_device
def test_a_search_whose_answer_is_lost_exits_1_and_says_why(store_root: Path) -> None:
    assert run_cli(*_write_arguments("The pool ceiling is 64."), "--repo", str(store_root)).status == 0
    completed = _memhtml(store_root, "search", "pool ceiling", redirect=">/dev/full")
    assert completed.returncode == 1
    assert "Traceback" not in completed.stderr
    assert "could not be written to stdout (No space left on device)" in completed.stderr


@pytest.mark.parametrize("arguments", [["read", "areas/inbox/pool.html"], ["search", "pool ceiling"]])
def test_a_closed_stdout_neither_crashes_a_read_nor_fails_a_write(store_root: Path, arguments: list[str]) -> None:
    commits = commit_count(store_root)
    written = _memhtml(store_root, *_write_arguments("The pool ceiling is 64."), redirect=">&-")
    assert written.returncode == 0, written.stderr
    assert commit_count(store_root) == commits + 1
    read = _memhtml(store_root, *arguments, redirect=">&-")
    assert read.returncode == 0, read.stderr
    assert "Traceback" not in written.stderr + read.stderr
    assert os.path.exists(store_root / "areas/inbox/pool.html")


@needs_full_device
def test_state_export_whose_answer_meets_a_full_disk_exits_0_because_its_commit_landed(store_root: Path) -> None:
    assert run_cli(*_write_arguments("The pool ceiling is 64."), "--repo", str(store_root)).status == 0
    assert run_cli("reinforce", "--repo", str(store_root), "areas/inbox/pool.html").status == 0
    commits = commit_count(store_root)
    completed = _memhtml(store_root, "state", "export", redirect=">/dev/full")
    assert completed.returncode == 0, completed.stderr
    assert commit_count(store_root) == commits + 1
    assert "could not be written to stdout" in completed.stderr


@needs_full_device
@pytest.mark.parametrize("arguments", [["manifest"], ["help", "search"]])
def test_a_lost_manifest_or_help_exits_1(tmp_path: Path, arguments: list[str]) -> None:
    command = shlex.join([sys.executable, "-m", "memhtml", *arguments, "--json"])
    completed = subprocess.run(["sh", "-c", f"exec {command} >/dev/full"], capture_output=True, text=True, check=False)
    assert completed.returncode == 1
    assert "Traceback" not in completed.stderr
