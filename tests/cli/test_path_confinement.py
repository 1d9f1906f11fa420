"""Every path a command names stays inside the corpus: hostile values against every path door of the CLI.

A value that the path alone condemns (`..`, an absolute path, `.git/`, `.memhtml/`, a hidden segment,
NUL and control characters, backslashes, percent-encoded dots and separators, a directory, a file
that is not `.html`) is refused at exit 2 with ERR_INVALID_FLAG before the store is opened. An
absolute path is refused even when it points inside the store: a leading `/` names the store's root,
as a memory's hrefs do, never the file system. What only the file system reveals (a symbolic link,
a directory where a file should be, an archived or missing memory) is refused with the code the
command already answers for it (exit 1), before anything is read through the link or written.
`write --path` and an `apply` op's `path` keep their documented contract: an unusable path is
re-placed by the placement rule, or refused with ERR_INVALID_MEMORY under `--strict-path`.

After every refusal: the outside secret appears in no output, nothing outside the store changed, HEAD
and `git status` are unchanged, and no access or session row names the refused path. The bulk runs
in this process through the CLI's own entry point; a representative subset runs the real executable.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memhtml.cli.entry import run
from memhtml.contracts.errors import UsageError
from memhtml.contracts.paths import confine_memory_path, named_path_problem
from memhtml.operations.write import WriteRequest, place_memory
from tests.conftest import git, memory_files, run_cli

SECRET = "OUTSIDE-SECRET-4b1d9e7c"
YEAR = dt.datetime.now(dt.UTC).year
PNF, INVALID_FLAG, INVALID_MEMORY, CONFLICT = (
    "ERR_PATH_NOT_FOUND",
    "ERR_INVALID_FLAG",
    "ERR_INVALID_MEMORY",
    "ERR_WRITE_CONFLICT",
)


@dataclass
class Result:
    status: int
    stdout: str
    stderr: str

    @property
    def code(self) -> str | None:
        envelope = json.loads(self.stdout)
        return envelope.get("code") if isinstance(envelope, dict) else None


def cli(*argv: str) -> Result:
    """One command line through the CLI's entry point in this process (stdout piped: JSON)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(list(argv))
    return Result(status, out.getvalue(), err.getvalue())


@dataclass
class Corpus:
    root: Path
    outside: Path
    memory: str
    other: str
    task: str
    archived: str
    legit: set[str] = field(default_factory=set)

    def repo(self, *argv: str) -> Result:
        return cli(*argv, "--repo", str(self.root))


def snapshot(directory: Path) -> dict[str, str]:
    """Everything under `directory` (links not followed): names, kinds and bytes."""
    found: dict[str, str] = {}
    for current, directories, files in os.walk(directory):
        for name in directories + files:
            path = Path(current) / name
            relative = str(path.relative_to(directory))
            if path.is_symlink():
                found[relative] = "link:" + os.readlink(path)
            elif path.is_dir():
                found[relative] = "dir"
            else:
                found[relative] = path.read_bytes().decode("utf-8", "replace")
    return found


def secret_memory_text() -> str:
    """A valid memory file whose claim is the secret: a read that followed a link would print it."""
    request = WriteRequest(title="Outside", memory_type="semantic", claim=f"The vault word is {SECRET}.")
    return place_memory(request, dt.datetime.now(dt.UTC)).file_text


def tree_state(root: Path) -> tuple[str, str, list[str]]:
    return (
        git(root, "rev-parse", "HEAD"),
        git(root, "status", "--porcelain", "--untracked-files=all"),
        memory_files(root),
    )


def state_paths(root: Path) -> set[str]:
    """Every path the access counters and session links name."""
    from memhtml.index.database import open_database

    with open_database(root, read_only=True) as database:
        rows = database.rows("SELECT path FROM state.access UNION SELECT path FROM state.session_links")
    return {str(row[0]) for row in rows}


