"""End-to-end proof that one store of N memories (default 100,000) works, command by command.

The other benchmarks time a few operations many times; this one asks a different question: does
every command an agent or an operator uses still answer correctly on a store this large, and what
does each one cost there? It builds one deterministic store with `corpus.build_store` (N memories in
one commit), then runs each command ONCE, as a whole process of our CLI with `--repo` and `--json`,
in the order a store lives through them:

 1. `index rebuild` (the first index, with the default embedder: MEMHTML_EMBED is unset);
 2. `status`; 3. `search`; 4. `recall` (queries from `corpus.queries()`);
 5. `write` of one new memory; 6. the same `write` again, which must store nothing;
 7. `apply` of 1000 new ops (`corpus.ops_jsonl`); 8. `correct` and 9. `archive` of built memories;
10. `index update` after one commit made with plain git (exactly one new file);
11. `list`, `neighbors` (of the correction, which must lead to what it superseded), `resolve` (of
    the archived path, which must lead to its archived copy);
12. `doctor` (exit 0 when healthy, 1 when not; the report says which and why);
13. `index rebuild` of the grown store, which must keep every vector the steps wrote.

Each step gets its wall time, the peak RSS of its own process (from `wait4` on that child, never
RUSAGE_CHILDREN, which is a running maximum over every child so far), its exit status and a
verdict read from its JSON envelope, not from the exit status alone. Afterwards git itself is asked
whether the store holds what the steps said they stored (memory files active and archived, a clean
worktree). The markdown report is printed and written to `.bench/scale-results.md`; failures are
listed in it and the script always exits 0: a benchmark reports, it never fails the build.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_env import side_env
from bench_index import HERMETIC_GIT, Run, envelope, measure, project_revision
from corpus import add_memory_file, build_store, memories, ops_jsonl, queries

from memhtml.contracts.vocabulary import PARA_BUCKETS
from memhtml.operations.doctor import PROBLEM_LISTS

PROJECT = Path(__file__).resolve().parents[1]
RESULTS = PROJECT / ".bench" / "scale-results.md"
DEFAULT_SIZE = 100_000
DEFAULT_TIMEOUT = 1800.0
APPLY_OPS = 1000
APPLY_SALT = "scale"
UPDATE_SALT = "scale-update"  # the memory committed with plain git before `index update`
LIST_LIMIT = 20
ARCHIVE_BUCKET = "archive"
DETAIL_CHARS = 300  # how much of a failed command's stdout and stderr the report keeps
COMMAND_CHARS = 90  # the report's command column, abbreviated past this
# doctor findings that describe the shape of a synthetic corpus, not damage done by the steps: the
# generator files most memories without a workspace or a routing tag, so they crowd areas/inbox.
CORPUS_SHAPE_FINDINGS = ("inboxCrowded", "inboxTasksCrowded")
# doctor findings that mean the store is damaged: the steps must never leave any of these behind
# (doctor's own list of what makes a store unhealthy).
DAMAGE_LISTS = PROBLEM_LISTS


# ---------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    """What a step's answer is worth: `failure` says why it is wrong, `note` what an ok step adds."""

    failure: str | None = None
    note: str = ""

    def text(self) -> str:
        if self.failure is not None:
            return f"FAILED: {self.failure}"
        return "ok" + (f" ({self.note})" if self.note else "")


OK = Verdict()


def failed(why: str) -> Verdict:
    return Verdict(failure=why)


