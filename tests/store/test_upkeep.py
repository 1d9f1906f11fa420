"""Git's automatic maintenance after our commits: a store written only through memhtml gets packed as
one written with `git commit` does, the estimate follows git's own, and the maintenance never holds
the store's write lock."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import pytest

from memhtml.store import upkeep
from memhtml.store.lock import LOCK_FILENAME, write_lock
from memhtml.store.upkeep import FANOUT_LIMIT, GC_AUTO_PACK_LIMIT_DEFAULT, maintenance_due, objects_directory
from tests.conftest import git, run_cli

FACT = ["--type", "semantic", "--title", "Gateway retries", "--claim", "The retry budget of the gateway is 3."]


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def contents_in_fanout(count: int, fanout: str = "17") -> list[bytes]:
    """`count` file contents whose blob ids all fall in the fan-out directory `fanout`."""
    found: list[bytes] = []
    candidate = 0
    while len(found) < count:
        data = b"filler %d\n" % candidate
        if blob_id(data).startswith(fanout):
            found.append(data)
        candidate += 1
    return found


def loose_in(directory: Path) -> list[str]:
    """The loose object files of one fan-out directory, read from the disk."""
    if not directory.is_dir():
        return []
    return sorted(name for name in os.listdir(directory) if len(name) == 38)


def commit_without_maintenance(root: Path, contents: list[bytes], folder: str) -> None:
    """Commit plain files with git itself, its own automatic maintenance switched off for that commit."""
    (root / folder).mkdir()
    for number, data in enumerate(contents):
        (root / folder / f"f{number}.txt").write_bytes(data)
    git(root, "add", "--", folder)
    git(root, "-c", "maintenance.auto=false", "commit", "-q", "-m", f"add {folder}")


def test_a_write_packs_a_store_whose_loose_objects_pass_git_threshold(store_root: Path) -> None:
    commit_without_maintenance(store_root, contents_in_fanout(FANOUT_LIMIT + 3), "filler")
    fanout = store_root / ".git" / "objects" / "17"
    assert len(loose_in(fanout)) >= FANOUT_LIMIT + 3
    before = git(store_root, "rev-parse", "HEAD").strip()

    answer = run_cli("write", "--repo", str(store_root), *FACT)

    assert answer.status == 0 and answer.data["stored"] is True, answer.stdout + answer.stderr
    assert git(store_root, "rev-parse", "HEAD~1").strip() == before
    assert loose_in(fanout) == []
    counts = dict(line.split(": ") for line in git(store_root, "count-objects", "-v").splitlines())
    assert int(counts["count"]) == 0
    # Every object the history reaches, the write's own included, is in a pack now.
    reachable = len(git(store_root, "rev-list", "--objects", "--all").splitlines())
    assert int(counts["in-pack"]) >= reachable
    git(store_root, "fsck", "--no-progress")


def test_the_maintenance_runs_once_the_write_lock_is_released(store_root: Path, tmp_path: Path) -> None:
    # git runs the `pre-auto-gc` hook when its automatic gc is about to pack: the hook tries the lock.
    commit_without_maintenance(store_root, contents_in_fanout(FANOUT_LIMIT + 3), "filler")
    report = tmp_path / "lock-at-gc.txt"
    hook = store_root / ".git" / "hooks" / "pre-auto-gc"
    hook.write_text(
        f"#!{sys.executable}\n"
        "import fcntl, os, sys\n"
        f"descriptor = os.open({str(store_root / '.git' / LOCK_FILENAME)!r}, os.O_RDWR)\n"
        "try:\n"
        "    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "    state = 'free'\n"
        "except BlockingIOError:\n"
        "    state = 'held'\n"
        f"open({str(report)!r}, 'w').write(state)\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)

    answer = run_cli("write", "--repo", str(store_root), *FACT)

    assert answer.status == 0 and answer.data["stored"] is True, answer.stdout + answer.stderr
    assert report.read_text(encoding="utf-8") == "free"  # the gc ran, and no writer was kept waiting
    assert loose_in(store_root / ".git" / "objects" / "17") == []


def test_a_write_below_the_thresholds_leaves_the_objects_loose(store_root: Path) -> None:
    # As after a `git commit`: below git's thresholds nothing is packed.
    for number in range(3):
        answer = run_cli("write", "--repo", str(store_root), *FACT[:-1], f"The retry budget is {number}.")
        assert answer.status == 0, answer.stdout
    assert list((store_root / ".git" / "objects" / "pack").glob("*.pack")) == []
    assert int(dict(line.split(": ") for line in git(store_root, "count-objects", "-v").splitlines())["count"]) > 0


def test_the_estimate_counts_what_git_counts(tmp_path: Path) -> None:
    objects = tmp_path / "objects"
    (objects / "17").mkdir(parents=True)
    (objects / "pack").mkdir()
    for number in range(FANOUT_LIMIT):
        (objects / "17" / f"{number:038x}").touch()
    # Not object files: a temporary file git leaves while writing, a shorter name, upper-case hex.
    (objects / "17" / "tmp_obj_abc123").touch()
    (objects / "17" / ("a" * 37)).touch()
    (objects / "17" / ("A" * 38)).touch()
    assert not maintenance_due(objects)
    (objects / "17" / ("f" * 38)).touch()
    assert maintenance_due(objects)

    for name in os.listdir(objects / "17"):
        (objects / "17" / name).unlink()
    (objects / "17" / ("e" * 62)).touch()  # a SHA-256 repository's name counts too
    assert not maintenance_due(objects)
    for number in range(GC_AUTO_PACK_LIMIT_DEFAULT):
        (objects / "pack" / f"pack-{number:040x}.pack").touch()
        (objects / "pack" / f"pack-{number:040x}.idx").touch()
    assert not maintenance_due(objects)
    (objects / "pack" / "pack-extra.pack").touch()
    assert maintenance_due(objects)
    (objects / "pack" / "pack-extra.keep").touch()  # a kept pack is never repacked
    assert not maintenance_due(objects)


def test_a_missing_object_directory_is_never_due(tmp_path: Path) -> None:
    assert not maintenance_due(tmp_path / "nowhere")


def test_a_linked_worktree_is_estimated_on_the_common_objects(store_root: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    git(store_root, "worktree", "add", "-q", "--detach", str(linked))
    linked_git_dir = Path(git(linked, "rev-parse", "--absolute-git-dir").strip())
    assert linked_git_dir != store_root / ".git"
    assert objects_directory(linked_git_dir).resolve() == (store_root / ".git" / "objects").resolve()
    assert objects_directory(store_root / ".git") == store_root / ".git" / "objects"


def test_the_background_maintenance_holds_no_descriptor_of_the_store_lock(store_root: Path) -> None:
    # Many reachable loose objects, so that the detached `git gc` is still running when it is looked at.
    commit_without_maintenance(store_root, [b"bulk %d\n" % number for number in range(6000)], "bulk")
    commit_without_maintenance(store_root, contents_in_fanout(FANOUT_LIMIT + 3), "filler")
    git(store_root, "config", "gc.autoDetach", "true")  # this repository only: git's default
    git_dir = store_root / ".git"
    lock_file = (git_dir / LOCK_FILENAME).resolve()

    with write_lock(git_dir):
        assert upkeep.start_maintenance_if_due(store_root, git_dir)
        gc_pid = _running_gc(git_dir)
        held = {os.path.realpath(f"/proc/{gc_pid}/fd/{fd}") for fd in _descriptors(gc_pid)}
    _wait_for_exit(gc_pid)

    assert str(lock_file) not in held
    assert loose_in(git_dir / "objects" / "17") == []


def _running_gc(git_dir: Path) -> int:
    """The pid of the `git gc` running in the background (git records it in `gc.pid` while it runs)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            pid = int((git_dir / "gc.pid").read_text(encoding="utf-8").split()[0])
        except (OSError, ValueError, IndexError):
            time.sleep(0.01)
            continue
        if _alive(pid):
            return pid
        time.sleep(0.01)
    pytest.fail("no git gc ran in the background")


def _descriptors(pid: int) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/fd")
    except OSError:
        pytest.fail("the background git gc ended before its descriptors could be read")


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie nobody has reaped yet has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_for_exit(pid: int) -> None:
    deadline = time.monotonic() + 120
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
