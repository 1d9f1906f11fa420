"""`memhtml doctor` through the real executable: a healthy store exits 0, an unhealthy one exits 1 with
the same `doctor.report` envelope, and `--fix` reports the store as its repair left it."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import commit_count, git, run_cli


def write(root: Path, title: str, claim: str) -> str:
    answer = run_cli("write", "--repo", str(root), "--type", "semantic", "--title", title, "--claim", claim)
    assert answer.status == 0, answer.stdout + answer.stderr
    return str(answer.data["path"])


def test_exit_status_follows_health_and_fix_repairs(store_root: Path) -> None:
    target = write(store_root, "Staging nodes", "The staging cluster runs on three nodes.")
    source = write(store_root, "Backups", "Backups run nightly at 02:00 UTC.")
    healthy = run_cli("doctor", "--repo", str(store_root))
    assert healthy.status == 0, healthy.stdout
    assert healthy.envelope["type"] == "doctor.report" and healthy.data["healthy"] is True

    assert run_cli("link", source, "relates_to", target, "--repo", str(store_root)).status == 0
    assert run_cli("archive", target, "--reason", "moved", "--repo", str(store_root)).status == 0
    commits = commit_count(store_root)

    unhealthy = run_cli("doctor", "--repo", str(store_root))
    assert unhealthy.status == 1
    assert unhealthy.envelope["type"] == "doctor.report" and unhealthy.data["healthy"] is False
    assert [item["srcPath"] for item in unhealthy.data["dangling"]] == [source]
    assert commit_count(store_root) == commits  # looking changes nothing

    fixed = run_cli("doctor", "--fix", "--repo", str(store_root))
    assert fixed.status == 0, fixed.stdout
    assert fixed.data["healthy"] is True and fixed.data["dangling"] == []
    assert fixed.data["repaired"]["rewritten"] == 1
    assert commit_count(store_root) == commits + 1
    assert git(store_root, "status", "--porcelain") == ""


def test_a_doctor_flag_value_is_refused_before_anything_runs(store_root: Path) -> None:
    answer = run_cli("doctor", "--fix=maybe", "--repo", str(store_root))
    assert answer.status == 2
    assert answer.envelope["code"] == "ERR_INVALID_FLAG"
