"""`apply` end to end: the real executable, real git and the real index in temp directories.

Totals are derived from the tree and from git, never only from what the command reports.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memhtml.contracts.errors import LockTimeout
from memhtml.html.document import parse_memory
from tests.conftest import Answer, commit_count, git, memory_files, run_cli


def op(title: str, body: str, **fields: Any) -> dict[str, Any]:
    return {"op": "write", "title": title, "type": fields.pop("type", "semantic"), "body": body, **fields}


def apply_ops(root: Path, ops: list[dict[str, Any]], *flags: str, tmp: Path | None = None) -> Answer:
    source = (tmp or root.parent) / "ops.jsonl"
    source.write_text("".join(json.dumps(item) + "\n" for item in ops), encoding="utf-8")
    return run_cli("apply", "--repo", str(root), "--file", str(source), *flags)


def tree_state(root: Path) -> tuple[str, str, list[str]]:
    return (
        git(root, "rev-parse", "HEAD"),
        git(root, "status", "--porcelain", "--untracked-files=all"),
        memory_files(root),
    )


POOL = op("Pool ceiling", "The connection pool ceiling is 64. Measured under load.", tag="db")
TIMEOUT = op("API timeout", "The API timeout is 30 seconds. Set by the gateway.")
BOGUS = op("Bad type", "This should be refused.", type="bogus")


def test_a_batch_is_one_commit_and_one_index_pass(store_root: Path) -> None:
    before = commit_count(store_root)
    answer = apply_ops(store_root, [POOL, TIMEOUT])
    assert answer.status == 0, answer.stdout + answer.stderr
    assert commit_count(store_root) == before + 1
    assert git(store_root, "log", "-1", "--format=%s").strip() == "memhtml(batch): 2 memories"
    changed = git(store_root, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted(result["path"] for result in answer.data["results"])
    assert answer.data["commit_sha"] == git(store_root, "rev-parse", "HEAD").strip()
    assert [result["outcome"] for result in answer.data["results"]] == ["written", "written"]
    assert answer.data["summary"]["total"] == 2 and answer.data["summary"]["written"] == 2
    # The index followed the commit: both are searchable without an explicit update.
    hits = run_cli("search", "--repo", str(store_root), "pool ceiling timeout").data["hits"]
    assert {hit["path"] for hit in hits} == set(changed)
    assert git(store_root, "status", "--porcelain") == ""


def test_atomic_abort_stores_nothing_and_fails_with_the_ops_code(store_root: Path) -> None:
    apply_ops(store_root, [TIMEOUT])
    before = tree_state(store_root)
    indexed_before = run_cli("index", "status", "--repo", str(store_root)).data["files"]
    answer = apply_ops(store_root, [POOL, BOGUS, op("Third", "A third fact stands here.")])
    assert answer.status == 1
    envelope = answer.envelope
    assert envelope["code"] == "ERR_INVALID_MEMORY" and envelope["stored"] is False
    assert "op 1 (line 2)" in envelope["error"]
    results = envelope["data"]["results"]
    assert [result["outcome"] for result in results] == ["skipped", "refused", "skipped"]
    assert [result["skipped"] for result in results] == [True, False, True]
    assert all(result["path"] is None for result in results)
    assert envelope["data"]["commit_sha"] is None
    assert envelope["data"]["summary"] == {
        "total": 3, "written": 0, "deduped": 0, "failed": 1, "skipped": 2, "consolidated": 0,
        "updated": 0, "unchanged": 0, "refused": 1,
    }  # fmt: skip
    assert tree_state(store_root) == before
    assert run_cli("index", "status", "--repo", str(store_root)).data["files"] == indexed_before


def test_continue_on_error_stores_the_rest_and_answers_partial(store_root: Path) -> None:
    before = commit_count(store_root)
    answer = apply_ops(store_root, [POOL, BOGUS, TIMEOUT], "--continue-on-error")
    assert answer.status == 3
    data = answer.data
    assert data["partial"] is True and data["stored"] is True
    assert [result["outcome"] for result in data["results"]] == ["written", "refused", "written"]
    assert data["results"][1]["code"] == "ERR_INVALID_MEMORY" and data["results"][1]["stored"] is False
    assert commit_count(store_root) == before + 1
    assert len(memory_files(store_root)) == 2


def test_every_op_refused_is_a_failure_even_best_effort(store_root: Path) -> None:
    before = tree_state(store_root)
    answer = apply_ops(store_root, [BOGUS, BOGUS], "--continue-on-error")
    assert answer.status == 1 and answer.envelope["code"] == "ERR_INVALID_MEMORY"
    assert tree_state(store_root) == before


def test_duplicates_inside_a_batch_and_two_ops_with_one_title(store_root: Path) -> None:
    same_title = op("Pool ceiling", "A different fact with the same title.")
    answer = apply_ops(store_root, [POOL, POOL, same_title, POOL])
    results = answer.data["results"]
    assert [result["outcome"] for result in results] == ["written", "unchanged", "written", "unchanged"]
    assert results[1]["existing_path"] == results[0]["path"] == results[3]["path"]
    assert results[2]["path"] == "areas/inbox/pool-ceiling.html"
    assert memory_files(store_root) == sorted(["resources/db/pool-ceiling.html", "areas/inbox/pool-ceiling.html"])
    assert answer.data["summary"]["written"] == 2 and answer.data["summary"]["deduped"] == 2


def test_two_same_title_ops_never_share_a_path(store_root: Path) -> None:
    answer = apply_ops(store_root, [op("Same", "First fact here."), op("Same", "Second fact here.")])
    paths = [result["path"] for result in answer.data["results"]]
    assert paths == ["areas/inbox/same.html", "areas/inbox/same-2.html"]
    assert memory_files(store_root) == sorted(paths)


def test_restating_with_a_new_confidence_updates_the_one_file(store_root: Path) -> None:
    apply_ops(store_root, [POOL])
    before = commit_count(store_root)
    answer = apply_ops(store_root, [{**POOL, "confidence": 0.4, "entity": "service:db"}])
    result = answer.data["results"][0]
    assert result["outcome"] == "updated" and result["stored"] is True
    assert result["changed"] == ["confidence", "entities"]
    assert memory_files(store_root) == ["resources/db/pool-ceiling.html"]
    parsed = parse_memory((store_root / "resources/db/pool-ceiling.html").read_text())
    assert parsed.meta("memhtml-confidence") == "0.40" and parsed.entities == ["service:db"]
    assert commit_count(store_root) == before + 1
    # Restating with less metadata is not a change.
    again = apply_ops(store_root, [POOL])
    assert again.data["results"][0]["outcome"] == "unchanged"
    assert commit_count(store_root) == before + 1


def test_reapplying_a_landed_batch_commits_nothing(store_root: Path) -> None:
    ops = [op(f"Fact {number}", f"Fact number {number} is stored here. Body {number}.") for number in range(1000)]
    first = apply_ops(store_root, ops)
    assert first.status == 0 and first.data["summary"]["written"] == 1000
    assert len(memory_files(store_root)) == 1000
    before = tree_state(store_root)
    second = apply_ops(store_root, ops)
    assert second.status == 0
    assert {result["outcome"] for result in second.data["results"]} == {"unchanged"}
    assert second.data["commit_sha"] is None and second.data["stored"] is False
    assert tree_state(store_root) == before


def test_dry_run_answers_the_plan_and_touches_nothing(store_root: Path) -> None:
    apply_ops(store_root, [POOL])
    before = tree_state(store_root)
    answer = apply_ops(store_root, [POOL, TIMEOUT, {**POOL, "importance": 9}], "--dry-run")
    assert answer.status == 0
    data = answer.data
    assert data["preview"] is True and data["commit_sha"] is None and data["stored"] is False
    assert [result["outcome"] for result in data["results"]] == ["unchanged", "written", "updated"]
    assert data["results"][1]["path"] == "areas/inbox/api-timeout.html"
    assert [result["stored"] for result in data["results"]] == [False, False, False]
    assert tree_state(store_root) == before
    real = apply_ops(store_root, [POOL, TIMEOUT, {**POOL, "importance": 9}])
    assert [result["path"] for result in real.data["results"]] == [result["path"] for result in data["results"]]


@pytest.mark.parametrize(
    ("lines", "code", "fragment"),
    [
        (['{"op":"write","title":"a","type":"semantic","body":"x."}', "{not json"], "ERR_INVALID_FLAG", "line 2"),
        (['{"op":"write","title":"a","type":"semantic","body":"x.","colour":"red"}'], "ERR_INVALID_FLAG", "colour"),
        (['{"op":"write","title":"a","body":"x."}'], "ERR_MISSING_ARGUMENT", "`type`"),
        (['{"op":"correct","title":"a","type":"semantic","body":"x."}'], "ERR_INVALID_FLAG", "op"),
        (['{"op":"write","title":"a","type":"semantic","body":"x.","strict_path":"true"}'], "ERR_INVALID_FLAG", "strict_path"),
        (['{"op":"write","title":"a","type":"semantic","body":"x.","importance":"high"}'], "ERR_INVALID_FLAG", "importance"),
        (['{"op":"write","title":"a","type":"semantic","body":"x.","tags":[1]}'], "ERR_INVALID_FLAG", "tags"),
        (['[{"op":"write"}]'], "ERR_INVALID_FLAG", "line 1"),
        (["", "   "], "ERR_MISSING_ARGUMENT", "no ops"),
    ],
)  # fmt: skip
def test_a_malformed_stream_is_a_usage_error_before_anything_opens(
    store_root: Path, lines: list[str], code: str, fragment: str
) -> None:
    before = tree_state(store_root)
    source = store_root.parent / "bad.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    answer = run_cli("apply", "--repo", str(store_root), "--file", str(source))
    assert answer.status == 2
    assert answer.envelope["code"] == code and fragment in answer.envelope["error"]
    assert tree_state(store_root) == before


def test_stdin_and_file_sources(store_root: Path) -> None:
    line = json.dumps(POOL) + "\n"
    completed = subprocess.run(
        [sys.executable, "-m", "memhtml", "batch", "--repo", str(store_root), "-"],
        input=line,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert json.loads(completed.stdout)["data"]["results"][0]["outcome"] == "written"
    missing = run_cli("apply", "--repo", str(store_root), "--file", str(store_root.parent / "nope.jsonl"))
    assert missing.status == 2 and missing.envelope["code"] == "ERR_PATH_NOT_FOUND"


def test_per_op_range_and_vocabulary_problems_name_the_op(store_root: Path) -> None:
    ops = [
        {**POOL, "importance": 11},
        {**TIMEOUT, "confidence": 1.5},
        op("Entity", "An entity without a type.", entity="nocolon"),
        op("Task due", "A semantic op with a due date.", due="2026-12-01"),
        op("Bad event", "A fact with a bad event time.", event_at="2026-13-45"),
    ]
    answer = apply_ops(store_root, ops, "--continue-on-error")
    assert answer.status == 1
    results = answer.envelope["data"]["results"]
    assert [result["outcome"] for result in results] == ["refused"] * 5
    assert "importance" in results[0]["error"] and "confidence" in results[1]["error"]
    assert "nocolon" in results[2]["error"] and "tasks only" in results[3]["error"]
    assert "2026-13-45" in results[4]["error"]
    assert memory_files(store_root) == []


def test_event_time_is_the_first_time_element_and_a_new_one_updates(store_root: Path) -> None:
    first = apply_ops(store_root, [{**TIMEOUT, "event_at": "2025-07-01"}]).data["results"][0]
    text = (store_root / first["path"]).read_text()
    assert '<time datetime="2025-07-01"></time>' in text
    parsed = parse_memory(text)
    assert parsed.event_at == "2025-07-01"
    moved = apply_ops(store_root, [{**TIMEOUT, "event_at": "2025-08-01"}]).data["results"][0]
    assert moved["outcome"] == "updated" and moved["changed"] == ["eventAt"]
    reparsed = parse_memory((store_root / first["path"]).read_text())
    assert reparsed.event_at == "2025-08-01" and reparsed.content_hash == parsed.content_hash


def test_consolidate_last_wins_is_one_commit_and_supersedes_the_stored_slot(store_root: Path) -> None:
    apply_ops(store_root, [op("Pool ceiling", "The connection pool ceiling is 64.", tag="db")])
    before = commit_count(store_root)
    ops = [
        op("Pool ceiling v2", "The connection pool ceiling is 96. Raised for the peak.", tag="db"),
        op("Timeout a", "The api timeout is 30s."),
        op("Timeout b", "The api timeout is 45s."),
    ]
    answer = apply_ops(store_root, ops, "--consolidate", "last-wins")
    assert answer.status == 0, answer.stdout
    results = answer.data["results"]
    assert [result["outcome"] for result in results] == ["written", "consolidated", "written"]
    assert results[1]["consolidated_into"] == 2 and results[1]["path"] is None and results[1]["stored"] is False
    archived = results[0]["superseded_path"]
    assert archived is not None and archived.endswith("resources/db/pool-ceiling.html")
    summary = answer.data["summary"]
    assert summary["consolidated"] == 1 and summary["written"] == 2
    assert summary["total"] == sum(summary[key] for key in ("written", "deduped", "failed", "skipped", "consolidated"))
    assert commit_count(store_root) == before + 1  # the original makes two
    assert memory_files(store_root) == sorted([archived, results[0]["path"], results[2]["path"]])
    winner = parse_memory((store_root / results[0]["path"]).read_text())
    assert ("supersedes", "/" + archived) in winner.links
    loser = parse_memory((store_root / archived).read_text())
    assert loser.superseded_by == "/" + results[0]["path"] and loser.valid_until == winner.valid_from
    resolved = run_cli("resolve", "resources/db/pool-ceiling.html", "--repo", str(store_root)).data
    assert resolved["path"] == results[0]["path"] and resolved["stopReason"] == "live"
    assert git(store_root, "status", "--porcelain") == ""


def test_an_unchanged_restatement_then_a_changed_one_in_the_same_batch(store_root: Path) -> None:
    apply_ops(store_root, [{**POOL, "confidence": 0.9}])
    answer = apply_ops(store_root, [POOL, {**POOL, "confidence": 0.3}, {**POOL, "confidence": 0.3}])
    assert [result["outcome"] for result in answer.data["results"]] == ["unchanged", "updated", "unchanged"]
    parsed = parse_memory((store_root / "resources/db/pool-ceiling.html").read_text())
    assert parsed.meta("memhtml-confidence") == "0.30"
    assert git(store_root, "status", "--porcelain") == ""


def test_reapplying_a_batch_that_restates_within_itself_commits_nothing(store_root: Path) -> None:
    batch = [{**POOL, "importance": 9}, {**POOL, "importance": 5}, TIMEOUT]
    first = apply_ops(store_root, batch)
    assert [result["outcome"] for result in first.data["results"]] == ["written", "updated", "written"]
    before = tree_state(store_root)
    again = apply_ops(store_root, batch)
    assert [result["outcome"] for result in again.data["results"]] == ["unchanged", "unchanged", "unchanged"]
    assert again.data["commit_sha"] is None and again.data["stored"] is False
    assert tree_state(store_root) == before


def test_a_large_batch_lets_readers_in_while_it_writes(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memhtml.operations import apply as apply_module
    from memhtml.store import batch as batch_module
    from memhtml.store.transaction import commit_changes

    ops = [op(f"Reader {number}", f"Reader fact number {number} stands here.") for number in range(250)]
    real_commit = commit_changes
    searched: list[Answer] = []

    def commit_while_someone_searches(*args: Any, **kwargs: Any) -> Any:
        # Another process opens the index while this batch is about to write its files.
        searched.append(run_cli("search", "--repo", str(store_root), "anything"))
        return real_commit(*args, **kwargs)

    monkeypatch.setattr(batch_module, "commit_changes", commit_while_someone_searches)
    stream = "".join(json.dumps(item) + "\n" for item in ops)
    answer = apply_module.apply(store_root, stream, apply_module.ApplyOptions())
    assert answer.data["summary"]["written"] == 250
    assert searched[0].status == 0, searched[0].stdout + searched[0].stderr
    assert len(run_cli("search", "--repo", str(store_root), "reader fact").data["hits"]) == 10


def test_a_write_waits_for_a_git_process_holding_the_git_index(store_root: Path) -> None:
    # A `git commit` of the user's holds `.git/index.lock` for a moment; the batch waits for it rather
    # than landing a commit the user's index does not show (their next `git commit` would delete it).
    apply_ops(store_root, [POOL])
    lock = store_root / ".git/index.lock"
    lock.write_text("")
    releaser = subprocess.Popen([sys.executable, "-c", f"import time, os; time.sleep(1.0); os.unlink({str(lock)!r})"])
    try:
        batch = apply_ops(store_root, [TIMEOUT])
    finally:
        releaser.wait()
    assert batch.status == 0 and batch.data["stored"] is True and "index" not in batch.data
    assert git(store_root, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_git_index_held_too_long_refuses_every_write_door_and_stores_nothing(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memhtml.operations import apply as apply_module
    from memhtml.operations.lifecycle import archive
    from memhtml.store import gitindex

    apply_ops(store_root, [POOL])
    before = git(store_root, "rev-parse", "HEAD")
    monkeypatch.setattr(gitindex, "INDEX_LOCK_WAIT_SECONDS", 0.2)
    (store_root / ".git/index.lock").write_text("")
    stream = json.dumps(TIMEOUT) + "\n"
    with pytest.raises(LockTimeout) as refused:
        apply_module.apply(store_root, stream, apply_module.ApplyOptions())
    assert refused.value.retryable and "doctor --fix" in " ".join(refused.value.suggestions)
    with pytest.raises(LockTimeout):
        archive(store_root, "resources/db/pool-ceiling.html", "no longer true")
    assert git(store_root, "rev-parse", "HEAD") == before
    assert git(store_root, "status", "--porcelain", "--untracked-files=all") == ""


def test_last_wins_ops_share_the_fate_of_the_op_that_keeps_their_slot(store_root: Path) -> None:
    apply_ops(store_root, [op("Occupier", "Something else entirely.", path="areas/inbox/taken.html")])
    ops = [
        op("Timeout a", "The api timeout is 30s."),
        op("Timeout b", "The api timeout is 45s.", path="areas/inbox/taken.html"),  # occupied: refused
        op("Unrelated", "An unrelated fact stands alone."),
    ]
    answer = apply_ops(store_root, ops, "--consolidate", "last-wins", "--continue-on-error")
    assert answer.status == 3
    results = answer.data["results"]
    assert [result["outcome"] for result in results] == ["refused", "refused", "written"]
    assert results[0]["code"] == results[1]["code"] == "ERR_WRITE_CONFLICT"
    assert results[0]["ok"] is False and "op 1" in results[0]["error"]
    atomic = apply_ops(store_root, ops, "--consolidate", "last-wins")
    assert atomic.status == 1
    assert [result["outcome"] for result in atomic.envelope["data"]["results"]] == ["skipped", "refused", "skipped"]


def test_a_modified_slot_memory_refuses_only_the_op_that_would_move_it(store_root: Path) -> None:
    apply_ops(store_root, [op("Timeout", "The api timeout is 30s.")])
    (store_root / "areas/inbox/timeout.html").write_text("hand edited\n")
    ops = [op("Timeout b", "The api timeout is 45s."), op("Unrelated", "An unrelated fact stands alone.")]
    answer = apply_ops(store_root, ops, "--consolidate", "last-wins", "--continue-on-error")
    assert answer.status == 3
    results = answer.data["results"]
    assert [result["outcome"] for result in results] == ["refused", "written"]
    assert results[0]["code"] == "ERR_DIRTY_TREE"
    assert (store_root / "areas/inbox/timeout.html").read_text() == "hand edited\n"


def test_the_index_pass_after_a_batch_equals_a_rebuild(store_root: Path) -> None:
    """The batch's index pass reuses the rows made while rendering (re-pointed to where each file
    landed); they must be exactly what a rebuild from git makes."""
    from memhtml.index.database import open_database

    ops = [
        op("Project fact", "The project deploys on Fridays. Agreed.", workspace="Payments Team", entity="team:pay"),
        {**op("Incident", "The gateway returned 502 for ten minutes."), "type": "episodic", "tags": ["ops", "gw"]},
        {**POOL, "importance": 4, "confidence": 0.7},
        op("Same title", "First of two with one title."),
        op("Same title", "Second of two with one title."),
        {**TIMEOUT, "event_at": "2025-07-01"},
    ]
    assert apply_ops(store_root, ops).status == 0
    queries = [
        "SELECT path, blob_sha, content_hash, memory_type, title, gist, body_text, token_text, para, workspace,"
        " archived, doc_len, frame_key, active_hash, event_at, confidence, importance FROM files ORDER BY path",
        "SELECT f.path, t.term, p.tf FROM postings p JOIN terms t USING (term_id) JOIN files f USING (doc_id)"
        " ORDER BY 1, 2",
        "SELECT * FROM file_tags ORDER BY ALL",
        "SELECT * FROM file_entities ORDER BY ALL",
    ]

    def snapshot() -> list[list[tuple[object, ...]]]:
        with open_database(store_root, read_only=True) as database:
            return [database.rows(query) for query in queries]

    after_batch = snapshot()
    assert len(after_batch[0]) == len(ops)
    assert run_cli("index", "rebuild", "--repo", str(store_root)).status == 0
    assert snapshot() == after_batch
