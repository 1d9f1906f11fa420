"""Faults of git beside the store: objects that go missing, a repack beside a batch, signals at the
commit boundary, git's index left stale or deleted, a detached HEAD, and someone committing in a loop.

Each scenario counts a failure when an answer disagrees with what git holds afterwards (a write that
says it stored what the branch does not hold, or says nothing was stored when it was), when a store is
left worse than it was found (a dirty tree, a store `doctor` calls healthy while it is not), and counts
as lost every memory a write answered as stored, or that was committed before, which the branch does not
hold at the end.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

from tests.faults.harness import Bench, Tally, claims_in_head, clean_tree, loose_object


def _three_memories(bench: Bench, label: str) -> tuple[Path, list[str]]:
    root = bench.store(label)
    claims = [f"The {label} fact number {number} holds." for number in range(3)]
    for number, claim in enumerate(claims):
        bench.write(root, f"{label} {number}", claim)
    return root, claims


def _missing_tree(bench: Bench, tries: int, fault: str, spec: str, expected: str) -> Tally:
    """Remove the loose object of `spec` (a tree of HEAD), write once more, put the object back and count."""
    tally = Tally(fault)
    for attempt in range(tries):
        tally.tries += 1
        root, claims = _three_memories(bench, f"tree-{attempt}")
        tree = bench.git(root, "rev-parse", spec).strip()
        saved = loose_object(root, tree).read_bytes()
        loose_object(root, tree).unlink()
        answer = bench.write(root, "One more", f"One more fact {attempt} arrives.")
        loose_object(root, tree).write_bytes(saved)
        tally.lost += len(claims) - len(claims_in_head(bench, root, claims))
        if answer.status == 0 or answer.code != expected:
            tally.fail(f"answered {answer.status} {answer.code} stored={answer.stored}")
        if not clean_tree(bench, root):
            tally.fail("the tree was left changed")
    return tally


def missing_root_tree(bench: Bench, tries: int) -> Tally:
    return _missing_tree(bench, tries, "missing root tree", "HEAD^{tree}", "ERR_CORRUPT_REPOSITORY")


def missing_subtree(bench: Bench, tries: int) -> Tally:
    return _missing_tree(bench, tries, "missing subtree", "HEAD:areas/inbox", "ERR_CORRUPT_REPOSITORY")


def repack_beside_apply(bench: Bench, tries: int) -> Tally:
    """`git repack -adf` in a loop while batches of 150 ops land (a pack of their own each)."""
    tally = Tally("repack beside apply")
    root = bench.store("repack")
    stop = threading.Event()

    def repack() -> None:
        while not stop.is_set():
            subprocess.run(["git", "-C", str(root), "repack", "-adfq"], capture_output=True, env=bench.env, check=False)

    packer = threading.Thread(target=repack)
    packer.start()
    claims: list[str] = []
    try:
        for batch in range(tries):
            tally.tries += 1
            ops = [f"Batch {batch} keeps fact {number} in its pack." for number in range(150)]
            stream = "".join(
                json.dumps({"op": "write", "title": f"B{batch} {n}", "type": "semantic", "body": text}) + "\n"
                for n, text in enumerate(ops)
            )
            answer = bench.run("apply", "--repo", str(root), stdin=stream)
            if answer.status != 0:
                tally.fail(f"apply answered {answer.status} {answer.code}")
            elif answer.stored:
                claims += ops
    finally:
        stop.set()
        packer.join()
    fsck = subprocess.run(
        ["git", "-C", str(root), "fsck", "--full"], capture_output=True, text=True, env=bench.env, check=False
    )
    missing = sum(1 for line in (fsck.stdout + fsck.stderr).splitlines() if line.startswith("missing"))
    readable = len(claims_in_head(bench, root, claims[:: max(1, len(claims) // 300)]))
    sampled = len(claims[:: max(1, len(claims) // 300)])
    tally.lost += missing + (sampled - readable)
    tally.notes.append(f"{missing} missing objects (git fsck --full)")
    return tally


def signal_at_commit(bench: Bench, tries: int) -> Tally:
    """SIGTERM at a random moment of a write's life; the answer must agree with git, whatever it says."""
    tally = Tally("SIGTERM around the commit")
    root = bench.store("signals")
    for warm in range(3):
        bench.write(root, f"Warm {warm}", f"Warm fact {warm} first.")
    started = time.monotonic()
    bench.write(root, "Timed", "A timed write lands.")
    duration = time.monotonic() - started
    rng = random.Random(20261207)
    landed = 0
    for attempt in range(tries):
        tally.tries += 1
        claim = f"Signal fact {attempt} arrives at {rng.random():.6f}."
        process = bench.start("write", "--repo", str(root), "--title", f"Signal {attempt}", "--type", "semantic",
                              "--claim", claim)  # fmt: skip
        time.sleep(rng.uniform(0.2, 1.1) * duration)
        process.send_signal(signal.SIGTERM)
        stdout, _ = process.communicate()
        in_head = bool(claims_in_head(bench, root, [claim]))
        landed += in_head
        try:
            envelope = json.loads(stdout)
            said_stored = process.returncode == 0 and bool(envelope.get("data", {}).get("stored"))
        except ValueError:
            said_stored = None  # no answer at all: killed outright
        else:
            if str(envelope.get("error", "")).startswith("unexpected failure"):
                tally.fail(f"try {attempt}: answered a defect, {envelope['error']!r}, not an interrupt")
        if said_stored is None and in_head:
            tally.fail(f"try {attempt}: the commit landed and the process answered nothing (exit {process.returncode})")
        elif said_stored is not None and said_stored != in_head:
            tally.fail(
                f"try {attempt}: answered stored={said_stored} with the memory {'in' if in_head else 'not in'} HEAD"
            )
        if not clean_tree(bench, root):
            tally.fail(f"try {attempt}: the tree was left changed until the next command")
            bench.run("status", "--repo", str(root))  # the next command puts it right
        path = (
            next((name for name in bench.git(root, "grep", "-l", "-F", "-e", claim, "HEAD").splitlines()), None)
            if in_head
            else None
        )
        if path is not None and not (root / path.split(":", 1)[1]).exists():
            tally.lost += 1
    tally.notes.append(f"{landed} of {tries} writes landed before the signal")
    return tally


