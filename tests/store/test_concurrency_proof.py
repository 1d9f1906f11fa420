"""Writers racing for one store, counted from git afterwards: every distinct fact is stored exactly once,
in a commit of its own holding only its own file, and every write says honestly what it did. A reader
that searches for as long as writers run (as a server would) never fails past its bounded retries.

Size: 16 writer processes here too, with fewer writes each; `MEMHTML_STRESS=1` runs 16 × 50 writes and
a longer read-while-writing phase (`MEMHTML_CONCURRENCY_WRITES` overrides the writes per process).
"""

from __future__ import annotations

import multiprocessing
import os
import random
import re
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, run_cli

STRESS = os.environ.get("MEMHTML_STRESS") == "1"
PROCESSES = 16
WRITES_PER_PROCESS = int(os.environ.get("MEMHTML_CONCURRENCY_WRITES", "50" if STRESS else "10"))
SHARED_PER_PROCESS = 5  # every process also writes this many facts drawn from a pool all of them share
SHARED_POOL = 8
READ_WRITERS = 4
WRITES_PER_READ_WRITER = 25 if STRESS else 6
SEED = 20261130
BUCKETS = ("projects", "areas", "resources", "archive")
BOUNDED_WAIT_SECONDS = 600.0  # a timeout for a wedged run, never an expectation


@dataclass(frozen=True)
class Fact:
    key: str
    title: str
    claim: str


def shared_fact(number: int) -> Fact:
    return Fact(f"shared-{number}", f"Shared limit {number}", f"The shared rate limit number {number} is {number * 7}.")


def own_fact(process: int, number: int) -> Fact:
    return Fact(
        f"own-{process}-{number}",
        f"Worker {process} setting {number}",
        f"Worker {process} keeps setting {number} at {process * 1000 + number} units.",
    )


def plan() -> list[list[Fact]]:
    """What each process writes, in its (seeded, shuffled) order: its own facts plus shared ones."""
    rng = random.Random(f"concurrency-proof:{SEED}")
    plans = []
    for process in range(PROCESSES):
        shared = [shared_fact(number) for number in rng.sample(range(SHARED_POOL), SHARED_PER_PROCESS)]
        own = [own_fact(process, number) for number in range(WRITES_PER_PROCESS - SHARED_PER_PROCESS)]
        facts = own + shared
        rng.shuffle(facts)
        plans.append(facts)
    return plans


def write_facts(root: str, facts: list[Fact], start: Any, results: Any) -> None:
    """A worker process: wait for every other worker, then write each fact in-process, one by one."""
    from memhtml.contracts.errors import MemhtmlError
    from memhtml.operations.write import WriteRequest, write

    answers: list[dict[str, Any]] = []
    start.wait()
    for fact in facts:
        request = WriteRequest(title=fact.title, memory_type="semantic", claim=fact.claim)
        try:
            report = write(Path(root), request)
        except MemhtmlError as error:
            answers.append({"key": fact.key, "error": f"{error.code}: {error.message}"})
            continue
        except Exception as error:
            answers.append({"key": fact.key, "error": f"{type(error).__name__}: {error}"})
            continue
        answers.append(
            {
                "key": fact.key,
                "stored": report.stored,
                "outcome": report.outcome,
                "path": report.path,
                "commit": report.commit_sha,
            }
        )
    results.put(answers)