def compact(value: object, limit: int = 200) -> str:
    """A JSON value on one line, cut at `limit` characters, for a failure's explanation."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_chars(raw: bytes) -> str:
    return raw[:DETAIL_CHARS].decode("utf-8", "replace")


# ---------------------------------------------------------------- one step


DataCheck = Callable[[dict[str, Any], Run], Verdict]


@dataclass(frozen=True)
class Step:
    """One finished command: what ran, what it cost, and what its answer is worth."""

    label: str
    command: str
    run: Run | None
    verdict: Verdict
    answer: dict[str, Any] = field(default_factory=dict)  # the envelope's `data`, {} when none


def judge(run: Run, expected_type: str, check: DataCheck, exits: Sequence[int]) -> tuple[Verdict, dict[str, Any]]:
    """The verdict on one run: killed, unreadable, an error envelope, a wrong type or exit, or the
    step's own check of the envelope's `data`."""
    if run.returncode is None:
        return failed(f"killed at the timeout after {run.seconds:.1f} s"), {}
    answer = envelope(run)
    if answer is None:
        return failed(f"no JSON envelope on stdout (exit {run.returncode})"), {}
    if "code" in answer:
        message = answer.get("message") or answer.get("error")
        return failed(f"error envelope {answer['code']}: {message} (exit {run.returncode})"), {}
    data = answer.get("data")
    if not isinstance(data, dict):
        return failed("the envelope carries no `data` object"), {}
    if answer.get("type") != expected_type:
        return failed(f"envelope type {answer.get('type')!r}, expected {expected_type!r}"), data
    if run.returncode not in exits:
        return failed(f"exit {run.returncode}, expected {' or '.join(map(str, exits))}"), data
    return check(data, run), data


def display(arguments: Sequence[str]) -> str:
    """The command as the report shows it: after `memhtml`, without the flags every step shares."""
    text = " ".join(shlex.quote(argument) for argument in arguments)
    text = text if len(text) <= COMMAND_CHARS else text[: COMMAND_CHARS - 1] + "…"
    return "`" + text.replace("|", "\\|") + "`"


@dataclass
class Scale:
    """The store under test, how its commands run, and every step's result so far."""

    store: Path
    size: int
    env: dict[str, str]
    timeout: float
    binary: str = str(Path(sys.executable).with_name("memhtml"))
    steps: list[Step] = field(default_factory=list)

    def step(
        self,
        label: str,
        arguments: Sequence[str],
        expected_type: str,
        check: DataCheck,
        *,
        exits: Sequence[int] = (0,),
        shown: Sequence[str] | None = None,
    ) -> Step:
        """Run one command and judge it; `shown` is how the report names it, when not `arguments`."""
        argv = [self.binary, *arguments, "--repo", str(self.store), "--json"]
        command = display(arguments if shown is None else shown)
        print(f"[{self.size}] step {label}: {command}", file=sys.stderr, flush=True)
        run = measure(argv, self.env, self.timeout)
        verdict, data = judge(run, expected_type, check, exits)
        done = Step(label, command, run, verdict, data)
        self.steps.append(done)
        print(f"[{self.size}]   {run.seconds:.1f} s, {run.peak_mb:.0f} MB, {verdict.text()}", file=sys.stderr)
        return done

    def not_run(self, label: str, arguments: Sequence[str], why: str) -> None:
        self.steps.append(Step(label, display(arguments), None, failed(f"not run: {why}")))

    def git(self, *arguments: str) -> str:
        completed = subprocess.run(
            ["git", "-C", str(self.store), *arguments], env=self.env, check=True, capture_output=True, text=True
        )
        return completed.stdout


# ---------------------------------------------------------------- what each step must answer


def check_rebuild(expected_files: int, *, warm: bool) -> DataCheck:
    """Every file indexed, nothing skipped; the first rebuild embeds, the second keeps every vector
    the steps wrote (each of them indexed what it stored) and embeds nothing."""

    def check(data: dict[str, Any], _run: Run) -> Verdict:
        if data.get("mode") != "rebuild" or data.get("filesIndexed") != expected_files:
            return failed(f"indexed {data.get('filesIndexed')!r} files, expected {expected_files}")
        if data.get("skipped"):
            return failed(f"skipped files: {compact(data['skipped'])}")
        written, kept = data.get("embeddingsWritten"), data.get("embeddingsPreserved")
        if warm and (written != 0 or not kept):
            return failed(f"a rebuild of an indexed store must keep every vector: wrote {written!r}, kept {kept!r}")
        if not warm and (not written or kept != 0):
            return failed(f"the first rebuild must embed every chunk: wrote {written!r}, kept {kept!r}")
        return Verdict(note=f"{written} vectors written, {kept} kept")

    return check