def _age(path: Path, seconds: float) -> None:
    moment = time.time() - seconds
    os.utime(path, (moment, moment))


def stale_git_index(bench: Bench, tries: int) -> Tally:
    """A write while a dead git's `index.lock` is left behind, `doctor --fix`, then the user's own `git
    commit`: every memory a write answered as stored must still be on the branch."""
    tally = Tally("git index left stale (index.lock)")
    for attempt in range(tries):
        tally.tries += 1
        root = bench.store(f"stale-{attempt}")
        stored: list[str] = []
        first = f"The first fact of try {attempt} is kept."
        if bench.write(root, "First", first).stored:
            stored.append(first)
        lock = root / ".git" / "index.lock"
        lock.write_text("")
        _age(lock, 3600)
        second = f"The second fact of try {attempt} is kept."
        answer = bench.write(root, "Second", second)
        if answer.stored:
            stored.append(second)
        fixed = bench.run("doctor", "--fix", "--repo", str(root))
        if lock.exists():
            lock.unlink()
            tally.fail("doctor --fix left the lock")
        if not answer.stored:
            retried = bench.write(root, "Second", second)
            if retried.stored:
                stored.append(second)
        bench.git(root, "commit", "-q", "--allow-empty", "-m", "the user's own commit")
        kept = claims_in_head(bench, root, stored)
        tally.lost += len(stored) - len(kept)
        if len(stored) != len(kept):
            tally.fail(f"the user's commit deleted {len(stored) - len(kept)} memories; doctor said {fixed.status}")
    return tally


