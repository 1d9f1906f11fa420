"""The store's own files stay inside the store: `init` never lays a store inside a git directory or a
store's `.memhtml`, the state sidecar is never written through a link, `state import` keeps only rows a
memory can have, and choosing a free path never looks through a symbolic link."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import commit_count, git, run_cli


def listing(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


@pytest.mark.parametrize("inside", [".git", ".git/hooks/new-store", ".memhtml", ".memhtml/nested", ".GIT/x"])
def test_init_refuses_a_root_inside_a_git_directory_or_the_data_directory(store_root: Path, inside: str) -> None:
    (store_root / ".memhtml").mkdir(exist_ok=True)
    before = listing(store_root / ".git"), listing(store_root / ".memhtml")
    answer = run_cli("init", "--repo", str(store_root / inside))
    assert answer.status == 2, answer.stdout + answer.stderr
    assert answer.envelope["code"] == "ERR_INVALID_FLAG"
    assert (listing(store_root / ".git"), listing(store_root / ".memhtml")) == before


def test_a_dot_memhtml_directory_outside_any_repository_may_hold_stores(tmp_path: Path) -> None:
    answer = run_cli("init", "--repo", str(tmp_path / ".memhtml" / "stores" / "work"))
    assert answer.status == 0, answer.stdout + answer.stderr


def test_init_refuses_a_git_directory_found_through_git_itself(tmp_path: Path) -> None:
    """A bare repository has no `.git` segment in its path; git still knows it is a git directory."""
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    before = listing(bare)
    answer = run_cli("init", "--repo", str(bare / "objects" / "store"))
    assert answer.status == 2 and answer.envelope["code"] == "ERR_INVALID_FLAG"
    assert listing(bare) == before


def test_state_export_never_writes_through_a_linked_state_directory(store_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    state = store_root / ".memhtml" / "state"
    if state.exists():
        shutil.rmtree(state)
    state.parent.mkdir(parents=True, exist_ok=True)
    state.symlink_to(outside, target_is_directory=True)
    commits = commit_count(store_root)
    answer = run_cli("state", "export", "--repo", str(store_root))
    assert answer.status == 1, answer.stdout + answer.stderr
    assert answer.envelope["code"] == "ERR_INVALID_MEMORY"
    assert listing(outside) == []
    assert commit_count(store_root) == commits


def test_state_import_keeps_only_rows_a_memory_can_have(store_root: Path) -> None:
    rows = [
        {"path": "areas/inbox/kept.html", "access_count": 2, "reinforcement_count": 0, "outcome_score": 0,
         "last_accessed_at": None, "last_reinforced_at": None, "updated_at": "2026-01-01T00:00:00Z"},
        {"path": "../../outside/x.html", "access_count": 1, "reinforcement_count": 0, "outcome_score": 0,
         "last_accessed_at": None, "last_reinforced_at": None, "updated_at": "2026-01-01T00:00:00Z"},
        {"path": ".git/config", "access_count": 1, "reinforcement_count": 0, "outcome_score": 0,
         "last_accessed_at": None, "last_reinforced_at": None, "updated_at": "2026-01-01T00:00:00Z"},
    ]  # fmt: skip
    sidecar = store_root / ".memhtml" / "state" / "access.jsonl"
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    sidecar.write_text("".join(json.dumps(row) + "\n" for row in rows))
    answer = run_cli("state", "import", "--repo", str(store_root))
    assert answer.status == 0, answer.stdout + answer.stderr
    assert (answer.data["restored"], answer.data["skipped"]) == (1, 2)


@pytest.mark.parametrize("outside_file_exists", [True, False])
def test_a_path_through_a_linked_directory_is_refused_the_same_whether_or_not_a_file_is_out_there(
    store_root: Path, tmp_path: Path, outside_file_exists: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    if outside_file_exists:
        (outside / "x.html").write_text("outside\n")
    (store_root / "areas" / "linked").symlink_to(outside, target_is_directory=True)
    commits = commit_count(store_root)
    answer = run_cli(
        "write", "--repo", str(store_root), "--type", "semantic", "--title", "X", "--claim", "X holds.",
        "--path", "areas/linked/x.html", "--strict-path",
    )  # fmt: skip
    assert answer.status == 1, answer.stdout
    assert answer.envelope["code"] == "ERR_INVALID_MEMORY"
    assert "areas/linked is a symbolic link" in answer.envelope["error"]
    assert listing(outside) == (["x.html"] if outside_file_exists else [])
    assert commit_count(store_root) == commits
