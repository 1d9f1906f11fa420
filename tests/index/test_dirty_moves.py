"""A `git mv` that a pass sees in the working tree before it is committed keeps the memory's row (its
doc_id) and its access counters, as a committed rename does; so does moving it back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memhtml.index.database import open_database
from tests.conftest import git, run_cli
from tests.index.test_indexer import rebuilt_snapshot, snapshot, write

OLD = "areas/inbox/tea.html"
NEW = "areas/inbox/drinks.html"


def _row(root: Path) -> dict[str, Any]:
    with open_database(root, read_only=True) as database:
        doc_ids = dict(database.rows("SELECT path, doc_id FROM files"))
        access = dict(database.rows("SELECT path, access_count FROM state.access"))
    return {"doc_ids": doc_ids, "access": access}


def _update(root: Path) -> dict[str, Any]:
    answer = run_cli("index", "update", "--repo", str(root))
    assert answer.status == 0, answer.stdout + answer.stderr
    return answer.data


def _reinforced(root: Path) -> tuple[int, int]:
    path = write(root, "Tea", "The user prefers green tea in the morning.")
    assert path == OLD
    assert run_cli("reinforce", "--repo", str(root), OLD).status == 0
    before = _row(root)
    assert before["access"][OLD] >= 1
    return before["doc_ids"][OLD], before["access"][OLD]


def test_a_move_seen_before_its_commit_keeps_the_row_and_the_counters(store_root: Path, tmp_path: Path) -> None:
    doc_id, accesses = _reinforced(store_root)
    git(store_root, "mv", OLD, NEW)
    seen = _update(store_root)
    assert (seen["renamed"], seen["added"], seen["removed"]) == (1, 0, 0)
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)
    git(store_root, "commit", "-q", "-m", "move")
    committed = _update(store_root)
    assert (committed["renamed"], committed["added"], committed["modified"], committed["removed"]) == (1, 0, 0, 0)
    after = _row(store_root)
    assert after["doc_ids"] == {NEW: doc_id}
    assert after["access"] == {NEW: accesses}  # none left behind at the old path
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


def test_a_move_taken_back_before_its_commit_leaves_the_memory_as_it_was(store_root: Path, tmp_path: Path) -> None:
    doc_id, accesses = _reinforced(store_root)
    git(store_root, "mv", OLD, NEW)
    _update(store_root)
    git(store_root, "mv", NEW, OLD)
    _update(store_root)
    after = _row(store_root)
    assert after["doc_ids"] == {OLD: doc_id}
    assert after["access"] == {OLD: accesses}
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


def test_a_counter_that_moved_with_the_working_tree_survives_the_commit_of_another_rename(
    store_root: Path,
) -> None:
    _, accesses = _reinforced(store_root)
    git(store_root, "mv", OLD, NEW)
    _update(store_root)
    assert _row(store_root)["access"] == {NEW: accesses}
    git(store_root, "commit", "-q", "-m", "move")
    _update(store_root)
    _update(store_root)  # nothing new: the counter stays put
    assert _row(store_root)["access"] == {NEW: accesses}