def deleted_git_index(bench: Bench, tries: int) -> Tally:
    """`.git/index` deleted: `doctor` must say so, `--fix` must rebuild it, and the user's next commit
    must keep every memory."""
    tally = Tally("git index deleted")
    for attempt in range(tries):
        tally.tries += 1
        root, claims = _three_memories(bench, f"noindex-{attempt}")
        (root / ".git" / "index").unlink()
        examined = bench.run("doctor", "--repo", str(root))
        if examined.status == 0:
            tally.fail("doctor called the store healthy with git's index gone")
        bench.run("doctor", "--fix", "--repo", str(root))
        bench.git(root, "commit", "-q", "--allow-empty", "-m", "the user's own commit")
        kept = claims_in_head(bench, root, claims)
        tally.lost += len(claims) - len(kept)
        if not clean_tree(bench, root):
            tally.fail("git status still shows changes after doctor --fix")
    return tally


def detached_head(bench: Bench, tries: int) -> Tally:
    """A write while HEAD is detached, then `git checkout main`: a write that says it stored must be
    on the branch."""
    tally = Tally("write on a detached HEAD")
    for attempt in range(tries):
        tally.tries += 1
        root, claims = _three_memories(bench, f"detached-{attempt}")
        bench.git(root, "checkout", "-q", "--detach")
        claim = f"A fact written while detached, try {attempt}."
        answer = bench.write(root, "Detached", claim)
        bench.git(root, "checkout", "-q", "main")
        stored = [*claims, claim] if answer.stored else claims
        tally.lost += len(stored) - len(claims_in_head(bench, root, stored))
        if answer.stored or answer.code != "ERR_DETACHED_HEAD":
            tally.fail(f"answered {answer.status} {answer.code} stored={answer.stored}")
    return tally


def human_commit_loop(bench: Bench, tries: int) -> Tally:
    """Someone runs `git commit` in a tight loop while memhtml writes `tries` memories."""
    tally = Tally("git commit in a loop beside writes")
    root = bench.store("human")
    stop = threading.Event()
    counts = {"commits": 0, "failed": 0}

    def commit_in_a_loop() -> None:
        while not stop.is_set():
            counts["commits"] += 1
            done = subprocess.run(["git", "-C", str(root), "commit", "-q", "--allow-empty", "-m", "by hand"],
                                  capture_output=True, env=bench.env, check=False)  # fmt: skip
            counts["failed"] += done.returncode != 0

    human = threading.Thread(target=commit_in_a_loop)
    human.start()
    stored: list[str] = []
    try:
        for attempt in range(tries):
            tally.tries += 1
            claim = f"Race fact {attempt} is stored once."
            answer = bench.write(root, f"Race {attempt}", claim)
            if answer.stored:
                stored.append(claim)
            else:
                tally.fail(f"write {attempt}: {answer.status} {answer.code}")
    finally:
        stop.set()
        human.join()
    tally.lost += len(stored) - len(claims_in_head(bench, root, stored))
    # A commit of the loop that deleted a memory committed it from an index without our entry: even if a
    # later one put it back (the index had the entry by then), the branch lost it for a while.
    for removal in bench.git(root, "log", "--diff-filter=D", "--format=%h", "--", "areas").split():
        tally.fail(f"commit {removal} of the loop removed a memory from the branch")
    tally.notes.append(f"the loop's own commits: {counts['commits']}, {counts['failed']} of them refused by git")
    return tally


SCENARIOS = {
    "missing-root-tree": (missing_root_tree, 2, 10),
    "missing-subtree": (missing_subtree, 2, 10),
    "repack-beside-apply": (repack_beside_apply, 6, 32),
    "signal-at-commit": (signal_at_commit, 24, 350),
    "stale-git-index": (stale_git_index, 2, 10),
    "deleted-git-index": (deleted_git_index, 2, 10),
    "detached-head": (detached_head, 2, 10),
    "human-commit-loop": (human_commit_loop, 20, 100),
}
