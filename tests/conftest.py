"""Shared fixtures: a hermetic git configuration for every test, stores in temp directories, and a
runner for the real `memhtml` executable in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

HERMETIC_GIT = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z",
    "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every git child sees the same identity, dates and an empty global config, whatever the machine has.
    A `git gc` that git's automatic maintenance starts runs to its end before its command does, so none
    is left packing a temporary directory the test is removing."""
    home = tmp_path_factory.mktemp("home")
    global_config = home / ".gitconfig"
    global_config.write_text("[init]\n\tdefaultBranch = main\n[gc]\n\tautoDetach = false\n", encoding="utf-8")
    for key, value in HERMETIC_GIT.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    monkeypatch.setenv("HOME", str(home))
    for key in ("MEMHTML_ROOT", "MEMHTML_REFUSE_ENV_ROOT", "MEMHTML_OUTPUT", "GIT_DIR", "GIT_INDEX_FILE"):
        monkeypatch.delenv(key, raising=False)
    # The model is the edge the tests fake: the deterministic hash embedder, unless a test asks for the
    # shipped static model (MEMHTML_EMBED=on) or none (off).
    monkeypatch.setenv("MEMHTML_EMBED", "hash")


@dataclass
class Answer:
    status: int
    stdout: str
    stderr: str

    @property
    def envelope(self) -> dict[str, Any]:
        parsed = json.loads(self.stdout)
        assert isinstance(parsed, dict)
        return parsed

    @property
    def data(self) -> dict[str, Any]:
        data = self.envelope["data"]
        assert isinstance(data, dict)
        return data


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Answer:
    """Run the real CLI in a child process with stdout piped (so it answers JSON)."""
    completed = subprocess.run(
        [sys.executable, "-m", "memhtml", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        check=False,
    )
    return Answer(completed.returncode, completed.stdout, completed.stderr)


def run_cli_concurrently(argument_lists: list[list[str]]) -> list[Answer]:
    """Start every command line at once (real processes racing for the store), then collect them."""
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "memhtml", *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for arguments in argument_lists
    ]
    answers = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=300)
        answers.append(Answer(process.returncode, stdout, stderr))
    return answers


def git(root: Path, *args: str) -> str:
    completed = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True)
    return completed.stdout


def commit_count(root: Path) -> int:
    """How many commits HEAD has (every write door must add exactly the commits it says)."""
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def memory_files(root: Path) -> list[str]:
    """Every `.html` file under the four buckets, as found on disk (not as any command reports)."""
    return sorted(
        str(path.relative_to(root))
        for bucket in ("projects", "areas", "resources", "archive")
        for path in (root / bucket).rglob("*.html")
    )


def another_process_takes_the_index(root: Path) -> bool:
    """Whether a second process opens the store's index read-write at once (no retry): nothing holds it."""
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, _duckdb; _duckdb.connect(sys.argv[1]).close()",
            str(root / ".memhtml" / "index.duckdb"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.returncode == 0


@contextmanager
def index_held_by_another_process(store_root: Path) -> Iterator[None]:
    """Another process holds the store's index file open (read-write) until the block ends."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, _duckdb; c = _duckdb.connect(sys.argv[1]); print('held', flush=True); sys.stdin.read()",
            str(store_root / ".memhtml" / "index.duckdb"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.communicate("")


@pytest.fixture
def store_root(tmp_path: Path) -> Iterator[Path]:
    """An initialized store made through the real CLI."""
    root = tmp_path / "store"
    answer = run_cli("init", "--repo", str(root))
    assert answer.status == 0, answer.stdout + answer.stderr
    yield root


# CI explores the same examples every run, so a red build is reproducible; locally they vary.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("dev", database=None, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
