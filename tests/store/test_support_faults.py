"""Stores in odd places and support files damaged: each answer is the documented code with a remedy
that works when followed, and git keeps every memory (counted from git, not from the answers)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memhtml.operations.statefile import SIDECAR_PATH, import_state
from memhtml.store.gitcmd import rev_parse
from tests.conftest import git, run_cli


def _write(root: Path, title: str, claim: str) -> dict[str, object]:
    answer = run_cli("write", "--repo", str(root), "--title", title, "--type", "semantic", "--claim", claim)
    return answer.envelope


def _claims_in_head(root: Path) -> list[str]:
    paths = git(root, "ls-tree", "-r", "--name-only", "HEAD", "--", "areas").split()
    texts = [git(root, "show", f"HEAD:{path}") for path in paths if path.endswith(".html")]
    return sorted(text.split("<mark>")[1].split("</mark>")[0] for text in texts if "<mark>" in text)


def test_rev_parse_tells_the_answers_apart_when_a_path_holds_a_newline(tmp_path: Path) -> None:
    root = tmp_path / "new\nline"
    root.mkdir()
    git(root, "init", "-q")
    toplevel, git_dir = rev_parse(root, ["--show-toplevel", "--absolute-git-dir"])
    assert (Path(toplevel), Path(git_dir)) == (root.resolve(), root.resolve() / ".git")


def test_a_store_whose_path_holds_a_newline_keeps_git_s_index_in_line(tmp_path: Path) -> None:
    root = tmp_path / "new\nline"
    assert run_cli("init", "--repo", str(root)).status == 0
    assert _write(root, "Odd", "An odd place keeps this fact.")["data"]["stored"] is True  # type: ignore[index]
    # Before, the git directory was read from a line-split answer: no index was ever written, and git
    # showed every file of the store staged for deletion.
    assert git(root, "status", "--porcelain") == ""
    hits = run_cli("search", "--repo", str(root), "odd place").data["hits"]
    assert [hit["path"] for hit in hits] == ["areas/inbox/odd.html"]


@pytest.mark.parametrize("name", ["glob?x", "back\\slash"])
def test_init_refuses_a_path_duckdb_cannot_keep_an_index_under(tmp_path: Path, name: str) -> None:
    root = tmp_path / name
    answer = run_cli("init", "--repo", str(root))
    assert (answer.status, answer.envelope["code"]) == (2, "ERR_INVALID_FLAG")
    assert not root.exists()


def test_a_memhtml_file_in_place_of_the_directory_is_named_and_repaired(store_root: Path) -> None:
    _write(store_root, "Before", "A fact from before the damage holds.")
    support = store_root / ".memhtml"
    shutil.rmtree(support)
    support.write_text("not a directory\n")
    refused = run_cli("search", "--repo", str(store_root), "fact")
    assert (refused.status, refused.envelope["code"]) == (1, "ERR_DAMAGED_FILE")
    remedy = refused.envelope["suggestions"][0]
    assert remedy.startswith("memhtml doctor --fix --repo ")
    fixed = run_cli("doctor", "--fix", "--repo", str(store_root))
    assert fixed.status == 0, fixed.stdout
    aside = fixed.data["repaired"]["setAside"]["supportDirectory"]
    assert (store_root / aside).read_text() == "not a directory\n"  # set aside, never deleted
    assert git(store_root, "status", "--porcelain") == ""
    assert _write(store_root, "After", "A fact written after the repair.")["data"]["stored"] is True  # type: ignore[index]
    assert _claims_in_head(store_root) == ["A fact from before the damage holds.", "A fact written after the repair."]


def test_a_damaged_state_database_is_set_aside_and_its_counters_restored(store_root: Path) -> None:
    _write(store_root, "Counted", "A counted fact holds.")
    assert run_cli("read", "--repo", str(store_root), "areas/inbox/counted.html").status == 0
    assert run_cli("state", "export", "--repo", str(store_root)).status == 0
    exported = (store_root / SIDECAR_PATH).read_text()
    (store_root / ".memhtml" / "state.duckdb").write_bytes(b"\x00garbage" * 8192)
    refused = run_cli("search", "--repo", str(store_root), "counted")
    assert (refused.envelope["code"], refused.envelope["suggestions"]) == ("ERR_DAMAGED_FILE", ["memhtml doctor --fix"])
    fixed = run_cli("doctor", "--fix", "--repo", str(store_root))
    assert fixed.status == 0, fixed.stdout
    set_aside = fixed.data["repaired"]["setAside"]
    assert set_aside["stateRestored"] == exported.count("\n") == 1
    assert (store_root / set_aside["stateDatabase"]).read_bytes().startswith(b"\x00garbage")
    assert run_cli("state", "export", "--repo", str(store_root)).status == 0
    assert (store_root / SIDECAR_PATH).read_text() == exported  # the same counters came back


def test_a_sidecar_row_whose_counters_are_not_numbers_is_skipped(store_root: Path) -> None:
    _write(store_root, "Counted", "A counted fact holds.")
    rows = [
        {"path": "areas/inbox/counted.html", "access_count": "many", "updated_at": "2026-01-01"},
        {"path": "areas/inbox/counted.html", "access_count": 3, "last_accessed_at": 7},
        {"path": "areas/inbox/counted.html", "access_count": 2, "updated_at": "2026-01-02"},
    ]
    (store_root / SIDECAR_PATH).write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert import_state(store_root) | {"path": None} == {
        "path": None,
        "rows": 3,
        "restored": 1,
        "skipped": 2,
        "hasState": True,
    }


def test_an_unreadable_sidecar_is_a_finding_that_doctor_fix_writes_anew(store_root: Path) -> None:
    _write(store_root, "Counted", "A counted fact holds.")
    (store_root / SIDECAR_PATH).write_text("{not json\n")
    examined = run_cli("doctor", "--repo", str(store_root))
    assert examined.status == 1
    assert "not JSON" in examined.data["stateSidecarProblem"]
    assert "memhtml state export" in examined.data["remedies"]
    fixed = run_cli("doctor", "--fix", "--repo", str(store_root))
    assert fixed.status == 0, fixed.stdout
    sha = fixed.data["repaired"]["stateSidecarCommitSha"]
    assert git(store_root, "rev-parse", "HEAD").strip() == sha
    assert git(store_root, "show", f"HEAD:{SIDECAR_PATH}") != "{not json\n"
