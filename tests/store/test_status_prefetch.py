"""`index update` starts git's working-tree scan before it opens the index: the prefetched answer is
the one a direct scan gives, it is used once, and a git failure reaches the caller, not the thread."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from memhtml.contracts.errors import GitFailure
from memhtml.store import gitread, untracked
from memhtml.store.gitread import GitCorpusReader, status_records
from memhtml.store.untracked import MEMO_NAME
from tests.conftest import git, run_cli

BUCKETS = ("projects", "areas", "resources", "archive")


def write_memory(root: Path, title: str) -> str:
    answer = run_cli("write", "--repo", str(root), "--title", title, "--type", "semantic", "--claim", f"{title} holds.")
    assert answer.status == 0, answer.stdout
    path = answer.data["path"]
    assert isinstance(path, str)
    return path


def test_a_prefetched_scan_answers_what_a_direct_one_does(store_root: Path) -> None:
    edited, removed = write_memory(store_root, "Edited fact"), write_memory(store_root, "Removed fact")
    (store_root / edited).write_text((store_root / edited).read_text(encoding="utf-8") + "\n", encoding="utf-8")
    (store_root / removed).unlink()
    untracked = store_root / "areas" / "inbox" / "untracked-fact.html"
    untracked.write_text((store_root / edited).read_text(encoding="utf-8"), encoding="utf-8")
    direct = GitCorpusReader(store_root).dirty()
    assert {(entry.path, entry.deleted) for entry in direct} == {
        (edited, False),
        (removed, True),
        ("areas/inbox/untracked-fact.html", False),
    }
    reader = GitCorpusReader(store_root)
    reader.prefetch_dirty()
    assert reader.dirty() == direct
    # Used once: the next answer is a fresh scan that sees what changed since.
    git(store_root, "add", "-A")
    git(store_root, "commit", "-qm", "take the edits")
    assert reader.dirty() == []


def test_a_failed_prefetched_scan_raises_in_the_caller(tmp_path: Path) -> None:
    reader = GitCorpusReader(tmp_path)  # not a repository
    reader.prefetch_dirty()
    with pytest.raises(GitFailure):
        reader.dirty()


def test_a_head_that_moved_after_the_scan_began_is_scanned_again(store_root: Path) -> None:
    written = write_memory(store_root, "Soon uncommitted")
    reader = GitCorpusReader(store_root)
    reader.prefetch_dirty()
    scan = reader._status_scan
    assert scan is not None
    assert scan.records()[1] == []  # the scan is done, against the HEAD that holds the memory
    # HEAD moves back without the working tree changing: the memory is now staged, not committed.
    git(store_root, "reset", "-q", "--soft", "HEAD~1")
    reader.head()  # the HEAD the caller indexes, read as `update` reads it
    assert [(entry.path, entry.deleted) for entry in reader.dirty()] == [(written, False)]


@pytest.mark.parametrize("walkers", ["one git status", "two processes"])
def test_either_walk_answers_what_one_git_status_does(
    store_root: Path, monkeypatch: pytest.MonkeyPatch, walkers: str
) -> None:
    # The store is small: one process walks it unless the limit says every index is large.
    if walkers == "two processes":
        monkeypatch.setattr(gitread, "ONE_WALKER_ENTRIES", 0)
    edited, removed = write_memory(store_root, "Edited fact"), write_memory(store_root, "Removed fact")
    staged_then_edited = write_memory(store_root, "Staged fact")
    (store_root / edited).write_text((store_root / edited).read_text(encoding="utf-8") + "\n", encoding="utf-8")
    (store_root / removed).unlink()
    text = (store_root / edited).read_text(encoding="utf-8")
    nested = store_root / "projects" / "new-project" / "notes"
    nested.mkdir(parents=True)
    (nested / "untracked.html").write_text(text, encoding="utf-8")
    (store_root / "areas" / "added.html").write_text(text, encoding="utf-8")
    git(store_root, "add", "areas/added.html")
    (store_root / staged_then_edited).write_text(text + "x", encoding="utf-8")
    git(store_root, "add", staged_then_edited)
    (store_root / staged_then_edited).write_text(text + "y", encoding="utf-8")
    with (store_root / ".git" / "info" / "exclude").open("a", encoding="utf-8") as exclude:
        exclude.write("areas/ignored-*.html\n")
    (store_root / "areas" / "ignored-draft.html").write_text(text, encoding="utf-8")
    (store_root / "outside-the-buckets.html").write_text(text, encoding="utf-8")

    output = git(store_root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", *BUCKETS)
    expected = sorted((record[:2], record[3:]) for record in output.split("\0") if record)
    assert sorted(status_records(store_root)) == expected
    assert {path for _, path in expected} == {
        edited,
        removed,
        staged_then_edited,
        "areas/added.html",
        "projects/new-project/notes/untracked.html",
    }


def test_the_walk_is_chosen_by_the_entries_gits_index_lists(store_root: Path) -> None:
    listed = len(git(store_root, "ls-files", "-z").split("\0")) - 1
    assert listed > 0
    assert gitread.index_entries_above(store_root, listed - 1)
    assert not gitread.index_entries_above(store_root, listed)
    assert gitread.index_entry_count(store_root) == listed


@pytest.mark.parametrize("index_bytes", [None, b"", b"DIRC\x00\x00", b"not an index at all"])
def test_an_index_that_cannot_be_read_is_taken_as_large_and_counts_nothing(
    tmp_path: Path, index_bytes: bytes | None
) -> None:
    (tmp_path / ".git").mkdir()
    if index_bytes is not None:
        (tmp_path / ".git" / "index").write_bytes(index_bytes)
    assert gitread.index_entries_above(tmp_path, 10**9)
    assert gitread.index_entry_count(tmp_path) is None  # workers are never forked ahead on such a guess


def test_past_the_one_walker_limit_the_walk_and_the_indexer_share_one_diff(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an update, the untracked walk's last HEAD is the index's watermark: the walk asks which paths
    the commits since removed, the indexer what they changed, and git diffs the two commits once."""
    from memhtml.contracts.corpus import TreeChange

    monkeypatch.setattr(gitread, "ONE_WALKER_ENTRIES", 0)
    monkeypatch.setattr(untracked, "RACY_NANOSECONDS", 0)  # the store's files were all written just now
    write_memory(store_root, "First fact")  # the store's `.memhtml/`, where the walk keeps its memo
    before = git(store_root, "rev-parse", "HEAD").strip()
    time.sleep(0.02)  # a tick of the file clock between what the walk stats and what changes next
    first = GitCorpusReader(store_root)
    first.prefetch_dirty()
    assert first.dirty() == []
    assert json.loads((store_root / ".memhtml" / MEMO_NAME).read_text(encoding="utf-8"))["head"] == before
    time.sleep(0.02)
    path = write_memory(store_root, "Arrived fact")
    after = git(store_root, "rev-parse", "HEAD").strip()
    blob = git(store_root, "rev-parse", f"HEAD:{path}").strip()
    diffs: list[list[str]] = []
    real = subprocess.run

    def counted(command: list[str], *args: object, **options: object) -> object:
        if command[:1] == ["git"] and {"diff", "diff-tree"} & set(command[3:4]):
            diffs.append(list(command))
        return real(command, *args, **options)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "run", counted)  # every git command of this process, any module's
    walks: list[bool] = []
    finish = untracked.UntrackedWalk.finish

    def finished(walk: untracked.UntrackedWalk, status: bytes | None) -> list[str]:
        answer = finish(walk, status)  # joins the walk's thread: its plan is made by then
        assert walk._plan is not None
        walks.append(walk._plan.everything)
        return answer

    monkeypatch.setattr(untracked.UntrackedWalk, "finish", finished)
    reader = GitCorpusReader(store_root)
    reader.prefetch_dirty()
    assert reader.changes(before, after) == [TreeChange("A", path, blob)]
    assert reader.dirty() == []
    assert walks == [False]  # the walk asked git only about what changed, the removed paths among it
    assert len(diffs) == 1, diffs
    assert [before, after] == diffs[0][diffs[0].index("--no-abbrev") + 1 : diffs[0].index("--")]


def test_a_diff_git_cannot_answer_fails_each_asker(store_root: Path) -> None:
    """A commit that is gone: the indexer hears GitFailure (and rebuilds), however often it asks."""
    diffs = gitread.TreeDiffs(store_root)
    head = git(store_root, "rev-parse", "HEAD").strip()
    for _ in range(2):
        with pytest.raises(GitFailure):
            diffs.changes("0" * 40, head)
        with pytest.raises(GitFailure):
            diffs.paths_moved("0" * 40, head)
