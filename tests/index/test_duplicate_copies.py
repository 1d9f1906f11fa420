"""Two active copies of one article (a hand copy): the index holds the copy at the smaller path and lists
the other, whichever arrived first, and when the held copy goes (deleted, edited, archived, moved past
the other, deleted on disk) the listed one is held at once: an update leaves what a rebuild would."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memhtml.index.database import open_database
from tests.conftest import git, run_cli
from tests.index.test_indexer import rebuilt_snapshot, snapshot, write

HELD = "resources/db/pool-ceiling.html"
BEFORE = "areas/inbox/copy.html"  # sorts before HELD
AFTER = "resources/db/qq-copy.html"  # sorts after HELD


@pytest.fixture
def store(store_root: Path) -> Path:
    assert write(store_root, "Pool ceiling", "The connection pool ceiling is 64.", "--tag", "db") == HELD
    write(store_root, "Deploy key", "Rotate the deploy key every 90 days.")
    return store_root


def copy_and_commit(root: Path, target: str) -> None:
    (root / target).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(root / HELD, root / target)
    git(root, "add", "--", target)
    git(root, "commit", "-q", "-m", f"copy to {target}")


def update(root: Path) -> dict[str, object]:
    answer = run_cli("index", "update", "--repo", str(root))
    assert answer.status == 0, answer.stdout + answer.stderr
    return dict(answer.data)


def held_paths(root: Path) -> list[str]:
    """The indexed paths holding the pool ceiling's article (exactly one while a copy is active)."""
    with open_database(root, read_only=True) as database:
        rows = database.rows("SELECT path FROM files WHERE gist LIKE '%pool ceiling%' AND NOT archived ORDER BY path")
    return [str(row[0]) for row in rows]


def listed_paths(root: Path) -> list[str]:
    with open_database(root, read_only=True) as database:
        return [str(row[0]) for row in database.rows("SELECT path FROM duplicate_files ORDER BY path")]


def found(root: Path) -> list[str]:
    answer = run_cli("search", "--repo", str(root), "pool ceiling")
    assert answer.status == 0, answer.stdout + answer.stderr
    return [str(hit["path"]) for hit in answer.data["hits"]]


def assert_as_rebuilt(root: Path, scratch: Path) -> None:
    assert snapshot(root) == rebuilt_snapshot(root, scratch)


def test_a_copy_at_a_greater_path_is_listed_and_the_held_one_stays(store: Path, tmp_path: Path) -> None:
    copy_and_commit(store, AFTER)
    report = update(store)
    assert report["skipped"] == [{"path": AFTER, "reason": f"duplicate of {HELD}: same content hash, both active"}]
    assert held_paths(store) == [HELD]
    assert listed_paths(store) == [AFTER]
    assert_as_rebuilt(store, tmp_path)


def test_a_copy_at_a_smaller_path_displaces_the_held_one_as_a_rebuild_would(store: Path, tmp_path: Path) -> None:
    copy_and_commit(store, BEFORE)
    report = update(store)
    assert report["skipped"] == [{"path": HELD, "reason": f"duplicate of {BEFORE}: same content hash, both active"}]
    assert held_paths(store) == [BEFORE]
    assert listed_paths(store) == [HELD]
    assert found(store) == [BEFORE]
    assert_as_rebuilt(store, tmp_path)


def test_deleting_the_held_copy_holds_the_listed_one(store: Path, tmp_path: Path) -> None:
    copy_and_commit(store, AFTER)
    update(store)
    git(store, "rm", "-q", HELD)
    git(store, "commit", "-q", "-m", "drop the original")
    report = update(store)
    assert (report["removed"], report["added"], report["unchanged"]) == (1, 1, False)
    assert held_paths(store) == [AFTER]
    assert listed_paths(store) == []
    assert found(store) == [AFTER]
    assert_as_rebuilt(store, tmp_path)


def test_editing_the_held_copy_holds_the_listed_one(store: Path, tmp_path: Path) -> None:
    copy_and_commit(store, AFTER)
    update(store)
    file = store / HELD
    file.write_text(file.read_text(encoding="utf-8").replace("is 64.", "is 96."), encoding="utf-8")
    git(store, "commit", "-q", "-am", "edit the original")
    update(store)
    assert held_paths(store) == [HELD, AFTER]  # two articles now: 96 at HELD, 64 at the copy
    assert listed_paths(store) == []
    assert_as_rebuilt(store, tmp_path)


def test_archiving_the_held_copy_holds_the_listed_one(store: Path, tmp_path: Path) -> None:
    copy_and_commit(store, AFTER)
    update(store)
    archived = run_cli("archive", "--repo", str(store), HELD, "--reason", "restated elsewhere")
    assert archived.status == 0, archived.stdout + archived.stderr
    assert held_paths(store) == [AFTER]
    assert found(store) == [AFTER]
    assert_as_rebuilt(store, tmp_path)


def test_moving_the_held_copy_past_the_listed_one_swaps_them(store: Path, tmp_path: Path) -> None:
    copy_and_commit(store, AFTER)
    update(store)
    moved = "resources/db/zz-moved.html"
    git(store, "mv", HELD, moved)
    git(store, "commit", "-q", "-m", "move the original past the copy")
    update(store)
    assert held_paths(store) == [AFTER]
    assert listed_paths(store) == [moved]
    assert_as_rebuilt(store, tmp_path)


def test_deleting_the_held_copy_on_disk_and_restoring_it(store: Path, tmp_path: Path) -> None:
    copy_and_commit(store, AFTER)
    update(store)
    (store / HELD).unlink()
    update(store)
    assert held_paths(store) == [AFTER]
    assert_as_rebuilt(store, tmp_path)
    git(store, "checkout", "--", HELD)
    update(store)
    assert held_paths(store) == [HELD]
    assert listed_paths(store) == [AFTER]
    assert_as_rebuilt(store, tmp_path)


def test_an_uncommitted_copy_is_held_from_disk_when_the_committed_one_goes(store: Path, tmp_path: Path) -> None:
    shutil.copyfile(store / HELD, store / AFTER)  # untracked: its bytes are in no git object
    update(store)
    assert listed_paths(store) == [AFTER]
    git(store, "rm", "-q", HELD)
    git(store, "commit", "-q", "-m", "drop the original")
    update(store)
    assert held_paths(store) == [AFTER]
    assert found(store) == [AFTER]
    assert_as_rebuilt(store, tmp_path)
