"""A memory's life from git alone: the commits that touched it (following moves) and its file at HEAD.

One `git log --follow` answers the history; the supersedes chain is read from the files' own
`memhtml-supersedes` links and `memhtml-superseded-by` metas at HEAD, never from the index.
"""

from __future__ import annotations

from typing import NamedTuple

from memhtml.store.gitcmd import run_git
from memhtml.store.gitread import GitCorpusReader
from memhtml.store.repository import Store

_FIELD = "\x1f"
_RECORD = "\x1e"


class Touch(NamedTuple):
    """One commit in a memory's history, with the path the memory had in it."""

    commit: str
    author: str
    author_email: str
    authored_at: str
    subject: str
    trailers: dict[str, str]
    status: str  # A, M, R (moved), C (copied), D
    path: str


def memory_history(store: Store, path: str) -> list[Touch]:
    """Newest first, following renames, so an archived memory's history reaches its first write."""
    pretty = _RECORD + _FIELD.join(["%H", "%an", "%ae", "%aI", "%s", "%(trailers:only,unfold)"]) + _FIELD
    output = run_git(
        store.root,
        ["log", "--follow", "-M", f"--format={pretty}", "--name-status", "-z", "HEAD", "--", path],
        ok_statuses=(0, 128),
    ).stdout.decode("utf-8", "replace")
    touches: list[Touch] = []
    for record in output.split(_RECORD):
        if not record.strip("\0\n"):
            continue
        fields = record.split(_FIELD)
        if len(fields) < 7:
            continue
        commit, author, email, date, subject, trailer_text, changes = fields[:7]
        names = [name for name in changes.strip("\0\n").split("\0") if name]
        status, touched = ("M", path)
        if names:
            status = names[0][:1]
            touched = names[-1]
        touches.append(Touch(commit, author, email, date, subject, _trailers(trailer_text), status, touched))
    return touches


def _trailers(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip():
            found.setdefault(key.strip(), value.strip())
    return found


def read_versions(store: Store, specs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The text of each `(commit, path)` that exists, in one `cat-file --batch` call."""
    found = GitCorpusReader(store.root).blobs(f"{commit}:{path}" for commit, path in specs)
    return {
        (commit, path): data.decode("utf-8", "replace")
        for commit, path in specs
        if (data := found.get(f"{commit}:{path}")) is not None
    }
