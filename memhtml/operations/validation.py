"""`validate`: memory files judged as they stand, in the working tree or staged in the git index, by the
checks every write runs (`filejudgment`), with every violation of every file in one report.

The paths it is given are confined to the store before anything is opened (exit 2 for one outside it,
through `..`, or inside `.git` or `.memhtml`); `validation_sources` finds the files. A clean run
answers `validate.report`; any violation fails with ERR_INVALID_MEMORY (exit 1) carrying the same
report under `data`, as a failed gate does. Nothing is ever written.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, TypedDict

from memhtml.contracts.errors import InvalidMemory, UsageError
from memhtml.index.parallel import CHUNK_FILES, in_order, projection_pool
from memhtml.operations.filejudgment import (
    Candidate,
    CandidateStream,
    Judgment,
    ProblemEntry,
    Skipped,
    judge_files,
    shown_path,
)
from memhtml.operations.validation_sources import open_repository, staged_sources, worktree_sources

if TYPE_CHECKING:
    from memhtml.operations.indexing import SkippedPath

# Directories of the store that hold no memories: git's own, and the index and state databases.
_PRIVATE: Final[tuple[str, ...]] = (".git", ".memhtml")
_LISTED_PATHS: Final[int] = 3  # paths the suggestions name


class ValidationReport(TypedDict):
    """The `validate.report` data."""

    source: Literal["index", "worktree"]
    checked: int
    invalid: int
    violations: list[ProblemEntry]
    warnings: list[ProblemEntry]
    skipped: list[SkippedPath]  # files that are no memory: outside the buckets, not `.html`


def validate(root: Path, raw_paths: Sequence[str], *, staged: bool) -> ValidationReport:
    """The `validate.report` data for `raw_paths` (none: every memory under the buckets, or everything
    staged), or `InvalidMemory` carrying it when any file has a violation."""
    targets = [confined_target(raw, root) for raw in raw_paths]
    repository = open_repository(root)
    if staged:
        candidates, skipped = staged_sources(repository, targets)
    else:
        candidates, skipped = worktree_sources(repository, targets)
    return validate_candidates(candidates, skipped, staged=staged)


def confined_target(raw: str, root: Path) -> str:
    """The store-relative path `raw` names ("" for the store itself), refused at exit 2 before any I/O
    when it leaves the store or enters a directory that holds no memories.

    A relative path is relative to the store root, as every memhtml path is (pre-commit and git hooks
    run at the root, so the paths they pass are too); an absolute one must lie inside the root."""
    if "\0" in raw:
        raise _outside(raw, "it contains a NUL byte")
    if not raw.strip():
        raise _outside(raw, "it names nothing")
    relative = raw
    if raw.startswith("/"):
        inside = _relative_to(Path(raw), root)
        if inside is None:
            raise _outside(raw, "it is outside the store")
        relative = inside
    segments = [segment for segment in relative.split("/") if segment not in ("", ".")]
    if ".." in segments:
        raise _outside(raw, "it has a `..` segment")
    if any(segment.lower() == ".git" for segment in segments) or segments[:1] == [".memhtml"]:
        raise _outside(raw, "it is inside .git or .memhtml, which hold no memories")
    return "/".join(segments)


def _relative_to(path: Path, root: Path) -> str | None:
    """`path` relative to `root` as given or, failing that, to the root with its links resolved."""
    for base in (root, root.resolve()):
        if path == base or path.is_relative_to(base):
            return path.relative_to(base).as_posix()
    return None


def _outside(raw: str, reason: str) -> UsageError:
    shown = raw.replace("\0", "\\0")
    return UsageError(
        "ERR_INVALID_FLAG",
        f"validate: `{shown}` is refused: {reason}. Paths are relative to the store root (or absolute inside it)",
        ["memhtml validate", "memhtml validate resources/", "memhtml validate --repo <store> <path>"],
        command="validate",
    )


def validate_candidates(candidates: CandidateStream, skipped: Sequence[Skipped], *, staged: bool) -> ValidationReport:
    """Judge `candidates`; the `validate.report` data, or `InvalidMemory` carrying it."""
    judgment = Judgment()
    _judge_on_every_core(candidates, judgment)
    data = report(judgment, skipped, staged=staged)
    if judgment.violations:
        raise refusal(data, judgment, staged=staged)
    return data


def _judge_on_every_core(candidates: CandidateStream, judgment: Judgment) -> None:
    """Judge every file, in order: in worker processes for a large store (the checks are pure Python,
    and a large store's take a long time on one core), a few slices read ahead of the judging, so a
    store's files are never all in memory at once."""
    with projection_pool(candidates.total) as pool:
        for _, found in in_order(pool, _slices(candidates.files, CHUNK_FILES), judge_files):
            for violations, warnings in found:
                judgment.add(violations, warnings)


def _slices(files: Iterator[Candidate], size: int) -> Iterator[list[Candidate]]:
    while chunk := list(itertools.islice(files, size)):
        yield chunk


def report(judgment: Judgment, skipped: Sequence[Skipped], *, staged: bool) -> ValidationReport:
    """The `validate.report` data: what was read, how many files were judged and how many of them are
    invalid, every violation (`{path, reason, code, line?}`), every warning, every file skipped."""
    return {
        "source": "index" if staged else "worktree",
        "checked": judgment.checked,
        "invalid": judgment.invalid_files,
        "violations": [problem.as_data() for problem in judgment.violations],
        "warnings": [problem.as_data(with_code=False) for problem in judgment.warnings],
        "skipped": [{"path": shown_path(item.path), "reason": item.reason} for item in skipped],
    }


def refusal(data: ValidationReport, judgment: Judgment, *, staged: bool) -> InvalidMemory:
    """The failure carrying the whole report when any file has a violation (exit 1)."""
    first = judgment.violations[0]
    count = len(judgment.violations)
    files = judgment.checked
    message = (
        f"{count} violation{'s' if count != 1 else ''} in {judgment.invalid_files} of {files} "
        f"{'staged ' if staged else ''}memory file{'s' if files != 1 else ''}; the first: {first.path}: {first.reason}"
    )
    paths = list(dict.fromkeys(problem.path for problem in judgment.violations))[:_LISTED_PATHS]
    if staged:
        suggestions = [*(f"git diff --cached -- {path}" for path in paths), "memhtml validate --staged"]
    else:
        suggestions = [f"memhtml validate {' '.join(paths)}"]
    error = InvalidMemory(message, suggestions)
    error.data = data
    return error