def make_corpus(tmp_path: Path) -> Corpus:
    """A store with two memories, a task and an archived memory; an outside directory holding a
    secret memory; inside the store a file link and a directory link to it (untracked), a committed
    link to it, and a directory whose name ends in .html."""
    root = tmp_path / "store"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.html").write_text(secret_memory_text(), encoding="utf-8")
    assert cli("init", "--repo", str(root)).status == 0
    fact = ["--type", "semantic", "--session-id", "S-1"]
    for title, claim in (("Pool ceiling", "The pool holds 8."), ("Retry budget", "Retries are 3."), ("Old", "Gone.")):
        written = cli("write", "--repo", str(root), "--title", title, "--claim", claim, *fact)
        assert written.status == 0, written.stdout
    assert cli("task", "add", "--repo", str(root), "--title", "Ship it").status == 0
    assert cli("archive", "areas/inbox/old.html", "--repo", str(root), "--reason", "gone").status == 0
    corpus = Corpus(
        root=root,
        outside=outside,
        memory="areas/inbox/pool-ceiling.html",
        other="areas/inbox/retry-budget.html",
        task="areas/inbox/tasks/ship-it.html",
        archived=f"archive/{YEAR}/areas/inbox/old.html",
    )
    assert corpus.repo("read", corpus.memory, "--session-id", "S-1").status == 0
    (root / "areas" / "committed-link.html").symlink_to(outside / "secret.html")
    git(root, "add", "areas/committed-link.html")
    git(root, "commit", "-qm", "a link committed by hand")
    (root / "areas" / "escape.html").symlink_to(outside / "secret.html")
    (root / "areas" / "linked").symlink_to(outside, target_is_directory=True)
    (root / "areas" / "folder.html").mkdir()
    corpus.legit = {corpus.memory, corpus.other, corpus.task, corpus.archived, "areas/inbox/old.html"}
    return corpus


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    return make_corpus(tmp_path)


# ---------------------------------------------------------------- the hostile values

# Condemned by the path alone: exit 2 before the store is opened.
STRING_CASES: list[tuple[str, Callable[[Corpus], str]]] = [
    ("parent", lambda c: "../outside.html"),
    ("parent-through-bucket", lambda c: "areas/../../outside.html"),
    ("absolute-outside", lambda c: str(c.outside / "secret.html")),
    ("absolute-inside", lambda c: str(c.root / c.memory)),
    ("git-config", lambda c: ".git/config"),
    ("git-head", lambda c: ".git/HEAD"),
    ("index-database", lambda c: ".memhtml/index.duckdb"),
    ("hidden", lambda c: "areas/.hidden.html"),
    ("git-in-bucket", lambda c: "areas/.git/config.html"),
    ("nul", lambda c: "areas/x.html\x00.txt"),
    ("control", lambda c: "areas/x\x07.html"),
    ("backslashes", lambda c: "areas\\..\\..\\x.html"),
    ("backslashes-in-bucket", lambda c: "areas/..\\..\\outside.html"),
    ("backslashes-in-name", lambda c: "areas/x\\..\\..\\outside.html"),
    ("percent-dots", lambda c: "%2e%2e/outside.html"),
    ("percent-dots-in-bucket", lambda c: "areas/%2e%2e/%2E%2E/outside.html"),
    ("percent-slash-in-bucket", lambda c: "areas/..%2f..%2foutside.html"),
    ("bucket-directory", lambda c: "areas/inbox"),
    ("not-html", lambda c: "areas/inbox/notes.txt"),
    ("outside-buckets", lambda c: "README.html"),
]

