"""One file judged as it stands, by the checks every write runs: the memory-path rules, the size limit,
the safety notary over its whole text (and over what its character references decode to), the format
check and the notary's markup rules.

A hand-edited file, or one another tool wrote, never passed the write doors; this is where it meets
them. Every violation is kept (never only the first), each with its reason and code; a secret is named
by kind, public prefix and length (the notary's `shown`), never by its value. Pure: no I/O.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple, NotRequired, TypedDict

from memhtml.contracts.limits import MAX_MEMORY_BYTES, size_words
from memhtml.contracts.paths import is_archived_path, path_problem
from memhtml.contracts.vocabulary import PARA_BUCKETS
from memhtml.domain.notary import (
    Finding,
    control_findings,
    invisible_findings,
    markup_violations,
    plainly_clear,
    secret_findings,
    shown,
)
from memhtml.html.document import DocumentParts, document_parts, parse_memory_tree
from memhtml.html.parser import parse_document
from memhtml.html.tree import Comment, Element, Node, Text, iter_elements, walk
from memhtml.html.validate import check_memory_tree

INVALID: Final[str] = "ERR_INVALID_MEMORY"
SECRET: Final[str] = "ERR_SECRET_DETECTED"
INVISIBLE: Final[str] = "ERR_INVISIBLE_CHARACTERS"
OUTSIDE_BUCKETS: Final[str] = "outside the PARA buckets (projects, areas, resources, archive): not a memory"
NOT_HTML: Final[str] = "not an .html file: not a memory"
# The head's own vocabulary: the notary's markup rules are about what an article may carry.
_HEAD_VOCABULARY: Final[frozenset[str]] = frozenset({"meta", "link", "title"})


class Candidate(NamedTuple):
    """One file to judge: its repo-relative path and its bytes (None when they could not be read)."""

    path: str
    content: bytes | None
    symlink: bool = False


class CandidateStream(NamedTuple):
    """The files to judge, read one by one as the judging asks for them, and how many there are."""

    files: Iterator[Candidate]
    total: int


class ProblemEntry(TypedDict):
    """A problem as a report lists it: its file, what is wrong, its code (violations only), its line."""

    path: str
    reason: str
    code: NotRequired[str]
    line: NotRequired[int]


class Problem(NamedTuple):
    """A violation (or a warning) of one file; `line` when the scan knows where it is."""

    path: str
    reason: str
    code: str = INVALID
    line: int | None = None

    def as_data(self, *, with_code: bool = True) -> ProblemEntry:
        data: ProblemEntry = {"path": self.path, "reason": self.reason}
        if with_code:
            data["code"] = self.code
        if self.line is not None:
            data["line"] = self.line
        return data


class Skipped(NamedTuple):
    """A file that is no memory (outside the buckets, not `.html`, a submodule), and why."""

    path: str
    reason: str


@dataclass
class Judgment:
    """What the checks found in the files judged so far."""

    checked: int = 0
    violations: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    @property
    def invalid_files(self) -> int:
        return len({problem.path for problem in self.violations})

    def add(self, violations: list[Problem], warnings: list[Problem]) -> None:
        """One more file judged, with what was found in it."""
        self.checked += 1
        self.violations += violations
        self.warnings += warnings


def skip_reason(path: str) -> str | None:
    """Why `path` is no memory to judge (outside the buckets, or not `.html`), or None to judge it."""
    segments = path.split("/")
    if len(segments) < 2 or segments[0] not in PARA_BUCKETS:
        return OUTSIDE_BUCKETS
    if not path.endswith(".html"):
        return NOT_HTML
    return None


def judge_files(candidates: Sequence[Candidate]) -> list[tuple[list[Problem], list[Problem]]]:
    """`judge_file` of each candidate, in order (a slice judged in a worker process)."""
    return [judge_file(candidate) for candidate in candidates]


def judge_file(candidate: Candidate) -> tuple[list[Problem], list[Problem]]:
    """Every violation and warning of one file under a bucket, in a stable order: the path, the bytes,
    the safety notary over the raw text, the format check, the notary's markup rules, what character
    references spell once decoded; then the warnings."""
    path = shown_path(candidate.path)
    violations: list[Problem] = []
    if path != candidate.path:
        violations.append(Problem(path, "its name is not valid UTF-8"))
    problem = path_problem(candidate.path)
    if problem is not None:
        violations.append(Problem(path, f"not a usable memory path: {problem}"))
    if candidate.symlink:
        violations.append(Problem(path, "a symbolic link: a memory is a plain file"))
        return violations, []
    if candidate.content is None:
        violations.append(Problem(path, "the file could not be read"))
        return violations, []
    content = candidate.content
    if len(content) > MAX_MEMORY_BYTES:
        violations.append(
            Problem(
                path,
                f"too large: {len(content)} bytes, and a memory file holds at most {MAX_MEMORY_BYTES} "
                f"({size_words(MAX_MEMORY_BYTES)}); a memory is one fact",
            )
        )
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as error:
        before = content[: error.start].decode("utf-8", "replace")
        line, column = _Lines(before).place(len(before))
        violations.append(Problem(path, f"not valid UTF-8 text: the first bad byte is at line {line}, column {column}"))
        text = content.decode("utf-8", "replace")
    tree = parse_document(text)
    parts = document_parts(tree)
    check = check_memory_tree(tree, parts)
    raw, markup, decoded = _unsafe_parts(path, text, tree)
    violations += raw
    violations += [Problem(path, reason) for reason in check.violations]
    violations += markup + decoded
    warnings = [Problem(path, reason) for reason in check.warnings]
    if not check.violations:
        warnings += _consistency_warnings(candidate.path, path, tree, parts)
    return violations, warnings


def unsafe_problems(path: str, text: str, tree: Element) -> list[Problem]:
    """What the write doors refuse in a stored file's text, apart from the format check: the notary's
    findings in the raw text, its markup rules, and what character references spell once decoded."""
    raw, markup, decoded = _unsafe_parts(path, text, tree)
    return raw + markup + decoded


def _unsafe_parts(path: str, text: str, tree: Element) -> tuple[list[Problem], list[Problem], list[Problem]]:
    raw = list(notary_problems(path, text))
    markup = [Problem(path, reason) for reason in markup_violations(_article_side_elements(tree))]
    decoded = _decoded_problems(path, tree, raw) if "&" in text else []
    return raw, markup, decoded


def shown_path(path: str) -> str:
    """`path` as a report can print it: a name that is not UTF-8 gets U+FFFD for each bad byte."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# ---------------------------------------------------------------- the safety notary