def check_status(expected_memories: int) -> DataCheck:
    def check(data: dict[str, Any], _run: Run) -> Verdict:
        counted = sum((data.get("countsByType") or {}).values())
        if counted != expected_memories:
            return failed(f"countsByType sums to {counted}, expected {expected_memories}")
        if not data.get("indexFresh") or data.get("dirty") or not data.get("embedderUp"):
            fields = {name: data.get(name) for name in ("indexFresh", "dirty", "embedderUp")}
            return failed(f"expected a fresh index, a clean tree and the embedder up: {compact(fields)}")
        coverage, floor = data.get("vectorCoverage") or 0, data.get("vectorCoverageFloor") or 0
        if coverage < floor:
            return failed(f"vector coverage {coverage} under its floor {floor}")
        return Verdict(note=f"vector coverage {coverage}")

    return check


def check_search(data: dict[str, Any], _run: Run) -> Verdict:
    hits = data.get("hits") or []
    if not hits:
        return failed("no hits")
    if data.get("degraded"):
        return failed(f"degraded search (arms {data.get('arms')}) on a fully embedded index")
    return Verdict(note=f"{len(hits)} hits, arms {'+'.join(data.get('arms') or [])}")


def check_recall(data: dict[str, Any], _run: Run) -> Verdict:
    pack = data.get("memories") or {}
    disclosed, listed = len(pack.get("disclosed") or []), len(pack.get("indexLines") or [])
    if not disclosed:
        return failed(f"disclosed no memory: {compact(pack)}")
    return Verdict(note=f"{disclosed} disclosed, {listed} index lines")


def check_first_write(data: dict[str, Any], _run: Run) -> Verdict:
    if data.get("stored") is not True or data.get("outcome") != "written" or not data.get("path"):
        return failed(f"expected a stored, written memory: {compact(data)}")
    return OK


def check_repeated_write(first_path: str | None) -> DataCheck:
    """The same text again: nothing stored, the answer names the memory the first write stored."""

    def check(data: dict[str, Any], _run: Run) -> Verdict:
        if data.get("stored") is not False or not data.get("deduped"):
            return failed(f"expected a deduplicated write that stores nothing: {compact(data)}")
        if first_path is not None and data.get("existingPath") != first_path:
            return failed(f"existingPath {data.get('existingPath')!r}, expected {first_path!r}")
        return Verdict(note=f"outcome {data.get('outcome')}")

    return check


def check_apply(data: dict[str, Any], _run: Run) -> Verdict:
    summary = data.get("summary") or {}
    if summary.get("total") != APPLY_OPS or summary.get("failed") or summary.get("refused") or data.get("partial"):
        return failed(f"expected {APPLY_OPS} ops, none failed or refused: {compact(summary)}")
    if not data.get("stored") or not data.get("commit_sha"):
        return failed(f"the batch stored nothing: {compact(summary)}")
    return Verdict(note=f"{summary.get('written')} written, {summary.get('deduped')} deduped")


def check_correct(data: dict[str, Any], _run: Run) -> Verdict:
    archived = str(data.get("archivedPath") or "")
    if data.get("stored") is not True or not data.get("path") or not archived.startswith(f"{ARCHIVE_BUCKET}/"):
        return failed(f"expected a new memory and its target archived: {compact(data)}")
    return OK


def check_archive(data: dict[str, Any], _run: Run) -> Verdict:
    if data.get("stored") is not True or not str(data.get("archivePath") or "").startswith(f"{ARCHIVE_BUCKET}/"):
        return failed(f"expected the memory moved under {ARCHIVE_BUCKET}/: {compact(data)}")
    return OK


def check_update(data: dict[str, Any], _run: Run) -> Verdict:
    moved = {name: data.get(name) for name in ("added", "modified", "removed", "renamed")}
    if data.get("mode") != "update" or moved != {"added": 1, "modified": 0, "removed": 0, "renamed": 0}:
        return failed(f"expected exactly one added file: {compact(data)}")
    if data.get("skipped"):
        return failed(f"skipped files: {compact(data['skipped'])}")
    return Verdict(note=f"{data.get('embeddingsWritten')} vector written")


def check_list(data: dict[str, Any], _run: Run) -> Verdict:
    files = data.get("files") or []
    if len(files) != LIST_LIMIT or not data.get("nextCursor"):
        return failed(f"expected a full page of {LIST_LIMIT} and a next cursor, got {len(files)} files")
    if any(entry.get("archived") for entry in files):
        return failed("an archived memory listed without --include-archived")
    return OK


