"""The tree a commit gets by rewriting only the directories along its paths is, id for id, the tree the
whole-index way (`read-tree`, `update-index`, `write-tree`) builds, for any drawn set of changes:
new files in new and existing directories, edits, deletions (the last file of a directory too), names
with spaces and non-ASCII; and every case it does not handle is left to the whole-index way."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memhtml.store.commit import head_commit_and_tree
from memhtml.store.treesplice import MAX_SPLICED_DIRECTORIES, spliced_tree

SEED_FILES = [
    "areas/inbox/one.html",
    "areas/inbox/two.html",
    "areas/inbox/tasks/task one.html",
    "projects/payments/retry budget.html",
    "projects/payments/deep/er/still.html",
    "resources/people/zoë.html",
    "archive/2026/areas/inbox/old.html",
    "README.html",
]


def git(root: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> str:
    completed = subprocess.run(
        ["git", "-C", str(root), *args], input=stdin, capture_output=True, check=True, env={**os.environ, **(env or {})}
    )
    return completed.stdout.decode().strip()


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("splice") / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for number, path in enumerate(SEED_FILES):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"seed {number}\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e.invalid", "commit", "-qm", "seed")
    return root


def blob(root: Path, text: str) -> str:
    return git(root, "hash-object", "-w", "--stdin", stdin=text.encode())


def whole_index_tree(root: Path, parent_tree: str, records: bytes) -> str:
    index = root / ".git" / "test-splice-index"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        git(root, "read-tree", parent_tree, env=env)
        git(root, "update-index", "-z", "--index-info", stdin=records, env=env)
        return git(root, "write-tree", env=env)
    finally:
        index.unlink(missing_ok=True)


def records_of(changes: list[tuple[str, str | None]]) -> bytes:
    lines = [f"100644 {sha}\t{path}" if sha else f"0 {'0' * 40}\t{path}" for path, sha in changes]
    return "".join(line + "\0" for line in lines).encode("utf-8")


new_paths = st.sampled_from(
    [
        "areas/inbox/three.html",
        "areas/inbox/tasks/task two.html",
        "areas/new dir/first.html",
        "projects/payments/deep/er/still/deeper.html",
        "projects/growth/idea.html",
        "resources/people/ångström.html",
        "archive/2027/areas/inbox/one.html",
        "top.html",
        # Beside the directory `tasks`: git orders a directory's name as if it ended in "/", so these
        # sort before it ("." and "-" are below "/") or after it ("0" is above).
        "areas/inbox/tasks.html",
        "areas/inbox/tasks-list.html",
        "areas/inbox/tasks0.html",
        "areas/new dir.html",
    ]
)
change = st.one_of(
    st.tuples(st.sampled_from(SEED_FILES), st.sampled_from(["edit", "delete"])),
    st.tuples(new_paths, st.sampled_from(["edit", "delete"])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=st.lists(change, min_size=1, max_size=6))
def test_splicing_builds_the_whole_index_tree(repository: Path, drawn: list[tuple[str, str]]) -> None:
    _, parent_tree = head_commit_and_tree(repository)
    assert parent_tree is not None
    changes = [(path, blob(repository, f"{path} {action}\n") if action == "edit" else None) for path, action in drawn]
    records = records_of(changes)
    assert spliced_tree(repository, parent_tree, records) == whole_index_tree(repository, parent_tree, records)


def test_deleting_every_file_of_a_directory_drops_the_directory(repository: Path) -> None:
    _, parent_tree = head_commit_and_tree(repository)
    assert parent_tree is not None
    records = records_of([("projects/payments/deep/er/still.html", None)])
    tree = spliced_tree(repository, parent_tree, records)
    assert tree == whole_index_tree(repository, parent_tree, records)
    assert "deep" not in git(repository, "ls-tree", "--name-only", f"{tree}:projects/payments")


@pytest.mark.parametrize(
    "path",
    [
        "README.html/inside.html",  # a file where a directory must be
        "areas/inbox",  # a file written where a directory is
    ],
)
def test_a_file_against_a_directory_is_left_to_the_whole_index_way(repository: Path, path: str) -> None:
    _, parent_tree = head_commit_and_tree(repository)
    assert parent_tree is not None
    records = records_of([(path, blob(repository, "x\n"))])
    assert spliced_tree(repository, parent_tree, records) is None


def test_many_directories_at_once_are_left_to_the_whole_index_way(repository: Path) -> None:
    _, parent_tree = head_commit_and_tree(repository)
    assert parent_tree is not None
    sha = blob(repository, "many\n")
    records = records_of([(f"areas/d{number}/f.html", sha) for number in range(MAX_SPLICED_DIRECTORIES)])
    assert spliced_tree(repository, parent_tree, records) is None


@pytest.mark.parametrize(
    "path",
    [
        "projects//double.html",
        "projects/./dot.html",
        "projects/../up.html",
        "projects/.git/hidden.html",
        "projects/foo\r/carriage.html",
    ],
)
def test_a_path_git_would_refuse_or_misread_is_left_to_the_whole_index_way(repository: Path, path: str) -> None:
    _, parent_tree = head_commit_and_tree(repository)
    assert parent_tree is not None
    assert spliced_tree(repository, parent_tree, records_of([(path, blob(repository, "odd\n"))])) is None


def test_no_record_at_all_is_left_to_the_whole_index_way(repository: Path) -> None:
    _, parent_tree = head_commit_and_tree(repository)
    assert parent_tree is not None
    assert spliced_tree(repository, parent_tree, b"") is None


def raw_tree(root: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree object written byte for byte (git's own tools would normalize what these tests need)."""
    ordered = sorted(entries, key=lambda entry: entry[1] + ("/" if entry[0] == "40000" else ""))  # git's order
    body = b"".join(mode.encode() + b" " + name.encode() + b"\0" + bytes.fromhex(sha) for mode, name, sha in ordered)
    return git(root, "hash-object", "-t", "tree", "-w", "--literally", "--stdin", stdin=body)


@pytest.mark.parametrize("odd", ["a group-writable mode", "an empty subdirectory"])
def test_a_directory_git_would_normalize_is_left_to_the_whole_index_way(tmp_path: Path, odd: str) -> None:
    root = tmp_path / "odd"
    root.mkdir()
    git(root, "init", "-q")
    sha = blob(root, "kept\n")
    sibling = (
        ("100664", "legacy.html", sha) if odd == "a group-writable mode" else ("40000", "empty", raw_tree(root, []))
    )
    inner = raw_tree(root, [("100644", "kept.html", sha), sibling])
    top = raw_tree(root, [("40000", "areas", inner)])
    records = records_of([("areas/new.html", blob(root, "new\n"))])
    assert spliced_tree(root, top, records) is None
    assert whole_index_tree(root, top, records) != top  # the whole-index way still builds it
