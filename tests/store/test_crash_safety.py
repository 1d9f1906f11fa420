"""Crash safety of the write path: a writer killed with SIGKILL at any moment leaves the store at its old
commit or at one whole new commit, and the next command finds it clean, unlocked and indexable.

The harness starts `memhtml apply` of N generated ops and kills it at seeded random moments: half spread
over the duration of one unkilled run, half over the span in which that run's transaction was open
(counted from the moment the killed run's own transaction opens). After each kill it checks the store
with git itself, never with the answers of the command under test.

Size: N=400 ops, 8 kills on one store and 4 on fresh copies. `MEMHTML_STRESS=1` runs N=10,000 ops
with 20 kills on one store and 10 on fresh copies; `MEMHTML_CRASH_OPS`, `MEMHTML_CRASH_KILLS` (both
variants) and `MEMHTML_CRASH_SEED` override the figures.

The deterministic tests at the end kill a writer at chosen points of its transaction.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from memhtml.operations.doctor import doctor
from tests.conftest import Answer, git, run_cli


def _corpus_ops() -> Callable[[int, str], str]:
    """The benchmarks' corpus generator (`scripts/corpus.py`, not a package), as `apply` JSONL."""
    location = Path(__file__).resolve().parents[2] / "scripts" / "corpus.py"
    spec = importlib.util.spec_from_file_location("memhtml_bench_corpus", location)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    generator: Callable[[int, str], str] = module.ops_jsonl
    return generator


ops_jsonl = _corpus_ops()

STRESS = os.environ.get("MEMHTML_STRESS") == "1"
OPS = int(os.environ.get("MEMHTML_CRASH_OPS", "10000" if STRESS else "400"))
KILLS = int(os.environ.get("MEMHTML_CRASH_KILLS", "20" if STRESS else "8"))
FRESH_KILLS = int(os.environ.get("MEMHTML_CRASH_KILLS", "10" if STRESS else "4"))
SEED = int(os.environ.get("MEMHTML_CRASH_SEED", "20261130"))
BUCKETS = ("projects", "areas", "resources", "archive")
# Timeouts only: how long a wait may last before the test calls the store wedged (or a process leaked).
BOUNDED_WAIT_SECONDS = 120.0
LEFTOVER_WAIT_SECONDS = 30.0