def commits_since(root: Path, base: str) -> dict[str, list[str]]:
    """Each commit after `base` (listed by git) and the paths it touches."""
    output = subprocess.run(
        ["git", "-C", str(root), "log", "--format=%x01%H", "--name-only", "--no-renames", f"{base}..HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    commits: dict[str, list[str]] = {}
    for block in output.split("\x01")[1:]:
        sha, *paths = [line for line in block.splitlines() if line]
        commits[sha] = paths
    return commits


def found(pattern: str, text: str) -> str:
    match = re.search(pattern, text, re.DOTALL)
    assert match is not None, pattern
    return match.group(0)


def memory_files_in_head(root: Path) -> list[str]:
    listing = git(root, "ls-tree", "-r", "--name-only", "HEAD")
    return [name for name in listing.splitlines() if name.endswith(".html") and name.split("/", 1)[0] in BUCKETS]


@pytest.mark.slow
def test_sixteen_writers_store_each_distinct_fact_exactly_once(store_root: Path) -> None:
    plans = plan()
    distinct = {fact.key: fact for facts in plans for fact in facts}
    before = git(store_root, "rev-parse", "HEAD").strip()
    files_before = set(memory_files_in_head(store_root))

    context = multiprocessing.get_context("spawn")
    start = context.Barrier(PROCESSES)
    results = context.Queue()
    workers = [context.Process(target=write_facts, args=(str(store_root), facts, start, results)) for facts in plans]
    for worker in workers:
        worker.start()
    answers = [answer for _ in workers for answer in results.get(timeout=BOUNDED_WAIT_SECONDS)]
    for worker in workers:
        worker.join(timeout=BOUNDED_WAIT_SECONDS)
        assert worker.exitcode == 0

    # Every write answered success, and `stored` is true exactly once per distinct fact.
    assert len(answers) == PROCESSES * WRITES_PER_PROCESS
    failures = [answer for answer in answers if "error" in answer]
    assert failures == []
    stored = Counter(answer["key"] for answer in answers if answer["stored"])
    assert stored == Counter(list(distinct))  # each distinct fact once, no other
    for answer in answers:
        assert (answer["outcome"] == "written") is answer["stored"], answer
        assert answer["outcome"] in ("written", "unchanged"), answer
        assert (answer["commit"] is not None) is answer["stored"], answer
    paths = {answer["key"]: answer["path"] for answer in answers if answer["stored"]}
    for answer in answers:  # a deduped write names the file its fact lives in
        assert answer["path"] == paths[answer["key"]], answer

    # Exactly one commit per distinct fact, each holding only its own file.
    commits = commits_since(store_root, before)
    assert len(commits) == len(distinct)
    assert int(git(store_root, "rev-list", "--count", f"{before}..HEAD")) == len(distinct)
    assert all(len(touched) == 1 for touched in commits.values()), [c for c in commits.values() if len(c) != 1]
    reported = {answer["commit"]: answer["path"] for answer in answers if answer["stored"]}
    assert {sha: touched[0] for sha, touched in commits.items()} == reported

    # HEAD holds each fact once: one new file per distinct fact, distinct articles, each claim in one file.
    assert git(store_root, "status", "--porcelain=v1", "--untracked-files=all") == ""
    new_files = sorted(set(memory_files_in_head(store_root)) - files_before)
    assert len(new_files) == len(distinct)
    texts = [(store_root / path).read_text(encoding="utf-8") for path in new_files]
    articles = {found(r"<article>.*?</article>", text) for text in texts}
    hashes = {found(r'<meta name="memhtml-content-hash" content="[^"]+">', text) for text in texts}
    assert len(articles) == len(hashes) == len(distinct)
    holding = Counter(fact.key for fact in distinct.values() for text in texts if fact.claim in text)
    assert holding == Counter(list(distinct))
    fsck = subprocess.run(["git", "-C", str(store_root), "fsck", "--no-dangling", "--no-progress"], check=False)
    assert fsck.returncode == 0
    print(
        f"\n{PROCESSES} processes x {WRITES_PER_PROCESS} writes: {sum(stored.values())} stored for "
        f"{len(distinct)} distinct facts in {len(commits)} commits, "
        f"{sum(1 for answer in answers if answer['outcome'] == 'unchanged')} answered unchanged, 0 failures"
    )


def search_until(root: str, stop: Any, results: Any) -> None:
    """A long-lived reader (as the MCP server is): search in-process again and again until told to stop."""
    from memhtml.contracts.errors import MemhtmlError
    from memhtml.operations.retrieval import RetrievalRequest, search

    queries = ["rate limit", "writer setting units", "shared", "queue depth"]
    served, failures = 0, []
    while not stop.is_set():
        try:
            search(Path(root), RetrievalRequest(query=queries[served % len(queries)]))
            served += 1
        except MemhtmlError as error:
            failures.append(f"{error.code}: {error.message}")
        except Exception as error:
            failures.append(f"{type(error).__name__}: {error}")
    results.put((served, failures))


@pytest.mark.slow
def test_a_reader_that_never_stops_and_four_writers_all_succeed(store_root: Path) -> None:
    seeded = run_cli(
        "write", "--repo", str(store_root), "--title", "Seed", "--type", "semantic", "--claim", "The rate limit is 5."
    )
    assert seeded.status == 0
    before = int(git(store_root, "rev-list", "--count", "HEAD"))

    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    results = context.Queue()
    reader = context.Process(target=search_until, args=(str(store_root), stop, results))
    reader.start()

    cli_statuses: list[tuple[int, str]] = []
    write_statuses: list[tuple[int, str]] = []

    def cli_reader() -> None:  # the command line reads too, in its own processes
        while not stop.is_set():
            answer = run_cli("search", "--repo", str(store_root), "shared rate limit")
            cli_statuses.append((answer.status, answer.stdout[-500:] + answer.stderr[-500:]))

    def writer(number: int) -> None:
        for serial in range(WRITES_PER_READ_WRITER):
            answer = run_cli(
                "write",
                "--repo",
                str(store_root),
                "--title",
                f"Reader race {number} {serial}",
                "--type",
                "semantic",
                "--claim",
                f"Writer {number} stored item {serial} while a reader searched.",
            )
            write_statuses.append((answer.status, answer.stdout[-500:] + answer.stderr[-500:]))

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(READ_WRITERS)]
    reading = threading.Thread(target=cli_reader)
    reading.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=BOUNDED_WAIT_SECONDS)
    stop.set()
    reading.join(timeout=BOUNDED_WAIT_SECONDS)
    served, failures = results.get(timeout=BOUNDED_WAIT_SECONDS)
    reader.join(timeout=BOUNDED_WAIT_SECONDS)

    assert [status for status, _ in write_statuses] == [0] * (READ_WRITERS * WRITES_PER_READ_WRITER), [
        text for status, text in write_statuses if status != 0
    ]
    assert [text for status, text in cli_statuses if status != 0] == []
    assert failures == []
    assert served > 0 and cli_statuses  # the readers really ran alongside the writers
    expected = before + READ_WRITERS * WRITES_PER_READ_WRITER
    assert int(git(store_root, "rev-list", "--count", "HEAD")) == expected
    assert git(store_root, "status", "--porcelain=v1", "--untracked-files=all") == ""
    print(f"\nread while writing: {served} in-process searches, {len(cli_statuses)} CLI searches, 0 failures")
