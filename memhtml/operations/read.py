"""The `read` use case: one memory's metas, links, article and format warnings, confined to the corpus;
and the pinned read of a memory as a commit holds it (a citation that cannot move)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, NotRequired, TypedDict

from memhtml.contracts.errors import InvalidMemory, PathNotFound, UsageError
from memhtml.contracts.paths import confine_memory_path, is_archived_path
from memhtml.html.document import ParsedMemory, parse_memory
from memhtml.html.validate import check_memory
from memhtml.operations.indexing import record_access
from memhtml.store.files import LinkedPath, read_regular_file
from memhtml.store.gitread import GitCorpusReader
from memhtml.store.repository import open_store

if TYPE_CHECKING:
    from memhtml.operations.indexing import CommandWarning

# Only commands that exist are suggested; `resolve` and `search` join once they are built.
_NOT_FOUND_SUGGESTIONS = ["memhtml status"]


class MemoryMetas(TypedDict):
    """A memory's metas as `read` shows them: the four every memory states, then those it states at all."""

    memoryType: str | None
    status: str | None
    createdAt: str | None
    updatedAt: str | None
    confidence: NotRequired[float]
    importance: NotRequired[int]
    contentHash: NotRequired[str]
    author: NotRequired[str]
    sessionId: NotRequired[str]
    promptId: NotRequired[str]
    turnUuid: NotRequired[str]
    validFrom: NotRequired[str]
    validUntil: NotRequired[str]
    reprieves: NotRequired[int]
    archivedAt: NotRequired[str]
    supersededBy: NotRequired[str]
    needsRevision: NotRequired[bool]
    taskStatus: NotRequired[str]
    dueAt: NotRequired[str]


class MemoryLink(TypedDict):
    """One link of a memory: its rel (underscore form) and its href as written."""

    rel: str
    href: str


class MemoryDetail(TypedDict):
    """The `memory.detail` data: one memory's metas, entities, tags, links, article and format warnings."""

    path: str
    title: str
    metas: MemoryMetas
    entities: list[str]
    tags: list[str]
    links: list[MemoryLink]
    gist: str
    body: str
    html: str
    archived: bool
    warnings: list[str]
    index: NotRequired[CommandWarning]  # the read could not be counted as an access


class PinnedMemoryDetail(MemoryDetail):
    """The `memory.detail` data of a memory as a commit holds it, with the full sha of that commit."""

    commit: str


def read(
    root: Path,
    raw_path: str,
    session_id: str | None = None,
    prompt_id: str | None = None,
    turn_uuid: str | None = None,
) -> MemoryDetail:
    """The `memory.detail` data of the memory at `raw_path`; the read is counted as an access."""
    path = confine_memory_path(raw_path, "read")
    store = open_store(root)
    try:
        data = read_regular_file(store.root, path)
    except LinkedPath as link:
        raise PathNotFound(
            f"no memory at {path}: {link.component} is a symbolic link, and memories are read only inside the "
            "store, never through a link",
            [f"ls -ld {link.component}", *_NOT_FOUND_SUGGESTIONS],
        ) from None
    if data is None:
        raise PathNotFound(f"no memory at {path}", [f"memhtml resolve {path}", *_NOT_FOUND_SUGGESTIONS])
    try:
        # Universal newlines, as the text-mode read of the working-tree file always did.
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError:
        raise InvalidMemory(f"invalid memory: {path} is not UTF-8 text", ["memhtml manifest"]) from None
    check = check_memory(text)
    if check.violations:
        raise InvalidMemory("invalid memory: " + "; ".join(check.violations), ["memhtml manifest"])
    detail = memory_detail(path, parse_memory(text), check.warnings)
    warning = record_access(store, path, session_id, prompt_id, turn_uuid)
    if warning is not None:
        detail["index"] = warning
    return detail


def memory_detail(path: str, memory: ParsedMemory, warnings: Sequence[str]) -> MemoryDetail:
    metas = _metas(memory)
    return {
        "path": path,
        "title": memory.title,
        "metas": metas,
        "entities": list(memory.entities),
        "tags": list(memory.tags),
        "links": [{"rel": rel, "href": href} for rel, href in memory.links],
        "gist": memory.gist,
        "body": memory.body_text,
        "html": memory.article_inner_html,
        "archived": is_archived_path(path),
        "warnings": list(warnings),
    }


def _metas(memory: ParsedMemory) -> MemoryMetas:
    """The four metas every memory states, then, in this order, each optional one the memory states."""
    metas: MemoryMetas = {
        "memoryType": memory.memory_type,
        "status": memory.status,
        "createdAt": memory.created,
        "updatedAt": memory.updated,
    }
    if memory.confidence is not None:
        metas["confidence"] = memory.confidence
    if memory.importance is not None:
        metas["importance"] = memory.importance
    if memory.stated_content_hash is not None:
        metas["contentHash"] = memory.stated_content_hash
    if memory.author is not None:
        metas["author"] = memory.author
    if memory.session is not None:
        metas["sessionId"] = memory.session
    if memory.prompt is not None:
        metas["promptId"] = memory.prompt
    if memory.turn is not None:
        metas["turnUuid"] = memory.turn
    if memory.valid_from is not None:
        metas["validFrom"] = memory.valid_from
    if memory.valid_until is not None:
        metas["validUntil"] = memory.valid_until
    if memory.reprieves is not None:
        metas["reprieves"] = memory.reprieves
    if memory.archived_at is not None:
        metas["archivedAt"] = memory.archived_at
    if memory.superseded_by is not None:
        metas["supersededBy"] = memory.superseded_by
    if memory.needs_revision is not None:
        metas["needsRevision"] = memory.needs_revision
    if memory.task_status is not None:
        metas["taskStatus"] = memory.task_status
    if memory.due is not None:
        metas["dueAt"] = memory.due
    return metas


# A commit is named by its hex object name only: a branch or `HEAD` moves, and a pinned citation must not.
PINNED_COMMIT: Final = re.compile(r"^[0-9a-f]{7,64}$")


def read_at(root: Path, commit: str, raw_path: str) -> PinnedMemoryDetail:
    """The `memory.detail` data of `raw_path` in `commit`, plus the full `commit` sha it was read from."""
    if not PINNED_COMMIT.match(commit):
        raise UsageError(
            "ERR_INVALID_FLAG",
            f"read: `{commit}` is not a commit sha: a pinned read names 7 to 64 lowercase hex digits, "
            "never HEAD or a branch, because those move",
            ["memory_resolve <path> (its pinned_uri names the commit)", "git log --oneline"],
        )
    path = confine_memory_path(raw_path, "read")
    store = open_store(root)
    reader = GitCorpusReader(store.root)
    resolved = reader.resolve_commit(commit)
    if resolved is None:
        raise PathNotFound(f"no commit {commit} in this store", ["git log --oneline", "memory_resolve <path>"])
    sha = resolved[0]
    # The commit's tree entry, regular files only: a symbolic link committed at `path` is not a memory.
    blob = reader.tree(sha, [path]).get(path)
    data = reader.blobs([blob]).get(blob) if blob is not None else None
    text = data.decode("utf-8", "replace") if data is not None else None
    if text is None:
        raise PathNotFound(f"no memory at {path} in commit {sha}", [f"git log --oneline -- {path}"])
    check = check_memory(text)
    if check.violations:
        raise InvalidMemory("invalid memory: " + "; ".join(check.violations), ["memhtml manifest"])
    return {**memory_detail(path, parse_memory(text), check.warnings), "commit": sha}