# ---------------------------------------------------------------- git's own view of the store


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def memory_files_in(root: Path, commit: str) -> set[str]:
    """Memory files of a commit's tree, listed by git (not by any memhtml answer)."""
    listing = subprocess.run(
        ["git", "-C", str(root), "ls-tree", "-r", "-z", "--name-only", commit],
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    return {name for name in listing.split("\0") if name.endswith(".html") and name.split("/", 1)[0] in BUCKETS}


def tree_changes(root: Path, old: str, new: str) -> list[tuple[str, str]]:
    """(status letter, path) of every path that differs between two commits."""
    output = subprocess.run(
        ["git", "-C", str(root), "diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new],
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    fields = [item for item in output.split("\0") if item]
    return list(zip(fields[0::2], fields[1::2], strict=True))


def porcelain(root: Path) -> str:
    """`git status` of the whole tree, untracked files listed one by one (ignored database files excluded)."""
    return git(root, "status", "--porcelain=v1", "--untracked-files=all")


def fsck_problems(root: Path) -> str:
    completed = subprocess.run(
        ["git", "-C", str(root), "fsck", "--no-dangling", "--no-progress", "--full"],
        capture_output=True,
        text=True,
        check=False,
    )
    return "" if completed.returncode == 0 else f"exit {completed.returncode}: {completed.stdout}{completed.stderr}"


def wait_for_store_lock(root: Path) -> None:
    """Take and release the store's write lock within the bounded wait. The kernel releases it when its
    holder dies; git children of the killed writer finish first (they share its lock), so after this
    nothing of the killed command is still changing the store."""
    descriptor = os.open(root / ".git" / "memhtml-write.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + BOUNDED_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail("the store lock of a killed writer was never released")
                time.sleep(0.01)
        fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


def live_processes_of_group(group: int) -> list[int]:
    """Processes of a process group still running (zombies excluded); empty where there is no /proc."""
    live = []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(entry.path, "stat").read_bytes().rsplit(b")", 1)[-1].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[2]) == group and fields[0] != b"Z":
            live.append(int(entry.name))
    return live


def assert_nothing_left_running(group: int, label: str) -> None:
    """Whatever the killed command started (git children, worker pools and their fork servers) ends on
    its own within the bounded wait; leftovers are killed so the test never leaks them, then reported."""
    deadline = time.monotonic() + LEFTOVER_WAIT_SECONDS
    while (live := live_processes_of_group(group)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not live:
        return
    commands = []
    for pid in live:
        with contextlib.suppress(OSError):
            commands.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:90].decode())
    for pid in live:  # descendants of the command this test started
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    pytest.fail(f"{label}: {len(live)} processes of the killed command still ran: {commands}")


# ---------------------------------------------------------------- the harness


@dataclass
class Batch:
    """An apply input and what a landed commit of it must change, derived from the ops themselves."""

    path: Path
    added: int  # new memory files
    modified: int = 0  # committed memories the batch restates (rewritten in place)


@dataclass
class Tally:
    tried: int = 0
    survived: int = 0
    landed: int = 0
    cut_mid_write: int = 0  # kills inside a transaction before its commit: the next command rolls it back
    landed_unfinished: int = 0  # kills after the commit, before the transaction's end: the next one finishes it


def distinct_write_ops(text: str) -> list[dict[str, object]]:
    ops = [json.loads(line) for line in text.splitlines() if line.strip()]
    identities = {(op["type"], op["title"], op["body"]) for op in ops}
    assert len(identities) == len(ops), "the generated ops must be distinct for the expected totals to hold"
    return ops


def apply_command(root: Path, batch: Batch) -> list[str]:
    return [sys.executable, "-m", "memhtml", "apply", "--repo", str(root), "--file", str(batch.path), "--dense"]


@dataclass
class Timing:
    """One unkilled run: its wall time, and when its transaction had a journal in `.git` (the span in
    which a kill can cut a transaction short), if the poll saw it."""

    duration: float
    transaction: tuple[float, float] | None


def journals(root: Path) -> list[str]:
    return [entry.name for entry in os.scandir(root / ".git") if entry.name.startswith("memhtml-journal-")]


def measured_run(root: Path, batch: Batch) -> Timing:
    """Apply `batch` unkilled on `root`, timing it; its commit must change exactly what the ops say."""
    before = head(root)
    output = root.parent / f"{root.name}-{batch.path.stem}.out"
    with output.open("wb") as sink:  # a file, not a pipe: an unread pipe would stall the command
        started = time.monotonic()
        process = subprocess.Popen(apply_command(root, batch), stdout=sink, stderr=subprocess.STDOUT)
        seen: list[float] = []
        while process.poll() is None:
            if journals(root):
                seen.append(time.monotonic() - started)
            time.sleep(0.002)
        elapsed = time.monotonic() - started
    assert process.returncode == 0, output.read_text(encoding="utf-8", errors="replace")[-4000:]
    changes = tree_changes(root, before, head(root))
    assert sorted(status for status, _ in changes) == ["A"] * batch.added + ["M"] * batch.modified
    return Timing(elapsed, (seen[0], seen[-1]) if seen else None)


def kill_and_check(root: Path, batch: Batch, moment: Moment, tally: Tally, label: str) -> None:
    """Start `apply`, SIGKILL it at `moment`, then hold the store to every crash promise."""
    before = head(root)
    files_before = memory_files_in(root, before)
    process = subprocess.Popen(
        apply_command(root, batch), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    if moment.in_transaction:
        deadline = time.monotonic() + BOUNDED_WAIT_SECONDS
        while not journals(root) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
    time.sleep(moment.seconds)
    process.send_signal(signal.SIGKILL)  # the command only: its git children run on, as after a real crash
    process.wait(timeout=BOUNDED_WAIT_SECONDS)
    tally.tried += 1

    # The lock comes back, and nothing the killed command started runs on.
    wait_for_store_lock(root)
    assert_nothing_left_running(process.pid, label)
    # Git's objects are whole and HEAD is the old commit or exactly one whole new commit.
    assert fsck_problems(root) == "", label
    after = head(root)
    if after != before:
        assert git(root, "rev-parse", f"{after}^").strip() == before, f"{label}: more than one commit landed"
        changes = tree_changes(root, before, after)
        assert sorted(status for status, _ in changes) == ["A"] * batch.added + ["M"] * batch.modified, label
        assert all(path.split("/", 1)[0] in BUCKETS for _, path in changes), label
        tally.landed += 1
    expected_files = files_before | (memory_files_in(root, after) if after != before else set())
    assert memory_files_in(root, after) == expected_files, label
    assert len(expected_files) == len(files_before) + (batch.added if after != before else 0), label
    if journals(root) and after == before:
        tally.cut_mid_write += 1
    elif journals(root):
        tally.landed_unfinished += 1

    # The next command of any kind finds the tree clean: nothing half-written is left for the index.
    status = run_cli("status", "--repo", str(root))
    assert status.status == 0, f"{label}: {status.stdout[-1000:]} {status.stderr[-1000:]}"
    assert porcelain(root) == "", f"{label}: left behind after a crash:\n{porcelain(root)[:2000]}"

    # The next write succeeds within the bounded lock wait and stores exactly its own file.
    written = run_cli(
        "write",
        "--repo",
        str(root),
        "--title",
        f"After crash {label}",
        "--type",
        "semantic",
        "--claim",
        f"The store took a write after crash {label}.",
    )
    assert written.status == 0, f"{label}: {written.stdout[-1000:]} {written.stderr[-1000:]}"
    assert written.data["stored"] is True and written.data["outcome"] == "written", label
    assert [path for _, path in tree_changes(root, after, head(root))] == [written.data["path"]], label

    # The index catches up with HEAD, counted independently from git's tree.
    assert_index_matches_head(root, label)
    assert porcelain(root) == "", label
    # doctor finds nothing a crash could leave behind.
    examined = doctor(root).data
    assert {name: examined[name] for name in CRASH_FINDINGS if examined[name]} == {}, label
    assert examined["indexDrift"] == {"missing": [], "extra": [], "stale": []}, label
    tally.survived += 1


# What a killed writer could leave: its journal, git's lock files, half-written or stray files, a
# working tree that differs from HEAD, a path the index lost.
CRASH_FINDINGS = ("interruptedWrites", "leftoverLocks", "unparseable", "strayFiles", "dirty", "duplicateActiveHashes")


def assert_index_matches_head(root: Path, label: str) -> None:
    updated = run_cli("index", "update", "--repo", str(root))
    assert updated.status == 0, f"{label}: {updated.stdout[-1000:]} {updated.stderr[-1000:]}"
    report = run_cli("index", "status", "--repo", str(root))
    assert report.status == 0, f"{label}: {report.stdout[-1000:]}"
    in_head = memory_files_in(root, head(root))
    assert report.data["files"] == len(in_head), f"{label}: index {report.data['files']} != HEAD {len(in_head)}"
    assert report.data["dirtyPaths"] == [] and report.data["fresh"] is True, label
    assert report.data["headSha"] == head(root), label


@dataclass(frozen=True)
class Moment:
    """When to kill: `seconds` after the start, or after the run's transaction opened (`in_transaction`)."""

    seconds: float
    in_transaction: bool

    def __str__(self) -> str:
        return f"{self.seconds:.3f}s into its transaction" if self.in_transaction else f"at {self.seconds:.2f}s"


def moments(timing: Timing, kills: int, salt: str) -> list[Moment]:
    """Seeded kill moments: half spread over the whole run (one in each equal slice of the measured
    duration), half spread over the measured span of its transaction, counted from the moment the killed
    run's own transaction opens (so a slower or faster run is still cut where it has most to break)."""
    rng = random.Random(f"crash-safety:{SEED}:{salt}")
    whole, inside = kills - kills // 2, kills // 2
    span = 1.2 * (timing.transaction[1] - timing.transaction[0]) if timing.transaction else 0.0
    drawn = [Moment(timing.duration * (slot + rng.random()) / whole, False) for slot in range(whole)]
    if timing.transaction is None:  # never seen open: spread these over the whole run too
        drawn += [Moment(timing.duration * rng.random(), False) for _ in range(inside)]
    else:
        drawn += [Moment(span * (slot + rng.random()) / inside, True) for slot in range(inside)]
    rng.shuffle(drawn)
    return drawn


def init_store(root: Path) -> None:
    answer = run_cli("init", "--repo", str(root))
    assert answer.status == 0, answer.stdout + answer.stderr


def write_batch(directory: Path, name: str, text: str, *, modified: int = 0) -> Batch:
    ops = distinct_write_ops(text)
    path = directory / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    return Batch(path, added=len(ops) - modified, modified=modified)


def report(tally: Tally, variant: str) -> None:
    print(
        f"\ncrash safety ({variant}, {OPS} ops): survived {tally.survived}/{tally.tried} kills; "
        f"{tally.landed} landed whole ({tally.landed_unfinished} of them killed before the transaction's end), "
        f"{tally.cut_mid_write} cut mid-transaction and rolled back by the next command"
    )


@pytest.mark.slow
def test_successive_kills_on_one_store_never_leave_it_between_commits(tmp_path: Path) -> None:
    """What a user sees: the same store, killed again and again, keeps working after every crash."""
    root = tmp_path / "store"
    init_store(root)
    probe_root = tmp_path / "probe"
    shutil.copytree(root, probe_root, symlinks=True)
    timing = measured_run(probe_root, write_batch(tmp_path, "probe", ops_jsonl(OPS, "crash-probe")))
    shutil.rmtree(probe_root)
    tally = Tally()
    for number, moment in enumerate(moments(timing, KILLS, "successive")):
        batch = write_batch(tmp_path, f"kill-{number}", ops_jsonl(OPS, f"crash-kill-{number}"))
        kill_and_check(root, batch, moment, tally, f"kill {number} {moment} (run of {timing.duration:.2f}s)")
    report(tally, "successive")
    assert tally.survived == tally.tried == KILLS


def restating_batch(directory: Path, base: str, fresh: str) -> Batch:
    """Half new ops, half restatements of stored memories (a changed importance): a landed commit adds
    the new files and rewrites the restated ones in place, or does nothing at all."""
    base_ops = distinct_write_ops(base)
    restated = []
    for op in base_ops:
        if op["type"] == "task":  # tasks are never deduped: a restated task is a new file
            continue
        restated.append({**op, "importance": 1 if op.get("importance") != 1 else 5})
        if len(restated) == OPS // 2:
            break
    fresh_lines = fresh.splitlines()[: OPS - len(restated)]
    lines = [json.dumps(op, ensure_ascii=False) for op in restated] + fresh_lines
    return write_batch(directory, "restating", "\n".join(lines) + "\n", modified=len(restated))


@pytest.mark.slow
def test_kills_on_fresh_copies_of_a_loaded_store_roll_back_rewrites_too(tmp_path: Path) -> None:
    """Each kill on its own copy of a store holding N memories, with a batch that both adds files and
    rewrites committed ones: a rewrite cut short must be put back byte for byte."""
    prepared = tmp_path / "prepared"
    init_store(prepared)
    base = ops_jsonl(OPS, "crash-base")
    loaded = write_batch(tmp_path, "base", base)
    measured_run(prepared, loaded)
    assert_index_matches_head(prepared, "prepared")
    batch = restating_batch(tmp_path, base, ops_jsonl(OPS, "crash-fresh"))
    probe = tmp_path / "probe"
    shutil.copytree(prepared, probe, symlinks=True)
    timing = measured_run(probe, batch)
    shutil.rmtree(probe)
    tally = Tally()
    for number, moment in enumerate(moments(timing, FRESH_KILLS, "fresh-copy")):
        root = tmp_path / f"copy-{number}"
        shutil.copytree(prepared, root, symlinks=True)
        before = {path: (root / path).read_bytes() for path in memory_files_in(root, head(root))}
        kill_and_check(root, batch, moment, tally, f"copy {number} {moment} (run of {timing.duration:.2f}s)")
        if git(root, "rev-list", "--count", "HEAD").strip() == "3":  # init, base, the write after the crash
            # Rolled back: every committed memory holds its bytes from before the batch.
            assert {path: (root / path).read_bytes() for path in before} == before
        shutil.rmtree(root)
    report(tally, "fresh copies")
    assert tally.survived == tally.tried == FRESH_KILLS


# ---------------------------------------------------------------- kills at chosen points


FACT = ["--type", "semantic", "--claim", "The deploy window of the ledger is Tuesday."]


def killed_writer(root: Path, point: str, ops: Path) -> int:
    """Run `apply` in a child process that SIGKILLs itself at `point` of its transaction."""
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        from memhtml.store import transaction
        point = {point!r}
        def die(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        if point == "before-commit":
            transaction.commit_paths = die
        elif point == "after-commit":
            real = transaction.commit_paths
            def commit_then_die(*args, **kwargs):
                real(*args, **kwargs)
                die()
            transaction.commit_paths = commit_then_die
        from memhtml.cli.entry import main
        sys.argv = ["memhtml", "apply", "--repo", {str(root)!r}, "--file", {str(ops)!r}, "--dense"]
        main()
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    return completed.returncode


def small_batch(tmp_path: Path, lines: list[dict[str, object]]) -> Path:
    path = tmp_path / "ops.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


NEW_OPS: list[dict[str, object]] = [
    {
        "op": "write",
        "title": f"Killed {n}",
        "type": "semantic",
        "body": f"Fact {n} of a killed batch.",
        "workspace": "w",
    }
    for n in range(3)
]


def test_a_writer_killed_before_its_commit_leaves_nothing_for_the_next_command(
    store_root: Path, tmp_path: Path
) -> None:
    before = head(store_root)
    status = killed_writer(store_root, "before-commit", small_batch(tmp_path, NEW_OPS))
    assert status == -signal.SIGKILL
    assert head(store_root) == before
    answer: Answer = run_cli("status", "--repo", str(store_root))
    assert answer.status == 0
    assert porcelain(store_root) == ""
    assert not (store_root / "projects" / "w").exists()
    assert_index_matches_head(store_root, "before-commit")
    again = run_cli("apply", "--repo", str(store_root), "--file", str(tmp_path / "ops.jsonl"))
    assert again.status == 0
    # The retry takes the paths the killed writer had claimed: no `-2` copies beside leftovers.
    assert sorted(path for _, path in tree_changes(store_root, before, head(store_root))) == [
        f"projects/w/killed-{n}.html" for n in range(3)
    ]


def test_a_writer_killed_after_its_commit_keeps_it_and_the_git_index_catches_up(
    store_root: Path, tmp_path: Path
) -> None:
    before = head(store_root)
    status = killed_writer(store_root, "after-commit", small_batch(tmp_path, NEW_OPS))
    assert status == -signal.SIGKILL
    assert len(tree_changes(store_root, before, head(store_root))) == 3
    assert run_cli("status", "--repo", str(store_root)).status == 0
    assert porcelain(store_root) == ""
    assert_index_matches_head(store_root, "after-commit")


def test_a_rewrite_killed_before_its_commit_is_put_back_byte_for_byte(store_root: Path, tmp_path: Path) -> None:
    first = run_cli("write", "--repo", str(store_root), "--title", "Window", *FACT, "--importance", "2")
    assert first.status == 0
    path = store_root / first.data["path"]
    original = path.read_bytes()
    before = head(store_root)
    restate = [{"op": "write", "title": "Window", "type": "semantic", "body": FACT[3], "importance": 5}]
    status = killed_writer(store_root, "before-commit", small_batch(tmp_path, restate))
    assert status == -signal.SIGKILL
    assert run_cli("status", "--repo", str(store_root)).status == 0
    assert head(store_root) == before
    assert path.read_bytes() == original
    assert porcelain(store_root) == ""
    assert list(path.parent.glob(".*.tmp")) == []


def test_a_git_child_of_a_killed_writer_keeps_the_store_locked_until_it_ends(store_root: Path, tmp_path: Path) -> None:
    """A writer killed while its `update-ref` still runs must not let the next writer in before that child
    is done: the child shares the lock, so nobody recovers (or commits onto) a store still changing."""
    started, release = tmp_path / "started", tmp_path / "release"
    os.mkfifo(release)
    script = textwrap.dedent(
        f"""
        import os, signal, threading, time
        from pathlib import Path
        from memhtml.store.gitcmd import run_git
        from memhtml.store.lock import write_lock
        root = Path({str(store_root)!r})
        hold = "alias.hold=!touch {started} && cat {release} >/dev/null"
        with write_lock(root / ".git"):
            threading.Thread(target=run_git, args=(root, ["-c", hold, "hold"]), daemon=True).start()
            deadline = time.monotonic() + {BOUNDED_WAIT_SECONDS}
            while not os.path.exists({str(started)!r}) and time.monotonic() < deadline:
                time.sleep(0.001)
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    try:
        completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
        assert completed.returncode == -signal.SIGKILL and started.exists(), completed.stderr
        descriptor = os.open(store_root / ".git" / "memhtml-write.lock", os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):  # the writer is dead, its git child is not
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(descriptor)
    finally:
        release_child(release, started)
    wait_for_store_lock(store_root)


def release_child(release: Path, started: Path) -> None:
    """Open the fifo the held git child reads, so it sees its end and exits (once it is reading)."""
    deadline = time.monotonic() + BOUNDED_WAIT_SECONDS
    while started.exists():
        try:
            os.close(os.open(release, os.O_WRONLY | os.O_NONBLOCK))
            return
        except OSError:  # no reader yet
            if time.monotonic() > deadline:
                return
            time.sleep(0.01)
