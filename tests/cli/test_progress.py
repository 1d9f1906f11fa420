"""Long work shows its progress on stderr to a person at a terminal, and to nobody else: a JSON answer
or a stderr that is not a terminal gets no progress at all."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from memhtml.cli.progress import TerminalProgress, terminal_progress
from memhtml.cli.responder import Responder
from memhtml.index import indexer
from memhtml.index.database import database_paths
from memhtml.operations.indexing import rebuild_index
from tests.conftest import memory_files, run_cli
from tests.index.test_indexer import write


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_line_is_redrawn_in_place_at_most_every_interval_and_always_when_done() -> None:
    stream, clock = io.StringIO(), FakeClock()
    progress = TerminalProgress("index rebuild", stream, clock=clock, interval=0.1)
    progress("indexing", 2000, 100000)
    clock.now = 0.05
    progress("indexing", 4000, 100000)  # too soon: not drawn
    clock.now = 0.2
    progress("indexing", 6000, 100000)
    progress("indexing", 100000, 100000)  # the last count is always drawn
    progress("embedding", 7, 7)
    progress.finish()
    longest, shorter = "index rebuild: indexing 100,000 of 100,000", "index rebuild: embedding 7 of 7"
    assert stream.getvalue().split("\r")[1:] == [
        "index rebuild: indexing 2,000 of 100,000",
        "index rebuild: indexing 6,000 of 100,000",
        longest,
        # A shorter line blanks what the longer one left behind, and the end clears the line.
        shorter + " " * (len(longest) - len(shorter)),
        " " * len(shorter),
        "",
    ]


def test_a_broken_stderr_never_fails_the_command() -> None:
    stream = io.StringIO()
    stream.close()
    progress = TerminalProgress("index embed", stream)
    progress("embedding", 1, 2)
    progress.finish()


def test_only_a_terminal_stderr_of_a_rendered_answer_gets_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with terminal_progress(Responder("index rebuild", json_mode=True, dense=False), "index rebuild") as progress:
        assert progress is None  # a JSON answer: a program reads these streams
    with terminal_progress(Responder("index rebuild", json_mode=False, dense=False), "index rebuild") as progress:
        assert progress is not None
        progress("indexing", 1, 1)
    assert terminal.getvalue().startswith("\rindex rebuild: indexing 1 of 1")
    assert terminal.getvalue().endswith("\r")
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with terminal_progress(Responder("index rebuild", json_mode=False, dense=False), "index rebuild") as progress:
        assert progress is None  # not a terminal


def test_a_rebuild_reports_each_slice_and_then_the_embedding(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(store_root, "Pool ceiling", "The connection pool ceiling is 64.")
    write(store_root, "Retry budget", "The retry budget of the gateway is 3.")
    write(store_root, "Deploy key", "Rotate the deploy key every 90 days.")
    database_paths(store_root)[0].unlink()  # every vector is embedded again
    monkeypatch.setattr(indexer, "REBUILD_SLICE", 2)
    heard: list[tuple[str, int, int]] = []
    report = rebuild_index(store_root, progress=lambda phase, done, of: heard.append((phase, done, of)))
    assert report["filesIndexed"] == 3
    indexing = [entry for entry in heard if entry[0] == "indexing"]
    embedding = [entry for entry in heard if entry[0] == "embedding"]
    assert indexing == [("indexing", 2, 3), ("indexing", 3, 3)]
    assert embedding and embedding[-1] == ("embedding", 3, 3)
    assert heard == indexing + embedding  # in order: the files first, then their vectors


def on_a_terminal(*arguments: str) -> bytes:
    """Everything the real command writes to its stdout and stderr, both a pseudo-terminal."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "memhtml", *arguments],
            stdin=subprocess.DEVNULL,
            stdout=terminal,
            stderr=terminal,
            env={**os.environ, "TERM": "dumb", "COLUMNS": "200"},
        )
        os.close(terminal)
        seen = b""
        while True:
            ready, _, _ = select.select([controller], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: the command ended
                break
            if not chunk:
                break
            seen += chunk
        assert process.wait(timeout=60) == 0, seen.decode(errors="replace")
    finally:
        os.close(controller)
    return seen


def test_the_command_on_a_terminal_shows_progress_and_piped_shows_none(store_root: Path) -> None:
    write(store_root, "Pool ceiling", "The connection pool ceiling is 64.")
    piped = run_cli("index", "rebuild", "--repo", str(store_root))
    assert piped.status == 0 and piped.stderr == ""
    assert b"index rebuild: indexing 1 of 1" in on_a_terminal("index", "rebuild", "--repo", str(store_root))


def batch_of(tmp_path: Path, count: int) -> Path:
    lines = [
        json.dumps(
            {"op": "write", "title": f"Probe {serial}", "type": "semantic", "body": f"Probe {serial} is {serial}."}
        )
        for serial in range(count)
    ]
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_apply_reports_planning_checking_writing_indexing_and_embedding_in_order(
    store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memhtml.operations import planning
    from memhtml.operations.apply import ApplyOptions, apply
    from memhtml.store import transaction

    # Small slices, so a batch of 150 has several of each; 100 ops or more are planned by workers.
    monkeypatch.setattr(planning, "PARALLEL_MINIMUM_OPS", 100)
    monkeypatch.setattr(planning, "CHUNK_OPS", 40)
    monkeypatch.setattr(transaction, "PROGRESS_FILES", 50)
    monkeypatch.setattr(indexer, "REBUILD_SLICE", 64)
    files_before = len(memory_files(store_root))
    heard: list[tuple[str, int, int]] = []
    answer = apply(
        store_root,
        batch_of(tmp_path, 150).read_text(encoding="utf-8"),
        ApplyOptions(),
        progress=lambda phase, done, of: heard.append((phase, done, of)),
    )
    assert answer.data["summary"]["written"] == 150
    assert len(memory_files(store_root)) == files_before + 150
    phases = [phase for phase, _, _ in heard]
    assert phases == sorted(phases, key=["planning", "checking", "writing", "indexing", "embedding"].index)
    by_phase = {phase: [(done, of) for name, done, of in heard if name == phase] for phase in phases}
    assert by_phase["planning"] == [(40, 150), (80, 150), (120, 150), (150, 150)]
    assert by_phase["checking"] == [(0, 150), (100, 150), (150, 150)]  # before the write lock, then as checked
    assert by_phase["writing"] == [(50, 150), (100, 150), (150, 150)]
    assert by_phase["indexing"] == [(64, 150), (128, 150), (150, 150)]
    assert by_phase["embedding"][-1] == (150, 150)


def test_apply_on_a_terminal_shows_its_progress_and_piped_shows_none(store_root: Path, tmp_path: Path) -> None:
    batch = batch_of(tmp_path, 3)
    piped = run_cli("apply", "--repo", str(store_root), "--file", str(batch))
    assert piped.status == 0 and piped.stderr == ""
    again = tmp_path / "again.jsonl"
    again.write_text(batch.read_text(encoding="utf-8").replace("Probe", "Second probe"), encoding="utf-8")
    seen = on_a_terminal("apply", "--repo", str(store_root), "--file", str(again))
    assert b"apply: planning 3 of 3" in seen
    assert b"apply: embedding 3 of 3" in seen


def test_index_embed_reports_the_texts_it_embeds(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memhtml.operations.embedding import embed_index

    write(store_root, "Pool ceiling", "The connection pool ceiling is 64.")
    monkeypatch.setenv("MEMHTML_EMBED", "off")
    write(store_root, "Retry budget", "The retry budget of the gateway is 3.")  # stored without a vector
    monkeypatch.setenv("MEMHTML_EMBED", "hash")
    heard: list[tuple[str, int, int]] = []
    report = embed_index(store_root, progress=lambda phase, done, of: heard.append((phase, done, of)))
    assert report["embeddingsWritten"] == 1
    assert heard == [("embedding", 1, 1)]


def test_doctor_reports_the_files_it_has_checked_and_checks_again_after_a_repair(store_root: Path) -> None:
    from memhtml.operations.doctor import doctor

    write(store_root, "Pool ceiling", "The connection pool ceiling is 64.")
    write(store_root, "Retry budget", "The retry budget of the gateway is 3.")
    heard: list[tuple[str, int, int]] = []
    doctor(store_root, progress=lambda phase, done, of: heard.append((phase, done, of)))
    assert heard and {phase for phase, _, _ in heard} == {"checking"}
    assert [done for _, done, _ in heard] == sorted(done for _, done, _ in heard)
    assert heard[-1][1] == heard[-1][2] >= 2  # every file, the two memories among them
    heard.clear()
    doctor(store_root, fix=True, progress=lambda phase, done, of: heard.append((phase, done, of)))
    phases = [phase for phase, _, _ in heard]
    assert phases == sorted(phases, key=["checking", "checking again"].index) and "checking again" in phases
