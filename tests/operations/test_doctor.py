"""`doctor` finds what is wrong in a real store (committed by hand, left by a killed git, drifted in
the index) and `--fix` repairs what has one safe repair, then reports the store as it now is.

Secret-shaped values are assembled from pieces, so this file holds no literal credential.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from memhtml.index.database import open_database
from memhtml.operations.doctor import doctor
from memhtml.operations.init import init
from memhtml.operations.lifecycle import archive, link
from memhtml.operations.write import WriteRequest, write
from memhtml.store.health_listing import STALE_GIT_LOCK_SECONDS

NOW = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
BUCKETS = ("projects", "areas", "resources", "archive")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def remember(root: Path, title: str, claim: str, **fields: Any) -> str:
    report = write(root, WriteRequest(title=title, memory_type="semantic", claim=claim, **fields), NOW)
    return report.path


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def state(root: Path) -> tuple[str, str]:
    return git(root, "rev-parse", "HEAD").strip(), git(root, "status", "--porcelain", "--untracked-files=all")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    init(store)
    return store


@pytest.fixture
def three(root: Path) -> list[str]:
    return [
        remember(root, "Staging nodes", "The staging cluster runs on three nodes."),
        remember(root, "Backups", "Backups run nightly at 02:00 UTC."),
        remember(root, "Deploys", "Deploys happen on Tuesdays."),
    ]


def test_a_store_written_only_through_memhtml_is_healthy(root: Path, three: list[str]) -> None:
    before = state(root)
    answer = doctor(root, now=NOW)
    assert answer.healthy, answer.data
    # Counted from the tree, not from what doctor says it read.
    committed = [line for line in git(root, "ls-files", "--", *BUCKETS).splitlines() if line.endswith(".html")]
    assert answer.data["filesChecked"] == len(committed) == 3
    assert answer.data["inboxDepth"] == 3
    assert answer.data["indexFresh"] and answer.data["indexHeadSha"] == before[0]
    assert answer.data["remedies"] == []
    assert state(root) == before  # without --fix, nothing in the tree moves


def test_hand_committed_problems_are_each_named(root: Path, three: list[str]) -> None:
    staging, backups, deploys = three
    (root / "resources/notes").mkdir(parents=True)
    (root / "resources/notes/broken.html").write_text("<p>not a memory</p>\n")
    leaked = (root / backups).read_text().replace("Backups run nightly", f"Backups use key {AWS}")
    (root / "areas/inbox/leaked.html").write_text(leaked)
    (root / "areas/inbox/twin.html").write_bytes((root / deploys).read_bytes())
    (root / "areas/index.html").write_text("<p>generated</p>\n")
    outside = root.parent / "outside.txt"
    outside.write_text("outside the store\n")
    (root / "areas/inbox/pointer.html").symlink_to(outside)
    archived_status = (root / staging).read_text().replace('content="active"', 'content="archived"')
    (root / staging).write_text(archived_status)
    commit_all(root, "hand edits")

    data = doctor(root, now=NOW).data

    assert not data["healthy"]
    assert [item["path"] for item in data["unparseable"]] == ["resources/notes/broken.html"]
    assert [item["path"] for item in data["unsafeContent"]] == ["areas/inbox/leaked.html"]
    finding = data["unsafeContent"][0]["findings"][0]
    assert finding["code"] == "ERR_SECRET_DETECTED"
    assert AWS not in str(data)  # named by kind and size, never echoed
    assert {item["path"] for item in data["strayFiles"]} == {"areas/index.html", "areas/inbox/pointer.html"}
    assert "outside the store" not in str(data)
    assert data["duplicateActiveHashes"][0]["paths"] == sorted([deploys, "areas/inbox/twin.html"])
    assert data["statusMismatch"] == [{"path": staging, "status": "archived", "bucket": "areas"}]
    assert [item["path"] for item in data["staleContentHashes"]] == ["areas/inbox/leaked.html"]
    # The index holds one of the twins and skips the unparseable file: neither is drift.
    assert data["indexDrift"] == {"missing": [], "extra": [], "stale": []}


def test_an_uncommitted_file_is_checked_as_the_working_tree_holds_it(root: Path, three: list[str]) -> None:
    leaked = (root / three[1]).read_text().replace("Backups run nightly", f"Backups use key {AWS}")
    (root / three[1]).write_text(leaked)
    data = doctor(root, now=NOW).data
    assert data["dirty"] == [three[1]]
    assert [item["path"] for item in data["unsafeContent"]] == [three[1]]
    assert not data["healthy"]


def test_fix_repairs_dangling_links_in_one_commit_and_reports_the_store_after(root: Path, three: list[str]) -> None:
    staging, backups, deploys = three
    link(root, backups, "relates_to", staging)
    link(root, deploys, "caused_by", staging)
    archived = archive(root, staging, "moved", NOW)["archivePath"]
    (root / "areas/inbox/dangling.html").write_text(
        (root / deploys)
        .read_text()
        .replace("Deploys happen on Tuesdays.", "Deploys need a green build.")
        .replace(f'href="/{staging}"', 'href="/areas/inbox/never-existed.html"')
    )
    commit_all(root, "a link to nothing")
    commits_before = int(git(root, "rev-list", "--count", "HEAD"))

    found = doctor(root, now=NOW).data
    assert {(item["srcPath"], item["dstPath"], item["rewriteTo"]) for item in found["dangling"]} == {
        (backups, staging, archived),
        (deploys, staging, archived),
        ("areas/inbox/dangling.html", "areas/inbox/never-existed.html", None),
    }
    assert not found["healthy"] and "memhtml doctor --fix" in found["remedies"]

    fixed = doctor(root, fix=True, now=NOW)

    assert fixed.healthy, fixed.data
    repaired = fixed.data["repaired"]
    assert (repaired["rewritten"], repaired["dropped"], repaired["failedWrites"]) == (2, 1, [])
    assert int(git(root, "rev-list", "--count", "HEAD")) == commits_before + 1
    assert git(root, "log", "-1", "--format=%s") == "memhtml(link): repair 3 dangling links\n"
    assert repaired["commitSha"] == git(root, "rev-parse", "HEAD").strip()
    assert f'href="/{archived}"' in (root / backups).read_text()
    assert "never-existed" not in (root / "areas/inbox/dangling.html").read_text()
    assert '<meta name="memhtml-updated" content="2026-03-01T12:00:00Z">' in (root / backups).read_text()
    assert fixed.data["dangling"] == []
    assert git(root, "status", "--porcelain") == ""
    again = doctor(root, fix=True, now=NOW)
    assert again.healthy and again.data["repaired"]["commitSha"] is None


def test_fix_leaves_a_source_with_uncommitted_work_alone(root: Path, three: list[str]) -> None:
    staging, backups, _ = three
    link(root, backups, "relates_to", staging)
    archive(root, staging, "moved", NOW)
    edited = (root / backups).read_text() + "\n"
    (root / backups).write_text(edited)
    repaired = doctor(root, fix=True, now=NOW).data["repaired"]
    assert [item["path"] for item in repaired["failedWrites"]] == [backups]
    assert (root / backups).read_text() == edited


def test_fix_prunes_orphan_access_rows_and_rebuilds_a_drifted_index(root: Path, three: list[str]) -> None:
    doctor(root, now=NOW)  # the index exists and is caught up
    with open_database(root) as database:
        database.run(
            "INSERT INTO state.access (path, access_count, updated_at) VALUES ('../../outside/x.html', 1, 'x')"
        )
        database.run("DELETE FROM files WHERE path = $path", {"path": three[2]})
    found = doctor(root, now=NOW).data
    assert found["orphanAccessRows"] == ["../../outside/x.html"]
    assert found["indexDrift"]["missing"] == [three[2]]
    assert "memhtml index rebuild" in found["remedies"]

    fixed = doctor(root, fix=True, now=NOW)

    assert fixed.healthy, fixed.data
    assert fixed.data["repaired"]["prunedAccessRows"] == 1
    assert fixed.data["repaired"]["indexRebuilt"] is True
    with open_database(root, read_only=True) as database:
        assert database.value("SELECT count(*) FROM state.access WHERE path LIKE '../%'") == 0
        assert database.value("SELECT count(*) FROM files") == 3


def test_a_git_lock_left_by_a_killed_git_is_reported_and_removed(root: Path, three: list[str]) -> None:
    lock = root / ".git/index.lock"
    lock.write_bytes(b"")
    assert doctor(root, now=NOW).data["leftoverLocks"] == []  # a fresh lock may be a live git's
    old = time.time() - STALE_GIT_LOCK_SECONDS - 60
    os.utime(lock, (old, old))
    found = doctor(root, now=NOW).data
    assert [item["name"] for item in found["leftoverLocks"]] == ["index.lock"]
    assert not found["healthy"]
    fixed = doctor(root, fix=True, now=NOW)
    assert fixed.data["repaired"]["removedLocks"] == ["index.lock"]
    assert not lock.exists() and fixed.healthy
    git(root, "add", "-A")  # git can write its index again


def test_a_crowded_inbox_is_unhealthy(root: Path) -> None:
    for number in range(21):
        remember(root, f"Fact {number}", f"Fact number {number} is recorded.")
    data = doctor(root, now=NOW).data
    assert data["inboxDepth"] == 21 and data["inboxCrowded"] and not data["healthy"]


def test_fix_reports_a_head_it_cannot_splice_and_repairs_the_rest(root: Path, three: list[str]) -> None:
    staging, backups, deploys = three
    link(root, backups, "relates_to", staging)
    link(root, deploys, "relates_to", staging)
    archive(root, staging, "moved", NOW)
    # A hand-written `&copy=` in an attribute: HTML5 keeps it literal, a splice scanner would decode it,
    # so the head cannot be edited in place (and is not: the edit refuses rather than guess).
    text = (root / backups).read_text()
    odd = f'<link rel="memhtml-relates-to" href="/{deploys}?a&copy=1">'
    (root / backups).write_text(text.replace("</head>", odd + "\n</head>", 1))
    commit_all(root, "hand edit")

    repaired = doctor(root, fix=True, now=NOW).data["repaired"]

    assert [item["path"] for item in repaired["failedWrites"]] == [backups]
    assert repaired["rewritten"] == 1
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [deploys]


def test_uncommitted_edits_and_deletions_are_listed_but_are_not_index_drift(root: Path, three: list[str]) -> None:
    staging, backups, _ = three
    edited = (root / backups).read_text().replace("Backups run nightly", "Backups run hourly")
    (root / backups).write_text(edited)
    (root / staging).unlink()
    data = doctor(root, now=NOW).data
    assert data["dirty"] == sorted([backups, staging])
    assert data["indexDrift"] == {"missing": [], "extra": [], "stale": []}
    assert data["healthy"], data


def test_odd_file_names_in_the_working_tree_are_reported_not_fatal(root: Path, three: list[str]) -> None:
    inbox = os.fsencode(root / "areas" / "inbox")
    for name in (b"\xff-not-utf8.html", b"line\nbreak.html"):
        with open(os.path.join(inbox, name), "wb") as handle:
            handle.write(b"<p>not a memory</p>\n")
    data = doctor(root, now=NOW).data
    assert len(data["strayFiles"]) == 2, data["strayFiles"]
    assert not data["healthy"]
