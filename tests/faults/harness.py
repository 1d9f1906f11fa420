"""The fault harness: each class of fault replayed against a `memhtml` executable, counted from git and
the inputs rather than from the command's answers.

A scenario gets a `Bench` (the executable, a hermetic git environment, a scratch directory) and a number
of tries, and returns a `Tally`: how many tries there were, how many answered falsely or left the store
worse than they found it (`failures`), and how many memories were lost (a write answered as stored that
the branch no longer holds, a committed memory gone). `tests/faults/test_faults.py` runs every scenario
small in `make test` and large in `make stress`; run as a program it prints the table, for any
executable (an older build included), e.g.

    python -m tests.faults.harness --memhtml .venv/bin/memhtml --scale large
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERMETIC_GIT = {
    "GIT_AUTHOR_NAME": "Fault Harness",
    "GIT_AUTHOR_EMAIL": "harness@example.invalid",
    "GIT_COMMITTER_NAME": "Fault Harness",
    "GIT_COMMITTER_EMAIL": "harness@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "MEMHTML_EMBED": "hash",
    "GIT_OPTIONAL_LOCKS": "0",  # the harness's own `git status` must not write (a full disk, a read-only store)
}


@dataclass
class Tally:
    """What a scenario counted; `notes` says what else it saw (another party's failures, codes)."""

    fault: str
    tries: int = 0
    failures: int = 0
    lost: int = 0
    notes: list[str] = field(default_factory=list)
    failed_tries: list[str] = field(default_factory=list)

    def fail(self, what: str) -> None:
        self.failures += 1
        if len(self.failed_tries) < 5:
            self.failed_tries.append(what)


@dataclass
class Answer:
    status: int
    stdout: str
    stderr: str

    @property
    def envelope(self) -> dict[str, Any] | None:
        try:
            parsed = json.loads(self.stdout)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    @property
    def stored(self) -> bool:
        """Whether the answer says something was stored (a success envelope whose data says so)."""
        envelope = self.envelope
        data = envelope.get("data") if envelope is not None and self.status in (0, 3) else None
        return isinstance(data, dict) and bool(data.get("stored"))

    @property
    def code(self) -> str | None:
        envelope = self.envelope
        return None if envelope is None else envelope.get("code")


class Bench:
    """Where a scenario runs: the executable, a git configuration of its own and a scratch directory."""

    def __init__(self, memhtml: Sequence[str], scratch: Path) -> None:
        self.memhtml = list(memhtml)
        self.scratch = scratch
        config = scratch / "gitconfig"
        config.write_text("[init]\n\tdefaultBranch = main\n[gc]\n\tautoDetach = false\n", encoding="utf-8")
        self.env = (
            {key: value for key, value in os.environ.items() if not key.startswith(("GIT_", "MEMHTML_"))}
            | HERMETIC_GIT
            | {"GIT_CONFIG_GLOBAL": str(config), "HOME": str(scratch)}
        )
        self._stores = 0

    def store(self, name: str | None = None) -> Path:
        """A new, initialized store (the executable's own `init`)."""
        self._stores += 1
        root = self.scratch / (name or f"store-{self._stores}")
        answer = self.run("init", "--repo", str(root))
        if answer.status != 0:
            raise RuntimeError(f"init failed: {answer.stdout} {answer.stderr}")
        return root

    def start(self, *args: str, stdin: int | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*self.memhtml, *args],
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )

    def run(self, *args: str, stdin: str | None = None, timeout: float = 600) -> Answer:
        completed = subprocess.run(
            [*self.memhtml, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=timeout,
            check=False,
        )
        return Answer(completed.returncode, completed.stdout, completed.stderr)

    def write(self, root: Path, title: str, claim: str) -> Answer:
        return self.run("write", "--repo", str(root), "--title", title, "--type", "semantic", "--claim", claim)

    def git(self, root: Path, *args: str, check: bool = True) -> str:
        completed = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, env=self.env, check=False
        )
        if check and completed.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {completed.stderr}")
        return completed.stdout


def claims_in_head(bench: Bench, root: Path, claims: Sequence[str], ref: str = "HEAD") -> set[str]:
    """Which of `claims` some memory file in `ref`'s tree holds (read from git, not from memhtml)."""
    found: set[str] = set()
    for claim in claims:
        hit = subprocess.run(
            ["git", "-C", str(root), "grep", "-l", "-F", "-e", claim, ref, "--", "projects", "areas", "resources"],
            capture_output=True,
            env=bench.env,
            check=False,
        )
        if hit.returncode == 0:
            found.add(claim)
    return found


def clean_tree(bench: Bench, root: Path) -> bool:
    return bench.git(root, "status", "--porcelain", "--untracked-files=all") == ""


def loose_object(root: Path, object_id: str) -> Path:
    return root / ".git" / "objects" / object_id[:2] / object_id[2:]


@contextmanager
def scratch_directory() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="memhtml-faults-"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


Scenario = Callable[[Bench, int], Tally]


def scenarios() -> dict[str, tuple[Scenario, int, int]]:
    """Every scenario, with its tries at the small scale (`make test`) and the large one (`make stress`)."""
    from tests.faults import environment_faults, git_faults

    return {**git_faults.SCENARIOS, **environment_faults.SCENARIOS}


def run_scenarios(memhtml: Sequence[str], names: Sequence[str], *, large: bool) -> list[Tally]:
    table = scenarios()
    tallies = []
    for name in names:
        scenario, small, big = table[name]
        with scratch_directory() as scratch:
            started = time.monotonic()
            tally = scenario(Bench(memhtml, scratch), big if large else small)
            tally.notes.append(f"{time.monotonic() - started:.0f} s")
            tallies.append(tally)
            print(f"{name}: {tally}", file=sys.stderr, flush=True)
    return tallies


def markdown(tallies: Sequence[Tally]) -> str:
    lines = ["| fault | tries | failures | memories lost | notes |", "|---|---:|---:|---:|---|"]
    lines += [
        f"| {tally.fault} | {tally.tries} | {tally.failures} | {tally.lost} | {'; '.join(tally.notes)} |"
        for tally in tallies
    ]
    return "\n".join(lines)


def main(arguments: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memhtml", default=str(Path(sys.executable).with_name("memhtml")), help="the executable")
    parser.add_argument("--scale", choices=("small", "large"), default="small")
    parser.add_argument("scenario", nargs="*", help="scenarios to run (all by default)")
    parsed = parser.parse_args(arguments)
    names = parsed.scenario or list(scenarios())
    tallies = run_scenarios([parsed.memhtml], names, large=parsed.scale == "large")
    print(markdown(tallies))
    for tally in tallies:
        for what in tally.failed_tries:
            print(f"- {tally.fault}: {what}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