# Revealed only by the file system (or the store): the command's own code, exit 1, before any I/O
# through the link. Door names map to the expected (status, code); a door left out is not hostile there.
_NOT_FOUND_EVERYWHERE = {
    door: (1, PNF)
    for door in ("read", "why", "archive", "correct", "link-src", "link-dst", "task-status", "neighbors", "reinforce")
}
FILESYSTEM_CASES: list[tuple[str, Callable[[Corpus], str], dict[str, tuple[int, str | None]]]] = [
    (
        "committed-link-out",
        lambda c: "areas/committed-link.html",
        {**_NOT_FOUND_EVERYWHERE, "resolve": (0, None), "write": (1, CONFLICT), "apply": (1, CONFLICT)},
    ),
    (
        "file-link-out",
        lambda c: "areas/escape.html",
        {**_NOT_FOUND_EVERYWHERE, "resolve": (0, None), "write": (1, CONFLICT), "apply": (1, CONFLICT)},
    ),
    (
        "through-directory-link",
        lambda c: "areas/linked/secret.html",
        # The same answer as for a name that is not out there: a write never tells what exists beyond a link.
        {**_NOT_FOUND_EVERYWHERE, "resolve": (0, None), "write": (1, INVALID_MEMORY), "apply": (1, INVALID_MEMORY)},
    ),
    (
        "new-file-under-directory-link",
        lambda c: "areas/linked/fresh.html",
        {**_NOT_FOUND_EVERYWHERE, "resolve": (0, None), "write": (1, INVALID_MEMORY), "apply": (1, INVALID_MEMORY)},
    ),
    (
        "directory",
        lambda c: "areas/folder.html",
        {**_NOT_FOUND_EVERYWHERE, "resolve": (0, None), "write": (1, CONFLICT), "apply": (1, CONFLICT)},
    ),
    (
        "already-archived",
        lambda c: c.archived,
        {
            "archive": (1, INVALID_MEMORY),
            "correct": (1, INVALID_MEMORY),
            "link-src": (1, INVALID_MEMORY),
            "task-status": (1, INVALID_MEMORY),
            "write": (1, INVALID_MEMORY),
            "apply": (1, INVALID_MEMORY),
        },
    ),
    ("missing", lambda c: "areas/inbox/nope.html", {**_NOT_FOUND_EVERYWHERE, "resolve": (0, None)}),
]


def door_lines(corpus: Corpus, path: str, ops_file: Path, serial: int) -> dict[str, list[str]]:
    """Every door of the CLI that takes a corpus path, with `path` in that place. The writes state a
    fact of their own (`serial`), so a write that got through is stored rather than deduplicated."""
    claim = f"Placed fact number {serial}."
    op = {"op": "write", "title": "Placed", "type": "semantic", "body": claim, "path": path}
    ops_file.write_text(json.dumps({**op, "strict_path": True}) + "\n", encoding="utf-8")
    placed = ["--title", "Placed", "--type", "semantic", "--claim", claim]
    return {
        "read": ["read", path],
        "why": ["why", path],
        "archive": ["archive", path, "--reason", "retire"],
        "correct": ["correct", path, "--title", "Pool v2", "--claim", "The pool holds 9."],
        "link-src": ["link", path, "relates_to", corpus.other],
        "link-dst": ["link", corpus.memory, "relates_to", path],
        "task-status": ["task", "status", path, "doing"],
        "neighbors": ["neighbors", path],
        "resolve": ["resolve", path],
        "reinforce": ["reinforce", path, "--signal", "positive"],
        "write": ["write", *placed, "--path", path, "--strict-path"],
        "apply": ["apply", "--file", str(ops_file)],
    }


def string_expectation(door: str) -> tuple[int, str]:
    # write --path and apply's `path` are documented: refused under strict_path as ERR_INVALID_MEMORY.
    return (1, INVALID_MEMORY) if door in ("write", "apply") else (2, INVALID_FLAG)


def check_refusal(corpus: Corpus, argv: list[str], expected: tuple[int, str | None]) -> list[str]:
    """The problems of one refused call, as readable lines (empty when it behaved)."""
    outside_before, tree_before = snapshot(corpus.outside), tree_state(corpus.root)
    answer = corpus.repo(*argv)
    label = repr(argv)
    problems = []
    try:
        got = (answer.status, answer.code)
    except json.JSONDecodeError:
        got = (answer.status, "<no envelope>")
    if got != expected:
        problems.append(f"{label}: answered {got}, expected {expected}: {answer.stdout[:300]}")
    if expected[0] != 0 and answer.status != 0:
        envelope = json.loads(answer.stdout)
        if not envelope.get("suggestions"):
            problems.append(f"{label}: refused without suggestions")
        if argv[0] in ("archive", "correct", "link", "task", "write", "apply") and envelope.get("stored") is not False:
            problems.append(f"{label}: a refused write must say stored: false")
    if SECRET in answer.stdout or SECRET in answer.stderr:
        problems.append(f"{label}: the outside secret appeared in the output")
    if snapshot(corpus.outside) != outside_before:
        problems.append(f"{label}: something changed outside the store")
    if tree_state(corpus.root) != tree_before:
        problems.append(f"{label}: HEAD, git status or the memory files changed")
    return problems