def notary_problems(path: str, text: str) -> Iterator[Problem]:
    """The notary's findings in `text` (a whole file as stored), each at its line and column."""
    if plainly_clear(text):
        return
    lines = _Lines(text)
    for finding, code, reason in _findings(text):
        line, column = lines.place(finding.start)
        yield Problem(path, f"{reason} at line {line}, column {column}", code, line)


def _findings(text: str) -> Iterator[tuple[Finding, str, str]]:
    """(finding, code, reason) for every secret, invisible character and control character in `text`.

    A secret is named by kind, public prefix and length (the notary's `shown`), never by its value."""
    for finding in secret_findings(text):
        yield finding, SECRET, f"secret detected: {finding.kind} ({shown(finding)})"
    for finding in invisible_findings(text):
        yield finding, INVISIBLE, f"invisible character {finding.kind}"
    for finding in control_findings(text):
        yield finding, INVALID, finding.kind


class _Lines:
    """Where each line of a text starts, so placing many findings costs a search each, not a scan."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *(match.end() for match in re.finditer("\n", text))]

    def place(self, offset: int) -> tuple[int, int]:
        """(line, column), both from 1, of `offset`."""
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1


def _decoded_problems(path: str, tree: Element, raw: Sequence[Problem]) -> list[Problem]:
    """What the file's character references spell once decoded (`ghp&#95;…`, `&#x200B;`): the stored
    text is what a reader and the index see, so a finding there that the raw bytes do not already show
    is a violation of its own."""
    texts = list(_decoded_texts(tree))
    if plainly_clear("\n".join(texts)):
        return []
    already = Counter((problem.code, problem.reason.rsplit(" at line ", 1)[0]) for problem in raw)
    found: list[Problem] = []
    for text in texts:
        for _finding, code, reason in _findings(text):
            key = (code, reason)
            if already[key] > 0:
                already[key] -= 1
                continue
            found.append(Problem(path, f"{reason} (written as a character reference)", code))
    return found


def _decoded_texts(tree: Element) -> Iterator[str]:
    """Every text node, comment and attribute value of the document, as the parser decoded them."""
    for entering, node in walk(_with_template_content([tree])):
        if not entering:
            continue
        if isinstance(node, Text | Comment):
            yield node.data
        else:
            yield from (value for _, value in node.attrs)


def _with_template_content(nodes: list[Node]) -> list[Node]:
    """`nodes` plus the inert content of every `<template>` below them (live again once copied out)."""
    extra: list[Node] = []
    pending = list(nodes)
    while pending:
        templates = [element for element in iter_elements(pending) if element.template_content]
        pending = [node for element in templates for node in element.template_content or []]
        extra += pending
    return nodes + extra


def _article_side_elements(tree: Element) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """(tag, attributes) of every element the notary's markup rules apply to: all of them but the head's
    own `<meta>`, `<link>` and `<title>`, template content included."""
    for element in iter_elements(_with_template_content([tree])):
        in_head = element.parent is not None and element.parent.tag == "head"
        if in_head and element.tag in _HEAD_VOCABULARY:
            continue
        yield element.tag, element.attrs


# ---------------------------------------------------------------- warnings


def _consistency_warnings(path: str, display: str, tree: Element, parts: DocumentParts) -> list[Problem]:
    """What a hand edit commonly leaves inconsistent without breaking the format: the stated content
    hash of an edited article, and a status that contradicts the bucket."""
    memory = parse_memory_tree(tree, parts)
    found: list[Problem] = []
    stated = memory.stated_content_hash
    if stated and stated != memory.content_hash:
        found.append(
            Problem(
                display,
                f'<meta name="memhtml-content-hash"> states {stated} but the article hashes to '
                f"{memory.content_hash}: the article changed after its hash was written",
            )
        )
    contradiction = status_contradiction(path, memory.status)
    if contradiction is not None:
        found.append(Problem(display, contradiction))
    return found


def status_contradiction(path: str, status: str | None) -> str | None:
    """How `memhtml-status` contradicts the bucket of `path` (archived-ness comes from the path), or None."""
    archived = is_archived_path(path)
    if status == "archived" and not archived:
        return "memhtml-status is archived outside archive/"
    if status == "active" and archived:
        return "memhtml-status is active inside archive/"
    return None
