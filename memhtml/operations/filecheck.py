"""One stored file judged as `doctor` sorts it: the format check (what the index skips), what the write
doors would refuse (`filejudgment.unsafe_problems`: the safety notary, markup, the size limit), and the
store's own rules (memory paths, status against bucket, the stated content hash, unique articles).

`inspect_files` is pure and picklable, so a large store is checked in worker processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple, NotRequired, TypedDict

from memhtml.contracts.limits import MAX_MEMORY_BYTES
from memhtml.contracts.paths import is_archived_path, path_problem
from memhtml.html.document import document_parts, parse_memory_tree
from memhtml.html.parser import parse_document
from memhtml.html.validate import check_memory_tree
from memhtml.operations.filejudgment import INVALID, Problem, status_contradiction, unsafe_problems

SYMLINK_REASON: Final[str] = "a symbolic link: memories are plain files, and a link may point out of the store"

# (path, blob id, from the working tree, is a symlink, bytes or None when unreadable)
FileItem = tuple[str, str, bool, bool, bytes | None]


class UnsafeFinding(TypedDict):
    """What a write door would refuse in a stored file (never a secret's value), under that file."""

    reason: str
    code: str
    line: NotRequired[int]


class FileVerdict(NamedTuple):
    path: str
    blob: str
    in_worktree_only: bool
    memory: bool  # a path that can hold a memory (the index projects it when it has no violations)
    violations: Sequence[str] = ()
    warnings: Sequence[str] = ()
    unsafe: Sequence[UnsafeFinding] = ()
    stray_reason: str | None = None  # an `.html` file or a symlink in a bucket that is no memory
    status: str | None = None
    status_mismatch: bool = False
    stated_hash: str | None = None
    content_hash: str | None = None
    dedupes: bool = False  # an active non-task memory: its content hash must be unique


def inspect_files(items: Sequence[FileItem]) -> list[FileVerdict]:
    return [verdict for item in items if (verdict := inspect_file(*item)) is not None]


def inspect_file(
    path: str, blob: str, in_worktree_only: bool, symlink: bool, content: bytes | None
) -> FileVerdict | None:
    """The verdict on one file under a bucket; None for what is not ours to judge (`.gitkeep`, notes)."""
    if symlink:
        return FileVerdict(path, blob, in_worktree_only, False, stray_reason=SYMLINK_REASON)
    problem = path_problem(path)
    if problem is not None:
        if not path.endswith(".html"):
            return None
        return FileVerdict(path, blob, in_worktree_only, False, stray_reason=f"not a memory path: {problem}")
    if content is None:
        return FileVerdict(path, blob, in_worktree_only, True, violations=["the file could not be read"])
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as error:
        return FileVerdict(path, blob, in_worktree_only, True, violations=[f"not UTF-8 text (byte {error.start})"])
    tree = parse_document(text)
    unsafe = [_without_path(problem) for problem in unsafe_problems(path, text, tree)]
    if len(content) > MAX_MEMORY_BYTES:
        unsafe.append({"reason": f"{len(content)} bytes, over the {MAX_MEMORY_BYTES}-byte limit", "code": INVALID})
    parts = document_parts(tree)
    check = check_memory_tree(tree, parts)
    memory = parse_memory_tree(tree, parts)
    archived = is_archived_path(path)
    return FileVerdict(
        path,
        blob,
        in_worktree_only,
        True,
        violations=check.violations,
        warnings=check.warnings,
        unsafe=unsafe,
        status=memory.status,
        status_mismatch=status_contradiction(path, memory.status) is not None,
        stated_hash=memory.stated_content_hash,
        content_hash=memory.content_hash if not check.violations else None,
        dedupes=not check.violations and not archived and memory.memory_type != "task",
    )


def _without_path(problem: Problem) -> UnsafeFinding:
    """The report groups findings under their file; the path need not repeat in each."""
    finding: UnsafeFinding = {"reason": problem.reason, "code": problem.code}
    if problem.line is not None:
        finding["line"] = problem.line
    return finding
