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


# --- an uncommitted copy never takes the article from a committed one ---------------------------


def _write_pool(root: Path, *extra: str) -> dict[str, object]:
    answer = run_cli(
        "write", "--repo", str(root), "--title", "Pool ceiling", "--type", "semantic",
        "--claim", "The connection pool ceiling is 64.", "--tag", "db", *extra,
    )  # fmt: skip
    assert answer.status == 0, answer.stdout + answer.stderr
    return dict(answer.data)


def test_an_untracked_copy_at_a_smaller_path_is_listed_and_writes_dedupe_to_the_commit(
    store: Path, tmp_path: Path
) -> None:
    shutil.copyfile(store / HELD, store / BEFORE)  # untracked, and sorting first
    update(store)
    assert held_paths(store) == [HELD]
    assert listed_paths(store) == [BEFORE]
    assert_as_rebuilt(store, tmp_path)
    again = _write_pool(store)
    assert (again["outcome"], again["existingPath"]) == ("unchanged", HELD)


def test_a_dirty_edit_that_copies_another_memory_does_not_take_its_article(store: Path, tmp_path: Path) -> None:
    deploy = write(store, "Deploy key", "Rotate the deploy key every 90 days, a second memory.")
    assert deploy < HELD
    shutil.copyfile(store / HELD, store / deploy)  # a dirty edit, at a path sorting before HELD
    update(store)
    assert held_paths(store) == [HELD]
    assert_as_rebuilt(store, tmp_path)
    again = _write_pool(store)
    assert (again["outcome"], again["existingPath"]) == ("unchanged", HELD)
    restated = _write_pool(store, "--confidence", "0.9")
    assert (restated["outcome"], restated["path"]) == ("updated", HELD)


def test_a_committed_copy_takes_the_article_from_an_uncommitted_one(store: Path, tmp_path: Path) -> None:
    shutil.copyfile(store / HELD, store / BEFORE)  # untracked
    git(store, "rm", "-q", HELD)
    git(store, "commit", "-q", "-m", "drop the original")
    update(store)
    assert held_paths(store) == [BEFORE]  # the only copy left, from disk
    copy_and_commit_text(store, AFTER, (store / BEFORE).read_text(encoding="utf-8"))
    update(store)
    assert held_paths(store) == [AFTER]
    assert listed_paths(store) == [BEFORE]
    assert_as_rebuilt(store, tmp_path)


def copy_and_commit_text(root: Path, target: str, text: str) -> None:
    (root / target).parent.mkdir(parents=True, exist_ok=True)
    (root / target).write_text(text, encoding="utf-8")
    git(root, "add", "--", target)
    git(root, "commit", "-q", "-m", f"add {target}")


def test_the_write_path_never_holds_a_copy_deleted_from_disk(store: Path) -> None:
    shutil.copyfile(store / HELD, store / AFTER)  # untracked: its blob id is HELD's, which git holds
    update(store)
    (store / AFTER).unlink()
    archived = run_cli("archive", "--repo", str(store), HELD, "--reason", "restated elsewhere")
    assert archived.status == 0, archived.stdout + archived.stderr
    assert held_paths(store) == []
    assert found(store) == []


# --- counters, counts and old indexes -------------------------------------------------------------


def access_rows(root: Path) -> list[tuple[str, int]]:
    with open_database(root, read_only=True) as database:
        return [(str(path), int(count)) for path, count in database.rows("SELECT path, access_count FROM state.access")]


def test_a_displaced_copy_keeps_its_counters_and_doctor_leaves_them(store: Path) -> None:
    assert run_cli("reinforce", "--repo", str(store), HELD).status == 0
    copy_and_commit(store, BEFORE)
    update(store)
    assert listed_paths(store) == [HELD]
    checked = run_cli("doctor", "--repo", str(store), "--fix")
    assert checked.data["orphanAccessRows"] == [] and checked.data["repaired"]["prunedAccessRows"] == 0
    git(store, "rm", "-q", BEFORE)
    git(store, "commit", "-q", "-m", "drop the copy")
    update(store)
    assert held_paths(store) == [HELD]
    assert access_rows(store) == [(HELD, 1)]


def test_a_pass_reports_each_copy_once_and_never_a_held_one(store: Path) -> None:
    copies = ["resources/db/zz1.html", "resources/db/zz2.html"]
    for copy in copies:
        shutil.copyfile(store / HELD, store / copy)
    git(store, "add", "--", *copies)
    git(store, "commit", "-q", "-m", "two copies")
    file = store / HELD
    file.write_text(file.read_text(encoding="utf-8").replace("is 64.", "is 96."), encoding="utf-8")  # dirty
    report = update(store)
    assert report["added"] == 2
    assert report["skipped"] == [
        {"path": copies[1], "reason": f"duplicate of {copies[0]}: same content hash, both active"}
    ]
    rebuilt = run_cli("index", "rebuild", "--repo", str(store)).data
    assert rebuilt["skipped"] == report["skipped"]


def test_a_copy_that_arrives_and_goes_in_one_pass_leaves_the_held_one_unreported(store: Path) -> None:
    copy_and_commit(store, BEFORE)
    (store / BEFORE).unlink()
    report = update(store)
    assert (report["added"], report["removed"], report["skipped"]) == (1, 1, [])
    assert held_paths(store) == [HELD]


def test_an_index_from_before_the_list_is_rebuilt_once(store: Path, tmp_path: Path) -> None:
    copy_and_commit(store, AFTER)
    update(store)
    # What an index built before migration 0003 looks like: no list, the copy skipped unrecorded.
    with open_database(store) as database:
        database.run("DROP TABLE duplicate_files")
        database.run("DELETE FROM schema_migrations WHERE name LIKE '0003%'")
    git(store, "rm", "-q", HELD)
    git(store, "commit", "-q", "-m", "drop the original")
    assert found(store) == [AFTER]
    assert_as_rebuilt(store, tmp_path)
