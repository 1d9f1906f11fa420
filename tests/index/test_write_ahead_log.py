"""A read-write open leaves a short write-ahead log for the next open to replay and checkpoints one that
grew past `LOG_CHECKPOINT_BYTES`; a log left beside a file that was deleted and created anew (the
documented `rm .memhtml/index.duckdb`) is renamed aside instead of making the new file unopenable."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _duckdb as duckdb
import pytest

from memhtml.index import database as database_module
from memhtml.index.database import database_paths, open_database
from tests.conftest import git, run_cli


def _log(file: Path) -> Path:
    return file.with_name(file.name + ".wal")


def _log_size(file: Path) -> int:
    log = _log(file)
    return log.stat().st_size if log.exists() else 0


def _written(root: Path, number: int) -> str:
    answer = run_cli(
        "write",
        "--repo",
        str(root),
        "--title",
        f"Gateway fact {number}",
        "--type",
        "semantic",
        "--claim",
        f"The gateway retry budget of region {number} is {number + 2} attempts.",
    )
    assert answer.status == 0, answer.stdout + answer.stderr
    assert answer.data["stored"] is True, answer.data
    return str(answer.data["path"])


def _in_another_process(root: Path, statement: str) -> list[Any]:
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from memhtml.index.database import open_database
        with open_database(Path({str(root)!r}), read_only=True, lock_wait=5) as database:
            print(repr(database.rows({statement!r})))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    rows: list[Any] = ast.literal_eval(done.stdout)
    return rows


def test_a_small_write_leaves_its_log_and_every_later_open_reads_it(store_root: Path) -> None:
    index_file, _ = database_paths(store_root)
    _written(store_root, 1)
    _written(store_root, 2)
    # The write's catch-up committed the new memory without checkpointing it into the file.
    assert 0 < _log_size(index_file) <= database_module.LOG_CHECKPOINT_BYTES
    rows = _in_another_process(store_root, "SELECT title FROM files ORDER BY title")
    assert rows == [("Gateway fact 1",), ("Gateway fact 2",)]
    found = run_cli("search", "--repo", str(store_root), "retry budget region")
    assert found.status == 0, found.stdout + found.stderr
    assert sorted(hit["title"] for hit in found.data["hits"]) == ["Gateway fact 1", "Gateway fact 2"]
    assert git(store_root, "status", "--porcelain") == ""


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    limit = 4096
    monkeypatch.setattr(database_module, "LOG_CHECKPOINT_BYTES", limit)
    yield limit


@pytest.fixture(params=["own instance", "shared instance"])
def instance_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each open starting its own DuckDB instance (a CLI command), or attaching to the process's one
    (the MCP server), whose detach must leave and checkpoint logs the same way."""
    if request.param == "own instance":
        yield request.param
        return
    monkeypatch.setattr(database_module, "_shared_instance", [])
    monkeypatch.setattr(database_module, "_shared_in_use", [False])
    database_module.share_one_instance()
    yield request.param
    database_module._shared_instance[0].close()


def test_a_log_past_the_threshold_is_checkpointed_when_the_open_ends(
    tmp_path: Path, small_threshold: int, instance_kind: str
) -> None:
    root = tmp_path / "store"
    index_file, state_file = database_paths(root)
    sizes_at_close = []
    for number in range(12):
        with open_database(root) as database:
            database.run(
                "INSERT INTO state.access (path, access_count, updated_at) VALUES ($path, 1, 'now')",
                {"path": f"areas/inbox/fact-{number}-" + "y" * 600 + ".html"},
            )
            database.run("UPDATE index_state SET updated_at = $at WHERE id = 1", {"at": f"pass {number} " + "x" * 600})
            before = (_log_size(index_file), _log_size(state_file))
        after = (_log_size(index_file), _log_size(state_file))
        sizes_at_close.append(after)
        for grown, left in zip(before, after, strict=True):
            # A log the open passed the threshold with is checkpointed away; a shorter one stays whole.
            assert left == (0 if grown > small_threshold else grown), (number, before, after)
    assert any(index == 0 for index, _ in sizes_at_close[1:]) and any(state == 0 for _, state in sizes_at_close[1:])
    with open_database(root, read_only=True) as database:
        assert database.value("SELECT updated_at FROM index_state").startswith("pass 11 ")
        assert database.value("SELECT count(*) FROM state.access") == 12


def test_a_read_only_open_never_checkpoints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "store"
    index_file, _ = database_paths(root)
    monkeypatch.setattr(database_module, "LOG_CHECKPOINT_BYTES", 1 << 20)
    with open_database(root) as database:
        database.run("UPDATE index_state SET updated_at = $at WHERE id = 1", {"at": "y" * 20_000})
    kept = _log_size(index_file)
    monkeypatch.setattr(database_module, "LOG_CHECKPOINT_BYTES", 1024)
    assert kept > 1024
    with open_database(root, read_only=True) as database:
        assert database.value("SELECT updated_at FROM index_state") == "y" * 20_000
    assert _log_size(index_file) == kept


def _foreign_log_beside(file: Path, scratch: Path) -> bytes:
    """Put beside `file` the log of another database file (what deleting a file and creating it anew
    leaves behind); returns its bytes."""
    other = scratch / "other.duckdb"
    connection = duckdb.connect(str(other))
    connection.execute("PRAGMA disable_checkpoint_on_shutdown")
    connection.execute("CREATE TABLE stray (value INTEGER)")
    connection.execute("INSERT INTO stray VALUES (1), (2)")
    connection.close()
    data = _log(other).read_bytes()
    assert data
    _log(file).write_bytes(data)
    return data


@pytest.mark.parametrize("plane", ["index", "state"])
def test_a_log_of_another_file_is_set_aside_and_the_open_succeeds(tmp_path: Path, plane: str) -> None:
    root = tmp_path / "store"
    with open_database(root) as database:
        database.run("INSERT INTO state.access (path, access_count, updated_at) VALUES ('kept.html', 3, 'now')")
        for catalog in (database.main_catalog, "state"):
            database.run(f'CHECKPOINT "{catalog}"')  # each file whole, with no log of its own
    index_file, state_file = database_paths(root)
    file = index_file if plane == "index" else state_file
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    foreign = _foreign_log_beside(file, scratch)
    with open_database(root, read_only=True) as database:
        assert database.value("SELECT access_count FROM state.access WHERE path = 'kept.html'") == 3
        assert database.value("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'stray'") == 0
    assert not _log(file).exists()
    aside = sorted(file.parent.glob(f"{file.name}.wal.foreign-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == foreign  # renamed, never deleted


def test_deleting_the_index_file_beside_its_log_restores_the_index(store_root: Path) -> None:
    index_file, _ = database_paths(store_root)
    written = [_written(store_root, 0), _written(store_root, 1)]
    while _log_size(index_file) == 0:  # the last write's close checkpointed: one more to leave a log
        written.append(_written(store_root, len(written)))
        assert len(written) <= 8, "no write left its commit in the log"
    index_file.unlink()
    found = run_cli("search", "--repo", str(store_root), "retry budget region")
    assert found.status == 0, found.stdout + found.stderr
    assert sorted(hit["path"] for hit in found.data["hits"]) == sorted(written)
    assert len(list(index_file.parent.glob("index.duckdb.wal.foreign-*"))) == 1
    assert git(store_root, "status", "--porcelain") == ""  # the renamed log is under the ignore patterns
