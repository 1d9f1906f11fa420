"""Signals around the commit boundary, delivered for real to this process: one that arrives before the
branch moves leaves no trace; one that arrives while it moves, or after, never undoes the commit and
never turns the answer into a failure."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from memhtml.operations.write import WriteRequest, write
from memhtml.store import commit, gitcmd
from memhtml.store.gitcmd import head_sha
from memhtml.store.initialize import init_store
from memhtml.store.repository import open_store
from tests.conftest import git

REQUEST = WriteRequest(title="Interrupted", memory_type="semantic", claim="An interrupt arrived here.")
NOW = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC)


def signal_after(monkeypatch: pytest.MonkeyPatch, git_command: str, number: signal.Signals) -> list[int]:
    """Send `number` to this process as soon as the store's `git <git_command>` returns; the list
    counts the signals sent."""
    real = gitcmd.run_git
    sent: list[int] = []

    def run_then_signal(root: Path, args: list[str], **kwargs: Any) -> Any:
        completed = real(root, args, **kwargs)
        if args[0] == git_command and not sent:
            sent.append(number)
            os.kill(os.getpid(), number)
        return completed

    monkeypatch.setattr(commit, "run_git", run_then_signal)
    monkeypatch.setattr(gitcmd, "run_git", run_then_signal)  # what `git_text` calls
    return sent


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_during_the_compare_and_swap_waits_and_the_write_answers_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], number: signal.Signals
) -> None:
    from memhtml.cli.entry import run

    init_store(tmp_path / "s")
    store = open_store(tmp_path / "s")
    sent = signal_after(monkeypatch, "update-ref", number)
    status = run(["write", "--repo", str(store.root), "--title", "Interrupted", "--type", "semantic",
                  "--claim", "An interrupt arrived here.", "--json"])  # fmt: skip
    answer = json.loads(capsys.readouterr().out)["data"]
    assert sent == [number]
    assert status == 0 and answer["stored"] is True and answer["commitSha"] == head_sha(store.root)
    assert (store.root / "areas/inbox/interrupted.html").exists()
    assert git(store.root, "show", "--name-only", "--format=", "HEAD").split() == ["areas/inbox/interrupted.html"]
    # The user's index was brought in line too, and the index pass was left to the next command.
    assert git(store.root, "status", "--porcelain", "--untracked-files=all") == ""
    assert "interrupted" in answer["index"]["warning"]


def test_a_signal_before_the_branch_moved_removes_the_file_and_its_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init_store(tmp_path / "s")
    store = open_store(tmp_path / "s")
    before = head_sha(store.root)
    sent = signal_after(monkeypatch, "commit-tree", signal.SIGTERM)
    request = WriteRequest(title="Gone", memory_type="semantic", claim="Never lands.", workspace="brand-new")
    with pytest.raises(KeyboardInterrupt):
        write(store.root, request, NOW)
    assert sent == [signal.SIGTERM]
    assert head_sha(store.root) == before
    assert not (store.root / "projects" / "brand-new").exists()
    assert git(store.root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not list((store.root / ".git").glob("memhtml-journal-*"))
    assert not (store.root / ".git" / "index.lock").exists()


def test_an_interrupted_batch_answers_a_failure_envelope_and_leaves_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memhtml.cli.entry import run

    init_store(tmp_path / "s")
    store = open_store(tmp_path / "s")
    before = head_sha(store.root)
    signal_after(monkeypatch, "commit-tree", signal.SIGTERM)
    source = tmp_path / "ops.jsonl"
    source.write_text('{"op":"write","title":"Cut","type":"semantic","body":"Cut short."}\n', encoding="utf-8")
    status = run(["apply", "--repo", str(store.root), "--file", str(source), "--json"])
    envelope = json.loads(capsys.readouterr().out)
    assert status == 1
    assert envelope["code"] == "ERR_UNKNOWN" and envelope["retryable"] is True and envelope["stored"] is False
    assert head_sha(store.root) == before
    assert git(store.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_the_handlers_are_put_back_after_a_write(tmp_path: Path) -> None:
    init_store(tmp_path / "s")
    store = open_store(tmp_path / "s")
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    assert write(store.root, REQUEST, NOW).stored
    assert {number: signal.getsignal(number) for number in before} == before
