"""Small inserts bind no list (`database.SCALAR_INSERT_VALUES`): they store exactly what the list and
NumPy paths store, and an `index update` after one commit never makes DuckDB's binding import `decimal`,
`uuid` and `platform` (real DuckDB with the shipped migrations, a real CLI process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from memhtml.index import database as database_module
from memhtml.index.database import Database, open_database
from tests.conftest import git, run_cli

ROWS: dict[str, list[Any]] = {
    "label": ["plain", 'it\'s "quoted"', "", None, "déjà vu — 部署失败 🙂", "line\nbreak\ttab"],
    "amount": [1, -7, 0, None, 2**40, 3],
    "share": [0.5, None, -0.0, 1e-9, 0.1 + 0.2, 3.0],
    "flag": [True, False, None, True, False, True],
}


def _probe_table(database: Database, name: str) -> None:
    database.run(f"CREATE TEMP TABLE {name} (label VARCHAR, amount BIGINT, share DOUBLE, flag BOOLEAN)")


def _stored(database: Database, name: str) -> list[tuple[Any, ...]]:
    return database.rows(f"SELECT label, amount, share, flag FROM {name} ORDER BY rowid")


def test_a_small_insert_stores_what_the_list_path_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_database(tmp_path) as database:
        _probe_table(database, "scalars")
        _probe_table(database, "lists")
        database.insert_columns("scalars", ROWS)
        monkeypatch.setattr(database_module, "SCALAR_INSERT_VALUES", 0)
        database.insert_columns("lists", ROWS)
        stored = _stored(database, "scalars")
        assert stored == _stored(database, "lists")
        assert stored == list(zip(*ROWS.values(), strict=True))


def test_small_integer_inserts_are_written_into_the_statement_as_the_list_path_binds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    columns = {"term_id": [3, 1, 2**31 - 1], "doc_id": [9, 0, -5], "tf": [1, 2, 3], "dl": [40, 41, 42]}
    with open_database(tmp_path) as database:
        for name in ("written", "bound"):
            database.run(f"CREATE TEMP TABLE {name} (term_id INTEGER, doc_id INTEGER, tf INTEGER, dl INTEGER)")
        database.insert_integers("written", columns)
        monkeypatch.setattr(database_module, "SCALAR_INSERT_VALUES", 0)
        database.insert_integers("bound", columns)
        written = database.rows("SELECT * FROM written ORDER BY rowid")
        assert written == database.rows("SELECT * FROM bound ORDER BY rowid")
        assert written == list(zip(*columns.values(), strict=True))


def test_a_few_vectors_bound_as_decimal_strings_store_the_floats_a_bound_list_would(tmp_path: Path) -> None:
    import numpy

    generator = numpy.random.default_rng(7)
    matrix = generator.uniform(-1, 1, size=(5, 256)).tolist()
    matrix[0][:6] = [0.0, -0.0, 0.0005, -0.0015, 1.0, -1.0]  # ties and signed zeros included
    hashes = [f"sha256:{number}" for number in range(5)]
    with open_database(tmp_path) as database:
        database.insert_vectors(hashes, [0] * 5, [10] * 5, matrix)
        stored = database.rows("SELECT vector FROM chunk_vectors ORDER BY content_hash")
        for (vector,), row in zip(stored, matrix, strict=True):
            rounded = [round(value, database_module.VECTOR_DECIMALS) for value in row]
            assert vector == database.value("SELECT $components::FLOAT[]", {"components": rounded})


def test_a_vector_with_a_component_that_is_not_finite_is_refused(tmp_path: Path) -> None:
    with open_database(tmp_path) as database, pytest.raises(ValueError, match="not finite"):
        database.insert_vectors(["sha256:x"], [0], [1], [[0.5, float("nan")]])


UPDATE_PROBE = textwrap.dedent(
    """
    import os, sys
    from memhtml.cli import entry

    end = os._exit

    def report(status):
        print(" ".join(name for name in ("decimal", "uuid", "platform") if name in sys.modules))
        sys.stdout.flush()
        end(status)

    os._exit = report
    entry.main(["index", "update", "--repo", sys.argv[1]])
    """
)


def test_an_update_after_one_commit_binds_no_list(store_root: Path) -> None:
    written = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "Pool ceiling",
        "--type",
        "semantic",
        "--claim",
        "The connection pool ceiling is 64.",
        "--tag",
        "db",
        "--entity",
        "service:db",
    )
    assert written.status == 0, written.stdout + written.stderr
    path = Path(written.data["path"])
    text = (store_root / path).read_text(encoding="utf-8")
    copy = path.with_name("pool-ceiling-copy.html")
    (store_root / copy).write_text(text.replace("64", "96"), encoding="utf-8")
    git(store_root, "add", "--", str(copy))
    git(store_root, "commit", "-qm", "a second memory")
    done = subprocess.run(
        [sys.executable, "-c", UPDATE_PROBE, str(store_root)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    envelope, imported = done.stdout.removesuffix("\n").rsplit("\n", 1)  # the answer, then the probe's line
    report = json.loads(envelope)["data"]
    assert (report["added"], report["embeddingsWritten"]) == (1, 1), report
    assert imported == "", f"an update imported {imported}"
