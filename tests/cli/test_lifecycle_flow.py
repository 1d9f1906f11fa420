"""correct, archive, link and tasks end to end: real executable, real git, real index."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memhtml.html.document import parse_memory
from tests.conftest import commit_count, git, run_cli

RETRY = [
    "--title", "Retry budget", "--claim", "The retry budget of the gateway is 3.", "--type", "semantic",
    "--tag", "gateway", "--entity", "service:gateway",
]  # fmt: skip
RETRY_PATH = "resources/gateway/retry-budget.html"
YEAR = dt.datetime.now(dt.UTC).year


def clean(root: Path) -> bool:
    return git(root, "status", "--porcelain", "--untracked-files=all") == ""


def test_correct_is_one_commit_that_carries_tags_entities_and_placement(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *RETRY)
    before = commit_count(store_root)
    answer = run_cli(
        "correct", RETRY_PATH, "--repo", str(store_root), "--title", "Retry budget v2",
        "--claim", "The retry budget of the gateway is 4.", "--reason", "lowered after the incident",
    )  # fmt: skip
    assert answer.status == 0, answer.stdout + answer.stderr
    data = answer.data
    assert data["outcome"] == "written" and data["stored"] is True
    assert data["path"] == "resources/gateway/retry-budget-v2.html"
    assert data["archivedPath"] == f"archive/{YEAR}/{RETRY_PATH}"
    assert commit_count(store_root) == before + 1
    status = git(store_root, "show", "--name-status", "--format=", "HEAD").split("\n")
    assert any(line.startswith("R") for line in status), status  # the target moved: git log --follow works
    new = parse_memory((store_root / data["path"]).read_text())
    assert new.tags == ["gateway"] and new.entities == ["service:gateway"]
    assert ("supersedes", "/" + data["archivedPath"]) in new.links
    old = parse_memory((store_root / data["archivedPath"]).read_text())
    assert old.status == "archived" and old.superseded_by == "/" + data["path"]
    assert old.valid_until == new.valid_from
    assert "Memhtml-Reason: lowered after the incident" in git(store_root, "log", "-1", "--format=%B")
    assert clean(store_root)
    resolved = run_cli("resolve", RETRY_PATH, "--repo", str(store_root)).data
    assert resolved["stopReason"] == "live" and resolved["path"] == data["path"]


def test_correct_carries_importance_and_confidence_unless_it_gives_new_ones(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *RETRY, "--importance", "8", "--confidence", "0.9")
    carried = run_cli(
        "correct", RETRY_PATH, "--repo", str(store_root), "--title", "Retry budget v2",
        "--claim", "The retry budget of the gateway is 4.",
    )  # fmt: skip
    assert carried.status == 0, carried.stdout + carried.stderr
    successor = parse_memory((store_root / carried.data["path"]).read_text())
    assert (successor.importance, successor.confidence) == (8, 0.9)
    given = run_cli(
        "correct", carried.data["path"], "--repo", str(store_root), "--title", "Retry budget v3",
        "--claim", "The retry budget of the gateway is 5.", "--importance", "3", "--confidence", "0.5",
    )  # fmt: skip
    assert given.status == 0, given.stdout + given.stderr
    latest = parse_memory((store_root / given.data["path"]).read_text())
    assert (latest.importance, latest.confidence) == (3, 0.5)


def test_correcting_with_the_same_title_keeps_the_path(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *RETRY)
    answer = run_cli(
        "correct", RETRY_PATH, "--repo", str(store_root), "--title", "Retry budget",
        "--claim", "The retry budget of the gateway is 4.",
    )  # fmt: skip
    assert answer.data["path"] == RETRY_PATH
    assert parse_memory((store_root / RETRY_PATH).read_text()).gist == "The retry budget of the gateway is 4."
    assert clean(store_root)


@pytest.mark.parametrize("title", ["Retry budget", "Retry budget v2"], ids=["same path", "new path"])
def test_correct_leaves_the_access_counters_with_the_archived_memory(store_root: Path, title: str) -> None:
    from memhtml.index.database import open_database

    run_cli("write", "--repo", str(store_root), *RETRY)
    reinforced = run_cli("reinforce", RETRY_PATH, "--repo", str(store_root), "--signal", "negative")
    assert reinforced.status == 0, reinforced.stdout + reinforced.stderr
    answer = run_cli(
        "correct", RETRY_PATH, "--repo", str(store_root), "--title", title,
        "--claim", "The retry budget of the gateway is 4.",
    )  # fmt: skip
    assert answer.status == 0, answer.stdout + answer.stderr
    with open_database(store_root, read_only=True) as database:
        counters = database.rows("SELECT path, reinforcement_count, outcome_score FROM state.access ORDER BY path")
    assert counters == [(answer.data["archivedPath"], 1, -0.3)]


def test_correcting_an_archived_target_is_refused_naming_the_live_successor(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *RETRY)
    first = run_cli(
        "correct", RETRY_PATH, "--repo", str(store_root), "--title", "Retry budget v2",
        "--claim", "The retry budget of the gateway is 4.",
    ).data  # fmt: skip
    before = commit_count(store_root)
    again = run_cli(
        "correct", first["archivedPath"], "--repo", str(store_root), "--title", "x", "--claim", "Five now.",
    )  # fmt: skip
    assert again.status == 1 and again.envelope["code"] == "ERR_INVALID_MEMORY"
    assert first["path"] in again.envelope["error"] and again.envelope["stored"] is False
    assert commit_count(store_root) == before and clean(store_root)


def test_correct_dedupes_like_a_write(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *RETRY)
    run_cli("write", "--repo", str(store_root), "--title", "Four", "--claim", "The budget is 4.", "--type", "semantic")
    answer = run_cli(
        "correct", RETRY_PATH, "--repo", str(store_root), "--title", "Retry", "--claim", "The budget is 4.",
    ).data  # fmt: skip
    assert answer["outcome"] == "updated" and answer["existingPath"] == "areas/inbox/four.html"
    memories = sorted(str(p.relative_to(store_root)) for p in store_root.rglob("*.html") if "README" not in p.name)
    assert memories == [f"archive/{YEAR}/{RETRY_PATH}", "areas/inbox/four.html"]
    successor = parse_memory((store_root / "areas/inbox/four.html").read_text())
    assert ("supersedes", "/" + answer["archivedPath"]) in successor.links
    # The correction's head (the target's carried tags and entities) is applied, not dropped.
    assert answer["changed"] == ["entities", "tags", "supersedes"]
    assert successor.tags == ["gateway"] and successor.entities == ["service:gateway"]
    assert successor.memory_type == "semantic"
    # The index survived: no duplicate active hash wedged it.
    assert run_cli("index", "update", "--repo", str(store_root)).status == 0


def test_archive_moves_stamps_and_refuses_twice(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *RETRY)
    answer = run_cli("archive", RETRY_PATH, "--repo", str(store_root), "--reason", "no longer relevant")
    assert answer.status == 0
    archived = answer.data["archivePath"]
    assert not (store_root / RETRY_PATH).exists() and (store_root / archived).exists()
    stamped = parse_memory((store_root / archived).read_text())
    assert stamped.status == "archived" and stamped.archived_at is not None
    assert git(store_root, "log", "-1", "--format=%s").strip() == f"memhtml(archive): {RETRY_PATH} — no longer relevant"
    twice = run_cli("archive", archived, "--repo", str(store_root), "--reason", "again")
    assert twice.status == 1 and twice.envelope["code"] == "ERR_INVALID_MEMORY"
    assert not (store_root / f"archive/{YEAR}/archive").exists()
    missing = run_cli("archive", "areas/inbox/nope.html", "--repo", str(store_root), "--reason", "x")
    assert missing.status == 1 and missing.envelope["code"] == "ERR_PATH_NOT_FOUND"
    readme = run_cli("archive", "README.html", "--repo", str(store_root), "--reason", "x")
    assert readme.status == 2 and (store_root / "README.html").exists()


def test_rearchiving_a_reused_path_in_the_same_year_takes_a_suffix(store_root: Path) -> None:
    explicit = ["--type", "semantic", "--path", "resources/custom/one.html", "--title", "One"]
    run_cli("write", "--repo", str(store_root), *explicit, "--claim", "First version.")
    first = run_cli("archive", "resources/custom/one.html", "--repo", str(store_root), "--reason", "a").data
    rewrite = run_cli("write", "--repo", str(store_root), *explicit, "--claim", "Second version.")
    # The archived copy reserves the path for old hrefs, so an explicit reuse is a conflict ...
    assert rewrite.status == 1 and rewrite.envelope["code"] == "ERR_WRITE_CONFLICT"
    # ... unless the live file is moved there by hand, as a user reusing the path would.
    (store_root / "resources/custom/one.html").write_text((store_root / first["archivePath"]).read_text())
    git(store_root, "add", "resources/custom/one.html")
    git(store_root, "commit", "-qm", "restore by hand")
    second = run_cli("archive", "resources/custom/one.html", "--repo", str(store_root), "--reason", "b")
    assert second.status == 0, second.stdout
    assert second.data["archivePath"] == f"archive/{YEAR}/resources/custom/one-2.html"


def test_link_is_idempotent_and_typed(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *RETRY)
    run_cli("write", "--repo", str(store_root), "--title", "Cause", "--claim", "A cause.", "--type", "semantic")
    run_cli("task", "add", "--repo", str(store_root), "--title", "Fix it")
    source, dst = "areas/inbox/cause.html", RETRY_PATH
    first = run_cli("link", source, "caused_by", dst, "--repo", str(store_root))
    assert first.status == 0 and first.data["commitSha"] and first.data["stored"] is True
    text = (store_root / source).read_text()
    assert f'<link rel="memhtml-caused-by" href="/{dst}">' in text
    before = commit_count(store_root)
    again = run_cli("link", source, "caused_by", dst, "--repo", str(store_root))
    assert again.status == 0 and again.data["commitSha"] is None and again.data["outcome"] == "unchanged"
    assert commit_count(store_root) == before
    assert run_cli("link", source, "caused_by", source, "--repo", str(store_root)).envelope["code"] == (
        "ERR_INVALID_MEMORY"
    )
    task_as_memory = run_cli("link", source, "relates_to", "areas/inbox/tasks/fix-it.html", "--repo", str(store_root))
    assert task_as_memory.status == 1 and "task" in task_as_memory.envelope["error"]
    blocks_memory = run_cli("link", source, "blocks", dst, "--repo", str(store_root))
    assert blocks_memory.status == 1 and "both endpoints must be tasks" in blocks_memory.envelope["error"]
    unknown_rel = run_cli("link", source, "likes", dst, "--repo", str(store_root))
    assert unknown_rel.status == 2 and unknown_rel.envelope["code"] == "ERR_INVALID_FLAG"
    missing = run_cli("link", source, "caused_by", "areas/inbox/none.html", "--repo", str(store_root))
    assert missing.status == 1 and missing.envelope["code"] == "ERR_PATH_NOT_FOUND"
    assert commit_count(store_root) == before and clean(store_root)


def test_tasks_never_dedupe_done_archives_and_blockers_drop_out(store_root: Path) -> None:
    root = str(store_root)
    one = run_cli("task", "add", "--repo", root, "--title", "Write the runbook").data
    two = run_cli("task", "add", "--repo", root, "--title", "Write the runbook").data
    assert (one["path"], two["path"]) == (
        "areas/inbox/tasks/write-the-runbook.html",
        "areas/inbox/tasks/write-the-runbook-2.html",
    )
    key = run_cli(
        "task", "add", "--repo", root, "--title", "Rotate key", "--due", "2026-10-01", "--workspace", "payments"
    ).data
    assert key["path"] == "projects/payments/tasks/rotate-key.html" and key["dueAt"] == "2026-10-01"
    run_cli("link", one["path"], "blocks", key["path"], "--repo", root)
    listed = {task["path"]: task for task in run_cli("task", "list", "--repo", root).data["tasks"]}
    assert listed[key["path"]]["blockedBy"] == [one["path"]]
    assert [
        task["path"] for task in run_cli("task", "list", "--repo", root, "--due-before", "2026-12-01").data["tasks"]
    ] == [key["path"]]
    blocked = run_cli("task", "status", key["path"], "blocked", "--repo", root).data
    assert blocked["taskStatus"] == "blocked" and blocked["unchanged"] is False
    same = run_cli("task", "status", key["path"], "blocked", "--repo", root).data
    assert same["unchanged"] is True and same["commitSha"] is None
    done = run_cli("task", "status", one["path"], "done", "--repo", root, "--reason", "written")
    assert done.data["archived"] is True
    assert git(store_root, "log", "-1", "--format=%s").strip() == f"memhtml(archive): {one['path']} — written"
    assert parse_memory((store_root / done.data["archivePath"]).read_text()).task_status == "done"
    listed = {task["path"]: task for task in run_cli("task", "list", "--repo", root).data["tasks"]}
    assert one["path"] not in listed and listed[key["path"]]["blockedBy"] == []
    not_a_task = run_cli("write", "--repo", root, *RETRY).data["path"]
    refused = run_cli("task", "status", not_a_task, "doing", "--repo", root)
    assert refused.status == 1 and "not a task" in refused.envelope["error"]
    assert run_cli("task", "status", key["path"], "nope", "--repo", root).status == 2
    assert clean(store_root)


def test_write_restating_a_fact_with_new_metadata_updates_it(store_root: Path) -> None:
    first = run_cli("write", "--repo", str(store_root), *RETRY)
    before = commit_count(store_root)
    again = run_cli("write", "--repo", str(store_root), *RETRY, "--confidence", "0.5", "--event-at", "2026-01-05")
    assert again.status == 0
    data = again.data
    assert (data["outcome"], data["stored"], data["created"], data["deduped"]) == ("updated", True, False, True)
    assert data["changed"] == ["confidence", "eventAt"] and data["path"] == first.data["path"]
    assert data["commitSha"] == git(store_root, "rev-parse", "HEAD").strip()
    assert commit_count(store_root) == before + 1
    parsed = parse_memory((store_root / RETRY_PATH).read_text())
    assert parsed.meta("memhtml-confidence") == "0.50" and parsed.event_at == "2026-01-05"
    assert parsed.content_hash == first.data["contentHash"]
    hits = run_cli("search", "retry budget", "--repo", str(store_root)).data["hits"]
    assert [hit["path"] for hit in hits] == [RETRY_PATH] and hits[0]["confidence"] == 0.5


def test_why_names_the_writer_the_reason_and_both_ends_of_the_chain(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *RETRY, "--session-id", "S-1", "--prompt-id", "P-1")
    corrected = run_cli(
        "correct", RETRY_PATH, "--repo", str(store_root), "--title", "Retry budget v2",
        "--claim", "The retry budget of the gateway is 4.", "--reason", "lowered",
    ).data  # fmt: skip
    new = run_cli("why", corrected["path"], "--repo", str(store_root)).data
    assert new["writtenBy"]["subject"] == "memhtml(correct): Retry budget v2"
    assert new["writtenBy"]["reason"] == "lowered"
    assert [step["path"] for step in new["predecessors"]] == [corrected["archivedPath"]]
    assert new["successors"] == []
    old = run_cli("why", corrected["archivedPath"], "--repo", str(store_root)).data
    assert old["archived"] is True and old["session"] == "S-1"
    assert old["writtenBy"]["subject"] == "memhtml(write): Retry budget" and old["writtenBy"]["session"] == "S-1"
    assert [touch["change"] for touch in old["history"]] == ["moved", "added"]
    assert [step["path"] for step in old["successors"]] == [corrected["path"]]
    missing = run_cli("why", "areas/inbox/nothing.html", "--repo", str(store_root))
    assert missing.status == 1 and missing.envelope["code"] == "ERR_PATH_NOT_FOUND"


def test_entity_activity_counts_files_per_entity(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *RETRY)
    run_cli(
        "write", "--repo", str(store_root), "--title", "Gateway owner", "--type", "semantic",
        "--claim", "The gateway is owned by the edge team.", "--entity", "service:gateway", "--entity", "team:edge",
    )  # fmt: skip
    data = run_cli("entity", "activity", "--repo", str(store_root)).data
    counts = {entry["entity"]: entry["fileCount"] for entry in data["entities"]}
    assert counts == {"service:gateway": 2, "team:edge": 1} and data["entityCount"] == 2
    scoped = run_cli("entity", "activity", "--repo", str(store_root), "--type", "team").data
    assert [entry["entity"] for entry in scoped["entities"]] == ["team:edge"]
    assert run_cli("entity", "activity", "--repo", str(store_root), "--limit", "501").status == 2


def test_staged_work_on_a_memory_is_never_swept_in_or_overwritten(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *RETRY)
    target = store_root / RETRY_PATH
    committed = target.read_text()
    target.write_text(committed.replace("is 3.", "is 7."))
    git(store_root, "add", RETRY_PATH)
    target.write_text(committed)  # the working tree is back at HEAD; the index still holds the edit
    before = commit_count(store_root)
    updated = run_cli("write", "--repo", str(store_root), *RETRY, "--confidence", "0.2")
    assert updated.status == 1 and updated.envelope["code"] == "ERR_DIRTY_TREE"
    archived = run_cli("archive", RETRY_PATH, "--repo", str(store_root), "--reason", "x")
    assert archived.status == 1 and archived.envelope["code"] == "ERR_DIRTY_TREE"
    assert commit_count(store_root) == before
    assert "is 7." in git(store_root, "diff", "--cached", "--", RETRY_PATH)
