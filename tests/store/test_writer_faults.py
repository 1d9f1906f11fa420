"""Fault injection around the commit: an interrupt before the branch moves leaves no trace, one after
it never removes the committed file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from memhtml.operations.write import WriteRequest, write
from memhtml.store import transaction
from memhtml.store.commit import commit_paths
from memhtml.store.gitcmd import head_sha
from memhtml.store.initialize import init_store
from memhtml.store.repository import open_store
from tests.conftest import git

REQUEST = WriteRequest(title="Interrupted", memory_type="semantic", claim="An interrupt arrived here.")
NOW = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC)


def test_interrupt_after_the_branch_moved_keeps_the_file_and_answers_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init_store(tmp_path / "s")
    store = open_store(tmp_path / "s")
    real_commit = commit_paths

    def commit_then_interrupt(*args: Any, **kwargs: Any) -> str:
        real_commit(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(transaction, "commit_paths", commit_then_interrupt)
    # The commit landed, so the write is done: it answers success rather than a failure.
    report = write(store.root, REQUEST, NOW)
    assert report.stored and report.commit_sha == head_sha(store.root)
    assert (store.root / "areas/inbox/interrupted.html").exists()
    assert git(store.root, "show", "--name-only", "--format=", "HEAD").split() == ["areas/inbox/interrupted.html"]


def test_interrupt_before_the_branch_moved_removes_the_file_and_its_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    init_store(tmp_path / "s")
    store = open_store(tmp_path / "s")
    before = head_sha(store.root)

    def interrupt(*args: Any, **kwargs: Any) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(transaction, "commit_paths", interrupt)
    request = WriteRequest(title="Gone", memory_type="semantic", claim="Never lands.", workspace="brand-new")
    with pytest.raises(KeyboardInterrupt):
        write(store.root, request, NOW)
    assert head_sha(store.root) == before
    assert not (store.root / "projects" / "brand-new").exists()
    assert git(store.root, "status", "--porcelain", "--untracked-files=all") == ""


def test_an_interrupted_batch_answers_a_failure_envelope_and_leaves_the_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from memhtml.cli.entry import run

    init_store(tmp_path / "s")
    store = open_store(tmp_path / "s")
    before = head_sha(store.root)

    def interrupt(*args: Any, **kwargs: Any) -> str:
        raise KeyboardInterrupt  # what SIGTERM/SIGHUP become inside a write

    monkeypatch.setattr(transaction, "commit_paths", interrupt)
    source = tmp_path / "ops.jsonl"
    source.write_text('{"op":"write","title":"Cut","type":"semantic","body":"Cut short."}\n', encoding="utf-8")
    status = run(["apply", "--repo", str(store.root), "--file", str(source), "--json"])
    envelope = json.loads(capsys.readouterr().out)
    assert status == 1
    assert envelope["code"] == "ERR_UNKNOWN" and envelope["retryable"] is True and envelope["stored"] is False
    assert head_sha(store.root) == before
    assert git(store.root, "status", "--porcelain", "--untracked-files=all") == ""