def check_neighbors(superseded: str | None) -> DataCheck:
    """The correction's neighbourhood must hold the memory it superseded (its archived copy)."""

    def check(data: dict[str, Any], _run: Run) -> Verdict:
        nodes = data.get("nodes") or []
        if superseded is not None and not any(node.get("path") == superseded for node in nodes):
            return failed(f"{superseded} is not among the neighbours: {compact(nodes)}")
        return Verdict(note=f"nodes: {len(nodes)}")

    return check


def check_resolve(archived_copy: str | None) -> DataCheck:
    def check(data: dict[str, Any], _run: Run) -> Verdict:
        landed = str(data.get("path") or "")
        if data.get("stopReason") != "archived" or not landed.startswith(f"{ARCHIVE_BUCKET}/"):
            return failed(f"expected the path to lead to its archived copy: {compact(data)}")
        if archived_copy is not None and landed != archived_copy:
            return failed(f"resolved to {landed}, archive moved it to {archived_copy}")
        return Verdict(note=f"hops: {data.get('hops')}")

    return check


def check_doctor(data: dict[str, Any], run: Run) -> Verdict:
    """Exit 0 when healthy and 1 when not; any finding beyond the synthetic corpus's crowded inbox
    means the steps damaged the store."""
    healthy = data.get("healthy")
    if run.returncode != (0 if healthy else 1):
        return failed(f"exit {run.returncode} with healthy={healthy!r}")
    damage = [name for name in DAMAGE_LISTS if data.get(name)]
    drift = data.get("indexDrift") or {}
    damage += [f"indexDrift.{kind}" for kind, paths in drift.items() if paths]
    damage += [name for name in ("indexError",) if name in data]
    damage += [name for name in ("indexFresh", "embedModelMatches") if data.get(name) is False]
    damage += [name for name in ("vectorCoverageLow",) if data.get(name)]
    if damage:
        return failed(f"unhealthy: {', '.join(damage)}; remedies {compact(data.get('remedies'))}")
    if healthy:
        return Verdict(note="healthy")
    shape = [name for name in CORPUS_SHAPE_FINDINGS if data.get(name)]
    return Verdict(note=f"unhealthy only by corpus shape: {', '.join(shape)}, inboxDepth {data.get('inboxDepth')}")


# ---------------------------------------------------------------- the steps, in order


@dataclass
class Stored:
    """What the steps say they added to the tree: memory files in all, and of them archived."""

    files: int
    archived: int = 0


