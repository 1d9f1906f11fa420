"""Planning a large batch: files the index already shows stored are rendered and checked but not
projected, tasks always are, and a hint that turns out wrong (the store changed after it was read)
still leaves every written file indexed, read back from its blob after the commit."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from memhtml.index.database import open_database
from memhtml.operations.apply import ApplyOptions, apply
from memhtml.operations.indexing import indexed_active_hashes
from memhtml.operations.planning import PARALLEL_MINIMUM_OPS, plan_all
from memhtml.operations.write import WriteRequest
from tests.conftest import git, index_held_by_another_process, memory_files, run_cli

MOMENT = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


def request(serial: int, memory_type: str = "semantic") -> WriteRequest:
    return WriteRequest(
        title=f"Fact number {serial}",
        memory_type=memory_type,
        claim=f"The planning probe {serial} holds the value {serial * 7}.",
    )


def test_a_stored_hash_is_rendered_but_not_projected_and_a_task_always_is() -> None:
    fact, task = request(1), request(2, "task")
    first = plan_all([fact, task, None], MOMENT)
    assert first[2] is None
    fact_plan, task_plan = first[0], first[1]
    assert fact_plan is not None and task_plan is not None
    assert fact_plan[1] is not None and task_plan[1] is not None  # nothing known: both projected
    fact_hash = fact_plan[0].placed.content_hash if fact_plan[0].placed else ""
    task_hash = task_plan[0].placed.content_hash if task_plan[0].placed else ""
    again = plan_all([fact, task], MOMENT, frozenset({fact_hash, task_hash}))
    assert again[0] is not None and again[0][1] is None
    assert again[0][0].placed is not None and again[0][0].placed.content_hash == fact_hash
    assert again[1] is not None and again[1][1] is not None  # tasks are never deduplicated


def test_the_hint_reaches_pool_workers(tmp_path: Path) -> None:
    requests: list[WriteRequest | None] = [request(serial) for serial in range(PARALLEL_MINIMUM_OPS)]
    planned = plan_all(requests, MOMENT)
    hashes = [plan[0].placed.content_hash for plan in planned if plan is not None and plan[0].placed]
    assert len(set(hashes)) == PARALLEL_MINIMUM_OPS
    stored = frozenset(hashes[::2])
    hinted = plan_all(requests, MOMENT, stored)
    projected = [plan is not None and plan[1] is not None for plan in hinted]
    assert projected == [position % 2 == 1 for position in range(PARALLEL_MINIMUM_OPS)]


def ops_file(tmp_path: Path, serials: range, name: str) -> Path:
    lines = [
        json.dumps({"op": "write", "title": f"Fact number {serial}", "type": "semantic", "body": f"Probe {serial} ok."})
        for serial in serials
    ]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def indexed_paths(root: Path) -> set[str]:
    with open_database(root, read_only=True) as database:
        return {row[0] for row in database.rows("SELECT path FROM files")}


def test_a_wrong_hint_still_indexes_every_written_file(store_root: Path, tmp_path: Path) -> None:
    batch = ops_file(tmp_path, range(PARALLEL_MINIMUM_OPS), "batch.jsonl")
    landed = run_cli("apply", "--repo", str(store_root), "--file", str(batch))
    assert landed.status == 0, landed.stdout + landed.stderr
    hashes = indexed_active_hashes(store_root)
    assert len(hashes) == PARALLEL_MINIMUM_OPS
    # Every memory of the batch is removed with plain git behind the index's back: the stale index
    # still says each is stored, the store holds none, so the batch writes every file unprojected.
    git(store_root, "rm", "-q", *[result["path"] for result in landed.data["results"]])
    git(store_root, "commit", "-qm", "remove the batch with plain git")
    assert indexed_active_hashes(store_root) == hashes
    before = set(memory_files(store_root))
    answer = apply(store_root, batch.read_text(encoding="utf-8"), ApplyOptions())
    assert answer.data["summary"]["written"] == PARALLEL_MINIMUM_OPS
    written = {result["path"] for result in answer.data["results"]}
    assert len(written) == PARALLEL_MINIMUM_OPS
    assert written <= set(memory_files(store_root)) - before
    assert written <= indexed_paths(store_root)


def test_the_hint_does_not_wait_for_an_index_another_process_holds(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memhtml.index.database as database_module

    assert (
        run_cli("write", "--repo", str(store_root), "--title", "Held", "--type", "semantic", "--claim", "Held.").status
        == 0
    )
    with index_held_by_another_process(store_root):

        def no_waiting(seconds: float) -> None:
            raise AssertionError(f"the hint waited {seconds:.3f} s for the index")

        monkeypatch.setattr(database_module.time, "sleep", no_waiting)
        assert indexed_active_hashes(store_root) == frozenset()
