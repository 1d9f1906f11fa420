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


def test_on_a_terminal_a_long_finding_shows_its_first_entries_and_how_many_more(store_root: Path) -> None:
    from memhtml.cli.render import RENDERED_FINDINGS
    from tests.cli.test_envelope_and_failures import run_on_terminal

    edited = [write(store_root, f"Probe {number}", f"Probe {number} holds {number}.") for number in range(25)]
    for path in edited:  # a hand edit of the article leaves its stated content hash stale
        target = store_root / path
        target.write_text(target.read_text(encoding="utf-8").replace("</mark>", " (edited)</mark>"), encoding="utf-8")
    piped = run_cli("doctor", "--repo", str(store_root))
    assert sorted(item["path"] for item in piped.data["staleContentHashes"]) == sorted(edited)
    _, screen = run_on_terminal("doctor", "--repo", str(store_root))
    shown = [path for path in edited if f'"{path}"' in screen]
    assert len(shown) == RENDERED_FINDINGS
    assert f"… {25 - RENDERED_FINDINGS:,} more; --json lists every one" in screen


def test_the_index_drifts_path_lists_are_cut_one_level_down() -> None:
    from memhtml.cli.render import RENDERED_FINDINGS, _doctor_findings

    missing = [f"areas/inbox/missing-{number}.html" for number in range(RENDERED_FINDINGS + 7)]
    shown = _doctor_findings({"healthy": False, "indexDrift": {"missing": missing, "extra": [], "stale": ["a.html"]}})
    assert shown["indexDrift"] == {
        "missing": [*missing[:RENDERED_FINDINGS], "… 7 more; --json lists every one"],
        "extra": [],
        "stale": ["a.html"],
    }
