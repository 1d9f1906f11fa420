"""A rebuild projected in worker processes stores exactly the rows a serial one does."""

from __future__ import annotations

from pathlib import Path

import pytest

from memhtml.index import parallel
from memhtml.index.database import database_paths, open_database
from memhtml.index.indexer import rebuild
from memhtml.store.gitread import GitCorpusReader
from tests.conftest import git
from tests.index.test_indexer import snapshot
from tests.index.test_search import memory_file


def test_parallel_and_serial_rebuilds_agree(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    count = parallel.PARALLEL_MINIMUM_FILES + 10
    for number in range(count):
        target = store_root / "areas" / "inbox" / f"m{number:05d}.html"
        target.write_text(memory_file(f"M{number}", f"Memory number {number} mentions heron{number % 7}."))
    # A broken file is skipped the same way in both modes.
    (store_root / "areas/inbox/broken.html").write_text("<p>no article</p>")
    git(store_root, "add", "-A")
    git(store_root, "commit", "-q", "-m", "bulk")
    reader = GitCorpusReader(store_root)
    with open_database(store_root) as database:
        in_workers = rebuild(database, reader, "2026-11-30T00:00:00Z")
    parallel_rows = snapshot(store_root)
    for database_file in database_paths(store_root):
        database_file.unlink()
    monkeypatch.setattr(parallel, "PARALLEL_MINIMUM_FILES", 10**9)
    with open_database(store_root) as database:
        serial = rebuild(database, reader, "2026-11-30T00:00:00Z")
    assert in_workers.files_indexed == serial.files_indexed == count
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