def test_every_path_door_refuses_every_hostile_value(corpus: Corpus, tmp_path: Path) -> None:
    ops_file = tmp_path / "ops.jsonl"
    problems: list[str] = []
    tried = 0
    for serial, (label, value) in enumerate(STRING_CASES):
        for door, argv in door_lines(corpus, value(corpus), ops_file, serial).items():
            tried += 1
            problems += [f"[{label}] {line}" for line in check_refusal(corpus, argv, string_expectation(door))]
    for serial, (label, value, expected) in enumerate(FILESYSTEM_CASES, start=len(STRING_CASES)):
        for door, argv in door_lines(corpus, value(corpus), ops_file, serial).items():
            if door in expected:
                tried += 1
                problems += [f"[{label}] {line}" for line in check_refusal(corpus, argv, expected[door])]
    assert tried >= 12 * len(STRING_CASES) + 50
    assert not problems, "\n".join(problems)
    assert not (corpus.root / "archive" / str(YEAR) / "archive").exists()  # never nested
    assert state_paths(corpus.root) <= corpus.legit


def test_every_hostile_value_is_refused_by_the_pure_check_with_a_reason() -> None:
    for label, value in STRING_CASES:
        raw = value(Corpus(Path("/srv/store"), Path("/srv/outside"), "areas/inbox/a.html", "", "", ""))
        assert named_path_problem(raw) is not None, label
        with pytest.raises(UsageError) as refused:
            confine_memory_path(raw, "read")
        assert refused.value.envelope_code == INVALID_FLAG and refused.value.suggestions, label
        assert "\x00" not in refused.value.message and "\x07" not in refused.value.message, label
    # Valid paths keep their meaning: a leading `/` (an href), doubled and trailing slashes.
    assert confine_memory_path("/areas//inbox/a.html/", "read") == "areas/inbox/a.html"
    assert confine_memory_path("archive/2026/areas/inbox/a%20b.html", "read") == "archive/2026/areas/inbox/a%20b.html"


def test_an_absolute_path_is_refused_with_a_hint_even_inside_the_store(corpus: Corpus) -> None:
    answer = corpus.repo("read", str(corpus.root / corpus.memory))
    assert answer.status == 2 and answer.code == INVALID_FLAG
    envelope = json.loads(answer.stdout)
    assert "relative to the store" in envelope["error"]
    assert any(corpus.memory in suggestion for suggestion in envelope["suggestions"])


def test_a_hostile_path_without_strict_path_is_placed_inside_the_store(corpus: Corpus, tmp_path: Path) -> None:
    """The documented default of `write --path` and `apply`: an unusable path is re-placed, never followed
    (a NUL or control character in any field is refused by the safety notary instead)."""
    placeable = [value(corpus) for label, value in STRING_CASES if label not in ("nul", "control")]
    ops = [
        {"op": "write", "title": f"Placed {index}", "type": "semantic", "body": f"Fact {index}.", "path": path}
        for index, path in enumerate(placeable)
    ]
    ops_file = tmp_path / "ops.jsonl"
    ops_file.write_text("".join(json.dumps(op) + "\n" for op in ops), encoding="utf-8")
    before = tree_state(corpus.root)
    planned = corpus.repo("apply", "--file", str(ops_file), "--dry-run")
    assert planned.status == 0, planned.stdout
    paths = [result["path"] for result in json.loads(planned.stdout)["data"]["results"]]
    assert paths == [f"areas/inbox/placed-{index}.html" for index in range(len(ops))]
    assert tree_state(corpus.root) == before
    outside_before = snapshot(corpus.outside)
    written = corpus.repo(
        "write", "--title", "Escapee", "--type", "semantic", "--claim", "Stays in.", "--path", "../x.html"
    )
    assert written.status == 0 and json.loads(written.stdout)["data"]["path"] == "areas/inbox/escapee.html"
    assert snapshot(corpus.outside) == outside_before and not (corpus.root.parent / "x.html").exists()


