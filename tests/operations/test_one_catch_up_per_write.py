"""A write catches the index up with HEAD once, under the write lock (where the dedupe asks who holds
its content), and then indexes its own commit: not also when it opens the index, unless an assist
reads the index before the lock. And an index that cannot catch up under the lock costs the write
nothing but a warning: the dedupe asks the tree instead."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memhtml.contracts.errors import StorageFailure
from memhtml.operations import indexing
from memhtml.operations.write import WriteRequest, write
from tests.conftest import git, memory_files, run_cli


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[None]:
    """A list that grows by one at each catch-up."""
    calls: list[None] = []
    real: Callable[..., Any] = indexing.catch_up

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(None)
        return real(*args, **kwargs)

    monkeypatch.setattr(indexing, "catch_up", counted)
    return calls


def _request(title: str, claim: str) -> WriteRequest:
    return WriteRequest(title=title, memory_type="semantic", claim=claim)


def test_a_plain_write_catches_up_once_before_its_commit_and_once_after(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli("write", "--repo", str(store_root), "--title", "First", "--type", "semantic",
                   "--claim", "The first fact is here.").status == 0  # fmt: skip
    calls = _counting(monkeypatch)
    report = write(store_root, _request("Second", "The second fact is here."))
    assert report.stored
    assert len(calls) == 2  # under the lock (owners), then the pass of its own commit


def test_an_assisted_write_reads_a_caught_up_index_before_the_lock(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting(monkeypatch)
    report = write(store_root, _request("Third", "The third fact is here."), detect_conflicts=True)
    assert report.stored and report.conflicts == []
    assert len(calls) == 3  # the conflict candidates are read before the lock, from a fresh index


def test_a_catch_up_that_fails_under_the_lock_still_stores_and_warns(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = len(memory_files(store_root))

    def failing(*_args: Any, **_kwargs: Any) -> Any:
        raise StorageFailure("index query failed (IOException)", ["memhtml index rebuild"])

    monkeypatch.setattr(indexing, "catch_up", failing)
    report = write(store_root, _request("Fourth", "The fourth fact is here."))
    assert report.stored and report.outcome == "written"
    assert report.index_warning is not None and "not updated" in str(report.index_warning["warning"])
    assert len(memory_files(store_root)) == before + 1
    assert report.path in git(store_root, "ls-tree", "-r", "--name-only", "HEAD").split()
