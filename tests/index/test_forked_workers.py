"""Workers forked ahead: `index rebuild` forks its pool from the executable itself while that has one
thread, and stores exactly what a rebuild through the fork server does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memhtml.index import parallel
from tests.index.test_indexer import rebuilt_snapshot, snapshot
from tests.index.test_parallel_rebuild import commit_memories

pytestmark = pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="no pool on one core")

# Asks for workers ahead (as the entry point does), then has the next pool's workers say who forked them.
PROBE = """
import os, sys, threading
from memhtml.index import parallel

if __name__ == "__main__":  # a fork server's worker imports this module again
    if sys.argv[1] == "with-a-thread":
        release = threading.Event()
        threading.Thread(target=release.wait, daemon=True).start()
    parallel.fork_workers_ahead(lambda count: sys.argv[2] == "big")
    forked = os.getpid() in parallel._forked_ahead
    with parallel.projection_pool(100_000) as pool:
        assert pool is not None
        parents = {future.result() for future in [pool.submit(os.getppid) for _ in range(8)]}
    print(forked, parents == {os.getpid()})
"""


@pytest.mark.parametrize(
    ("threads", "size", "expected"),
    [
        ("alone", "big", "True True"),
        ("with-a-thread", "big", "False False"),
        ("alone", "small", "False False"),
    ],
    ids=["one-thread", "a-second-thread", "too-few-files"],
)
def test_workers_are_forked_from_the_process_itself_only_while_it_has_one_thread(
    tmp_path: Path, threads: str, size: str, expected: str
) -> None:
    """A process with a second thread (or a pass too small to want a pool) keeps the fork server, whose
    workers are the server's children, not this process's."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    done = subprocess.run(
        [sys.executable, str(script), threads, size], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == expected


# The executable's own entry point, recording in a file when the fork server starts, when workers are
# forked ahead, and when a pool is shut down, before each goes on.
ENTRY = """
import os, sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import forkserver
from memhtml.index import parallel

def record(event):
    with open(sys.argv[1], "a", encoding="utf-8") as events:
        events.write(event + "\\n")

started = forkserver.ensure_running
def ensure_running():
    record("fork server")
    started()
forkserver.ensure_running = ensure_running

forking = parallel.fork_workers_ahead
def fork_workers_ahead(files_above):
    forking(files_above)
    if os.getpid() in parallel._forked_ahead:
        record("forked ahead")
parallel.fork_workers_ahead = fork_workers_ahead

shutting = ProcessPoolExecutor.shutdown
def shutdown(self, *args, **kwargs):
    record("pool shut down")
    shutting(self, *args, **kwargs)
ProcessPoolExecutor.shutdown = shutdown

from memhtml.cli.entry import main
main(sys.argv[2:])
"""


def _rebuild_through_the_entry(root: Path, scratch: Path) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`memhtml index rebuild` run by the entry point, and the events `ENTRY` recorded, in order."""
    script = scratch / "entry.py"
    script.write_text(ENTRY)
    events = scratch / "events"
    done = subprocess.run(
        [sys.executable, str(script), str(events), "index", "rebuild", "--repo", str(root), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    return done, events.read_text(encoding="utf-8").split("\n")[:-1] if events.exists() else []


def test_the_executable_rebuilds_a_big_store_in_workers_it_forked_itself_and_stores_what_the_fork_servers_do(
    store_root: Path, tmp_path: Path
) -> None:
    count = parallel.PARALLEL_MINIMUM_FILES + 5
    commit_memories(store_root, count, "grebe")
    done, events = _rebuild_through_the_entry(store_root, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f'"filesIndexed": {count}' in done.stdout
    assert events == ["forked ahead", "pool shut down"]  # the fork server never started
    # The in-process rebuild of a copy (this test process has threads: its pool comes from the server).
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


def test_workers_forked_for_a_store_that_turns_out_small_are_let_go(store_root: Path, tmp_path: Path) -> None:
    """git's index counts every tracked file: a thousand that are not memories ask for workers the
    rebuild then has no use for; it shuts them down and indexes its few memories."""
    notes = store_root / "resources" / "notes"
    notes.mkdir(parents=True)
    for number in range(parallel.PARALLEL_MINIMUM_FILES):
        (notes / f"n{number:05d}.txt").write_text(f"note {number}\n")
    commit_memories(store_root, 3, "grebe")
    done, events = _rebuild_through_the_entry(store_root, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"filesIndexed": 3' in done.stdout
    assert events == ["forked ahead", "pool shut down"]
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)