def test_a_directory_link_over_committed_memories_is_never_written_through(corpus: Corpus, tmp_path: Path) -> None:
    """The working tree swapped a committed directory for a link to an outside copy of it: the guard
    must refuse to rewrite, move or read what sits behind the link, even though the bytes match."""
    root = corpus.root
    fact = corpus.repo(
        "write", "--title", "Shared", "--type", "semantic", "--claim", "Shared.", "--workspace", "shared"
    )
    task = corpus.repo("task", "add", "--title", "Shared task", "--workspace", "shared")
    assert fact.status == 0 and task.status == 0
    fact_path, task_path = json.loads(fact.stdout)["data"]["path"], json.loads(task.stdout)["data"]["path"]
    copy = tmp_path / "outside" / "shared"
    (root / "projects" / "shared").rename(copy)
    (root / "projects" / "shared").symlink_to(copy, target_is_directory=True)
    ops_file = tmp_path / "ops.jsonl"
    ops_file.write_text(
        json.dumps({"op": "write", "title": "Routed", "type": "semantic", "body": "Routed.", "workspace": "shared"})
        + "\n"
    )
    cases = [
        (["archive", fact_path, "--reason", "x"], (1, INVALID_MEMORY)),
        (["correct", fact_path, "--title", "Shared v2", "--claim", "Shared twice."], (1, INVALID_MEMORY)),
        (["correct", fact_path, "--title", "Shared", "--claim", "Shared.", "--tag", "x"], (1, INVALID_MEMORY)),
        (["link", fact_path, "relates_to", corpus.memory], (1, INVALID_MEMORY)),
        (["task", "status", task_path, "doing"], (1, INVALID_MEMORY)),
        (["task", "status", task_path, "done"], (1, INVALID_MEMORY)),
        (["read", fact_path], (1, PNF)),
        # Answered from the index, which follows HEAD: nothing is read through the link.
        (["neighbors", fact_path], (0, None)),
        (["write", "--title", "Routed", "--type", "semantic", "--claim", "Routed.", "--workspace", "shared"],
         (1, INVALID_MEMORY)),
        (["task", "add", "--title", "Another", "--workspace", "shared"], (1, INVALID_MEMORY)),
        (["apply", "--file", str(ops_file)], (1, INVALID_MEMORY)),
    ]  # fmt: skip
    problems = [line for argv, expected in cases for line in check_refusal(corpus, argv, expected)]
    assert not problems, "\n".join(problems)
    assert sorted(path.name for path in copy.rglob("*.html")) == sorted([Path(fact_path).name, Path(task_path).name])


def test_representative_refusals_through_the_real_executable(corpus: Corpus) -> None:
    repo = ["--repo", str(corpus.root)]
    before = (snapshot(corpus.outside), tree_state(corpus.root))
    cases = [
        (["read", "../outside.html"], (2, INVALID_FLAG)),
        (["archive", ".git/config", "--reason", "x"], (2, INVALID_FLAG)),
        (["link", str(corpus.outside / "secret.html"), "relates_to", corpus.memory], (2, INVALID_FLAG)),
        (["correct", "areas/%2e%2e/x.html", "--title", "t", "--claim", "c"], (2, INVALID_FLAG)),
        (["read", "areas/escape.html"], (1, PNF)),
        (["archive", corpus.archived, "--reason", "again"], (1, INVALID_MEMORY)),
    ]
    for argv, expected in cases:
        answer = run_cli(*argv, *repo)
        assert (answer.status, answer.envelope.get("code")) == expected, answer.stdout
        assert answer.envelope["suggestions"], argv
        assert SECRET not in answer.stdout + answer.stderr
    assert (snapshot(corpus.outside), tree_state(corpus.root)) == before