def run_steps(scale: Scale, built: list[str], scratch: Path) -> Stored:
    size = scale.size
    stored = Stored(files=size)
    search_query, recall_query = queries(2)
    correction_target, archive_target = built[size // 3], built[(2 * size) // 3]

    scale.step("1", ["index", "rebuild"], "index.report", check_rebuild(size, warm=False))
    scale.step("2", ["status"], "status.health", check_status(size))
    scale.step("3", ["search", search_query], "memory.hits", check_search)
    scale.step("4", ["recall", recall_query], "recall.pack", check_recall)

    write = [
        "write",
        "--title",
        "Scale benchmark probe",
        "--type",
        "semantic",
        "--claim",
        f"The scale benchmark stored this probe in a store of {size} memories.",
    ]
    first = scale.step("5", write, "memory.written", check_first_write)
    stored.files += 1 if first.answer.get("stored") is True else 0
    first_path = first.answer.get("path") if first.verdict.failure is None else None
    repeated = scale.step("6", write, "memory.written", check_repeated_write(first_path))
    stored.files += 1 if repeated.answer.get("stored") is True else 0

    ops = scratch / "apply.jsonl"
    ops.write_text(ops_jsonl(APPLY_OPS, APPLY_SALT), encoding="utf-8")
    # The report names the ops, not the temporary file that held them.
    shown = ["apply", "--file", f"<{APPLY_OPS} ops>"]
    applied = scale.step("7", ["apply", "--file", str(ops)], "batch.applied", check_apply, shown=shown)
    if applied.answer.get("stored"):  # an atomic batch that failed stored nothing
        stored.files += int((applied.answer.get("summary") or {}).get("written") or 0)

    correct = [
        "correct",
        correction_target,
        "--title",
        "Scale benchmark correction",
        "--claim",
        f"The scale benchmark corrected this fact in a store of {size} memories.",
        "--reason",
        "scale benchmark: correct one memory of the built corpus",
    ]
    corrected = scale.step("8", correct, "memory.corrected", check_correct)
    if corrected.answer.get("stored") is True:
        stored.files += 1  # the new memory; its target moves under archive/
        stored.archived += 1

    archive = ["archive", archive_target, "--reason", "scale benchmark: archive one memory of the built corpus"]
    archived = scale.step("9", archive, "memory.archived", check_archive)
    stored.archived += 1 if archived.answer.get("stored") is True else 0

    update = ["index", "update"]
    try:
        # Committed with plain git, as another writer would: `index update` finds one new file.
        memory = next(memories(1, salt=UPDATE_SALT))
        added = add_memory_file(scale.store, memory)
        scale.git("add", "--", added)
        scale.git("commit", "-q", "-m", f"bench: add {added}")
    except (subprocess.CalledProcessError, OSError) as error:
        scale.not_run("10", update, f"the plain git commit failed: {error!r}")
    else:
        stored.files += 1
        scale.step("10", update, "index.report", check_update)

    scale.step("11a", ["list", "--limit", str(LIST_LIMIT)], "memory.list", check_list)
    center = corrected.answer.get("path") or correction_target
    superseded = corrected.answer.get("archivedPath") if corrected.verdict.failure is None else None
    scale.step("11b", ["neighbors", center], "memory.neighbors", check_neighbors(superseded))
    archived_copy = archived.answer.get("archivePath") if archived.verdict.failure is None else None
    scale.step("11c", ["resolve", archive_target], "memory.resolved", check_resolve(archived_copy))

    scale.step("12", ["doctor"], "doctor.report", check_doctor, exits=(0, 1))
    # The index covers archived memories too, so the grown store's rebuild indexes every file.
    scale.step("13", ["index", "rebuild"], "index.report", check_rebuild(stored.files, warm=True))
    return stored


# ---------------------------------------------------------------- what git says the store holds


@dataclass(frozen=True)
class TreeCheck:
    what: str
    expected: str
    found: str

    @property
    def verdict(self) -> Verdict:
        return OK if self.expected == self.found else failed(f"expected {self.expected}, found {self.found}")


def check_tree(scale: Scale, stored: Stored) -> list[TreeCheck]:
    """Count the memory files at HEAD with git itself, independently of what the index believes."""
    names = scale.git("ls-tree", "-r", "--name-only", "HEAD").splitlines()
    memory_files = [name for name in names if name.endswith(".html") and name.split("/")[0] in PARA_BUCKETS]
    archived = sum(1 for name in memory_files if name.startswith(f"{ARCHIVE_BUCKET}/"))
    leftovers = scale.git("status", "--porcelain").splitlines()
    return [
        TreeCheck("memory files under the buckets at HEAD", f"{stored.files:,}", f"{len(memory_files):,}"),
        TreeCheck(f"of them under {ARCHIVE_BUCKET}/", str(stored.archived), str(archived)),
        TreeCheck(
            f"active (outside {ARCHIVE_BUCKET}/)",
            f"{stored.files - stored.archived:,}",
            f"{len(memory_files) - archived:,}",
        ),
        TreeCheck(
            "`git status --porcelain`",
            "empty",
            "empty" if not leftovers else f"{len(leftovers)} line(s): {leftovers[:3]}",
        ),
    ]


# ---------------------------------------------------------------- report


@dataclass
class Outcome:
    """Everything the report needs, filled in as far as the run got."""

    size: int
    timeout: float
    revision: str
    load_before: float
    load_after: float = 0.0
    build_seconds: float | None = None
    total_seconds: float = 0.0
    store: Path | None = None
    kept: bool = False
    steps: list[Step] = field(default_factory=list)
    tree: list[TreeCheck] = field(default_factory=list)
    aborted: str | None = None


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def steps_table(steps: list[Step]) -> list[str]:
    lines = ["| step | command | seconds | peak MB | exit | verdict |", "|---|---|---:|---:|---:|---|"]
    for step in steps:
        run = step.run
        seconds = "—" if run is None else f"{run.seconds:.2f}"
        peak = "—" if run is None else f"{run.peak_mb:.0f}"
        status = "—" if run is None else ("killed" if run.returncode is None else str(run.returncode))
        lines.append(f"| {step.label} | {step.command} | {seconds} | {peak} | {status} | {cell(step.verdict.text())} |")
    return lines


def tree_table(checks: list[TreeCheck]) -> list[str]:
    lines = ["| check | expected | found | verdict |", "|---|---:|---:|---|"]
    lines += [
        f"| {check.what} | {check.expected} | {cell(check.found)} | {cell(check.verdict.text())} |" for check in checks
    ]
    return lines


def failure_lines(outcome: Outcome) -> list[str]:
    """Every failure, with the start of what the failed command printed."""
    lines: list[str] = []
    if outcome.aborted:
        lines.append(f"- the run aborted: {outcome.aborted}")
    for step in outcome.steps:
        if step.verdict.failure is None:
            continue
        lines.append(f"- step {step.label} {step.command}: {step.verdict.failure}")
        if step.run is not None:
            lines.append(f"  - stdout: {first_chars(step.run.stdout)!r}")
            lines.append(f"  - stderr: {first_chars(step.run.stderr)!r}")
    lines += [f"- git: {check.what}: {check.verdict.failure}" for check in outcome.tree if check.verdict.failure]
    return lines or ["none"]


def report(outcome: Outcome) -> str:
    build = "not built" if outcome.build_seconds is None else f"{outcome.build_seconds:.1f} s"
    where = f"kept at `{outcome.store}`" if outcome.kept and outcome.store else "a temporary directory, removed"
    lines = [
        f"# memhtml scale run — {outcome.size:,} memories — {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, "
        f"memhtml at {outcome.revision}",
        "",
        f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}; load average "
        f"{outcome.load_before:.2f} before, {outcome.load_after:.2f} after. Default embedder (MEMHTML_EMBED "
        f"unset); each command run once as a whole process, timeout {outcome.timeout:.0f} s; peak MB is the "
        f"resident set of that command's own process. Total {outcome.total_seconds:.0f} s.",
        "",
        f"Store: {outcome.size:,} memories built with `corpus.build_store` (one commit) in {build}; {where}.",
        "",
        *steps_table(outcome.steps),
        "",
        "What git says the store holds, against what the steps said they stored:",
        "",
        *(tree_table(outcome.tree) if outcome.tree else ["not checked: the run did not get that far"]),
        "",
        "**Failures:**",
        "",
        *failure_lines(outcome),
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------- command line


def prepare_store(store: Path, size: int, env: dict[str, str]) -> list[str]:
    built = build_store(store, size)
    # A lived-in store has stat data in its git index; without it the first command pays for it.
    subprocess.run(["git", "-C", str(store), "update-index", "-q", "--refresh"], env=env, check=False)
    return built


def run_all(outcome: Outcome, keep: Path | None, env: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix="memhtml-bench-scale-") as scratch_name:
        scratch = Path(scratch_name)
        store = keep.resolve() if keep else scratch / "store"
        if store.exists() and any(store.iterdir()):
            outcome.aborted = f"{store} exists and is not empty: --keep wants a new directory"
            return
        outcome.store, outcome.kept = store, keep is not None
        print(f"[{outcome.size}] building the store …", file=sys.stderr, flush=True)
        started = time.perf_counter()
        built = prepare_store(store, outcome.size, env)
        outcome.build_seconds = time.perf_counter() - started
        scale = Scale(store=store, size=outcome.size, env=env, timeout=outcome.timeout)
        outcome.steps = scale.steps  # shared, so an abort mid-way still reports the finished steps
        stored = run_steps(scale, built, scratch)
        outcome.tree = check_tree(scale, stored)


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="memories in the built store")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR", help="build the store in DIR and keep it")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds before a command is killed")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    os.environ.update(HERMETIC_GIT)  # the in-process store builder commits too
    env = side_env("ours", os.environ)  # our default embedder, whatever the caller exported
    outcome = Outcome(arguments.size, arguments.timeout, project_revision(), os.getloadavg()[0])
    started = time.perf_counter()
    try:
        run_all(outcome, arguments.keep, env)
    except Exception as error:  # a benchmark reports; it never fails the build
        outcome.aborted = repr(error)
    outcome.total_seconds = time.perf_counter() - started
    outcome.load_after = os.getloadavg()[0]
    text = report(outcome)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as error:  # a benchmark reports; it never fails the build
        print(f"bench_scale: aborted: {error!r}", file=sys.stderr)
        sys.exit(0)
