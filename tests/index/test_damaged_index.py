"""A damaged index file (truncated, overwritten, not DuckDB's) is an error that names the one remedy that
works, and `index rebuild` (and so `doctor --fix`) sets the file aside and rebuilds from git. A damaged
state file, which git cannot rebuild, is set aside only by `doctor --fix`, which restores the counters
`state export` last committed."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memhtml.index.database import database_paths
from memhtml.operations.statefile import SIDECAR_PATH
from tests.conftest import git, run_cli

CLAIMS = (
    "The connection pool ceiling is 64.",
    "The retry budget of the gateway is 3.",
    "Deploys freeze on Fridays after noon.",
)


def _seeded(root: Path) -> list[str]:
    paths = []
    for number, claim in enumerate(CLAIMS):
        answer = run_cli(
            "write", "--repo", str(root), "--title", f"Fact {number}", "--type", "semantic", "--claim", claim
        )
        assert answer.status == 0, answer.stdout + answer.stderr
        paths.append(str(answer.data["path"]))
    return paths


def _emptied(file: Path) -> None:
    file.write_bytes(b"")


def _overwritten(file: Path) -> None:
    file.write_bytes(os.urandom(100_000))


def _cut_short(file: Path) -> None:
    # The header and the first blocks survive: the open succeeds and a later read fails.
    data = file.read_bytes()
    file.write_bytes(data[: min(len(data) // 2, 300_000)])


def _block_garbled(file: Path) -> None:
    # The file keeps its size and header; one block's bytes no longer match their stored checksum.
    data = bytearray(file.read_bytes())
    data[12288 : 12288 + 4096] = os.urandom(4096)
    file.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage", [_emptied, _overwritten, _cut_short, _block_garbled], ids=lambda damage: damage.__name__
)
def test_a_damaged_index_is_refused_plainly_and_index_rebuild_sets_it_aside(
    store_root: Path, damage: Callable[[Path], None]
) -> None:
    paths = _seeded(store_root)
    index_file, _ = database_paths(store_root)
    damage(index_file)
    damaged_bytes = index_file.read_bytes()

    refused = run_cli("search", "--repo", str(store_root), "retry budget")
    assert refused.status == 1, refused.stdout
    assert refused.envelope["code"] == "ERR_DAMAGED_FILE"
    assert refused.envelope["retryable"] is False  # retrying reads the same bytes
    assert refused.envelope["suggestions"] == ["memhtml index rebuild"]

    rebuilt = run_cli("index", "rebuild", "--repo", str(store_root))
    assert rebuilt.status == 0, rebuilt.stdout + rebuilt.stderr
    aside = store_root / rebuilt.data["damagedIndexSetAside"]
    assert aside.parent == index_file.parent and aside.name.startswith("index.duckdb.damaged-")
    assert aside.read_bytes() == damaged_bytes  # set aside, not deleted
    assert [warning["ok"] for warning in rebuilt.data["warnings"]] == [False]
    listed = git(store_root, "ls-files", "--", "areas", "projects", "resources").split("\n")
    memory_files = [line for line in listed if line.endswith(".html")]
    assert rebuilt.data["filesIndexed"] == len(memory_files) == len(paths)

    found = run_cli("search", "--repo", str(store_root), "retry budget")
    assert found.status == 0
    assert [hit["path"] for hit in found.data["hits"]][:1] == [paths[1]]
    assert git(store_root, "status", "--porcelain") == ""  # the set-aside file is ignored like the index


def test_doctor_fix_repairs_a_damaged_index(store_root: Path) -> None:
    _seeded(store_root)
    index_file, _ = database_paths(store_root)
    _overwritten(index_file)
    run_cli("doctor", "--repo", str(store_root), "--fix")
    listed = run_cli("list", "--repo", str(store_root))
    assert listed.status == 0, listed.stdout + listed.stderr
    assert len(listed.data["files"]) == len(CLAIMS)


def test_a_damaged_state_file_is_set_aside_only_by_doctor_fix_which_restores_the_committed_counters(
    store_root: Path,
) -> None:
    paths = _seeded(store_root)
    run_cli("read", "--repo", str(store_root), paths[0])
    exported = run_cli("state", "export", "--repo", str(store_root))
    assert exported.status == 0, exported.stdout + exported.stderr
    _, state_file = database_paths(store_root)
    state_file.write_bytes(os.urandom(50_000))
    garbage = state_file.read_bytes()
    for arguments in (["search", "retry budget"], ["index", "rebuild"]):
        refused = run_cli(*arguments, "--repo", str(store_root))
        assert refused.status == 1, refused.stdout
        assert refused.envelope["code"] == "ERR_DAMAGED_FILE"
        assert refused.envelope["retryable"] is False
        assert refused.envelope["suggestions"] == ["memhtml doctor --fix"]
    assert state_file.read_bytes() == garbage  # what git cannot rebuild is never moved by a plain command
    assert not list(state_file.parent.glob("state.duckdb.damaged*"))

    fixed = run_cli("doctor", "--repo", str(store_root), "--fix")
    assert fixed.status == 0, fixed.stdout + fixed.stderr
    set_aside = fixed.data["repaired"]["setAside"]
    aside = store_root / set_aside["stateDatabase"]
    assert aside.read_bytes() == garbage  # set aside, not deleted
    sidecar_rows = len((store_root / SIDECAR_PATH).read_text().splitlines())
    assert set_aside["stateRestored"] == sidecar_rows > 0
    assert run_cli("search", "--repo", str(store_root), "retry budget").status == 0
    assert git(store_root, "status", "--porcelain") == ""


def test_a_rebuild_sets_aside_only_the_file_it_found_damaged(store_root: Path) -> None:
    from memhtml.index.setaside import index_identity, set_aside_index

    _seeded(store_root)
    index_file, _ = database_paths(store_root)
    found_damaged = index_identity(store_root)
    replacement = index_file.with_name("replacement.duckdb")
    replacement.write_bytes(index_file.read_bytes())
    os.replace(replacement, index_file)  # another process put a fresh file in place meanwhile
    assert set_aside_index(store_root, "2026-12-01T00:00:00Z", found_damaged) is None
    assert index_file.exists()
    aside = set_aside_index(store_root, "2026-12-01T00:00:00Z", index_identity(store_root))
    assert aside is not None and aside.exists() and not index_file.exists()
