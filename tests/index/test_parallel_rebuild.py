"""A rebuild projected in worker processes stores exactly the rows a serial one does."""

from __future__ import annotations

from pathlib import Path

import pytest

from memhtml.index import indexer, parallel
from memhtml.index.database import database_paths, open_database
from memhtml.index.indexer import rebuild
from memhtml.store.gitread import GitCorpusReader
from tests.conftest import git
from tests.index.test_indexer import snapshot
from tests.index.test_search import memory_file


def commit_memories(root: Path, count: int, bird: str) -> None:
    """`count` memories naming `bird` and one broken file (every rebuild skips it the same way), in one
    commit."""
    for number in range(count):
        target = root / "areas" / "inbox" / f"m{number:05d}.html"
        target.write_text(memory_file(f"M{number}", f"Memory number {number} mentions {bird}{number % 7}."))
    (root / "areas/inbox/broken.html").write_text("<p>no article</p>")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bulk")


def test_parallel_and_serial_rebuilds_agree(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    count = parallel.PARALLEL_MINIMUM_FILES + 10
    commit_memories(store_root, count, "heron")
    reader = GitCorpusReader(store_root)
    monkeypatch.setattr(indexer, "REBUILD_SLICE", 150)  # seven slices through the pipeline
    heard: list[tuple[int, int]] = []
    with open_database(store_root) as database:
        in_workers = rebuild(database, reader, "2026-11-30T00:00:00Z", progress=lambda *seen: heard.append(seen))
    parallel_rows = snapshot(store_root)
    for database_file in database_paths(store_root):
        database_file.unlink()
    monkeypatch.setattr(parallel, "PARALLEL_MINIMUM_FILES", 10**9)
    with open_database(store_root) as database:
        serial = rebuild(database, reader, "2026-11-30T00:00:00Z")
    assert in_workers.files_indexed == serial.files_indexed == count
    assert heard == [(min(done, count + 1), count + 1) for done in range(150, count + 150, 150)]
    assert (
        [item.path for item in in_workers.skipped]
        == [item.path for item in serial.skipped]
        == ["areas/inbox/broken.html"]
    )
    assert snapshot(store_root) == parallel_rows


def test_a_rebuild_whose_workers_cannot_start_falls_back_to_one_process(tmp_path: Path) -> None:
    """An embedding program whose main module workers cannot import must still get a full rebuild."""
    import subprocess
    import sys

    from tests.conftest import run_cli

    root = tmp_path / "store"
    assert run_cli("init", "--repo", str(root)).status == 0
    for number in range(parallel.PARALLEL_MINIMUM_FILES + 5):
        target = root / "areas" / "inbox" / f"m{number:05d}.html"
        target.write_text(memory_file(f"M{number}", f"Memory number {number} mentions egret."))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bulk")
    program = (
        "from pathlib import Path\n"
        "from memhtml.index.database import open_database\n"
        "from memhtml.index.indexer import rebuild\n"
        "from memhtml.store.gitread import GitCorpusReader\n"
        f"root = Path({str(root)!r})\n"
        "with open_database(root) as database:\n"
        "    print(rebuild(database, GitCorpusReader(root), 'now').files_indexed)\n"
    )
    # The program comes on stdin: a worker cannot re-import a `<stdin>` main module.
    done = subprocess.run([sys.executable, "-"], input=program, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(parallel.PARALLEL_MINIMUM_FILES + 5)


POOL_HOLDER = """
import os, time
from memhtml.index.parallel import projection_pool

if __name__ == "__main__":
    with projection_pool(100_000) as pool:
        pids = sorted({future.result() for future in [pool.submit(os.getpid) for _ in range(16)]})
        print(" ".join(map(str, pids)), flush=True)
        time.sleep(120)
"""


def test_pool_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    """A worker inherits the parent's open files (the write lock among them): it must not outlive it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    if (os.cpu_count() or 1) < 2:
        pytest.skip("no pool on one core")
    script = tmp_path / "holder.py"
    script.write_text(POOL_HOLDER)
    holder = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    worker_pids = [int(pid) for pid in holder.stdout.readline().split()]
    assert worker_pids, "the pool started no worker"
    assert all(_alive(pid) for pid in worker_pids)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in worker_pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in worker_pids if _alive(pid)]


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_a_big_commit_through_the_pipeline_reuses_known_projections_and_equals_a_rebuild(
    store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index pass of a batch's commit: slices through the workers, with the projections the batch
    already made for half of the blobs (made at another path, as a batch does before placing a file)."""
    import subprocess

    from memhtml.index.indexer import update
    from memhtml.index.projection import FileProjection, project_file
    from tests.index.test_indexer import rebuilt_snapshot

    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 2)  # a pool even on a one-core machine
    monkeypatch.setattr(parallel, "PARALLEL_MINIMUM_FILES", 10)
    monkeypatch.setattr(indexer, "REBUILD_SLICE", 16)  # four slices of the 60 files
    reader = GitCorpusReader(store_root)
    with open_database(store_root) as database:
        rebuild(database, reader, "2026-11-30T00:00:00Z")
    for number in range(60):
        target = store_root / "areas" / "inbox" / f"b{number:03d}.html"
        target.write_text(memory_file(f"B{number}", f"Batch memory {number} mentions plover{number % 5}."))
    git(store_root, "add", "-A")
    git(store_root, "commit", "-q", "-m", "batch")
    listing = subprocess.run(
        ["git", "-C", str(store_root), "ls-tree", "-r", "HEAD", "--", "areas/inbox"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    blobs = {line.split("\t")[1]: line.split()[2] for line in listing.splitlines() if "/b" in line}
    known: dict[str, FileProjection] = {}
    for path, sha in sorted(blobs.items())[::2]:
        projected = project_file("areas/inbox/not-yet-placed.html", sha, (store_root / path).read_bytes(), "now")
        assert isinstance(projected, FileProjection)
        known[sha] = projected
    heard: list[tuple[int, int]] = []
    with open_database(store_root) as database:
        report = update(database, reader, "now", worktree=False, known=known, progress=lambda *seen: heard.append(seen))
    assert report.added == 60 and not report.skipped
    assert heard == [(16, 60), (32, 60), (48, 60), (60, 60)]
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


@pytest.mark.parametrize(
    ("minimum", "cores", "early"),
    [(5, 2, True), (64, 2, False), (5, 1, False)],
    ids=["enough-files", "too-few-files", "one-core"],
)
def test_a_rebuild_boots_the_fork_server_before_git_lists_the_tree_only_when_it_will_want_a_pool(
    store_root: Path, monkeypatch: pytest.MonkeyPatch, minimum: int, cores: int, early: bool
) -> None:
    """git's index tracks six memories and the store's own files: a pool minimum of 5 is reached, one of
    64 is not, and one core never takes a pool."""
    for number in range(6):
        target = store_root / "areas" / "inbox" / f"m{number}.html"
        target.write_text(memory_file(f"M{number}", f"Memory number {number} mentions a kestrel."))
    git(store_root, "add", "-A")
    git(store_root, "commit", "-q", "-m", "six")
    assert 6 <= len(git(store_root, "ls-files").split()) < 64
    monkeypatch.setattr(parallel, "PARALLEL_MINIMUM_FILES", minimum)
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: cores)
    events: list[str] = []
    start = parallel.start_projection_server
    listed = GitCorpusReader.tree

    def start_server() -> object:
        events.append("server")
        return start()

    def tree(self: GitCorpusReader, *args: object, **kwargs: object) -> dict[str, str]:
        events.append("tree")
        return listed(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parallel, "start_projection_server", start_server)
    monkeypatch.setattr(GitCorpusReader, "tree", tree)
    with open_database(store_root) as database:
        report = rebuild(database, GitCorpusReader(store_root), "2026-11-30T00:00:00Z")
    assert report.files_indexed == 6
    if early:
        assert events[:2] == ["server", "tree"]
    else:
        assert events[0] == "tree"
        assert "server" not in events
