"""The `why` use case: where a memory came from, from git and the files alone (no index).

The answer names the commit that wrote it and its author, the session/prompt/turn that produced it,
every commit that touched it since (moves included), and the chain of facts it replaced and that
replaced it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal, TypedDict

from memhtml.contracts.errors import PathNotFound
from memhtml.contracts.paths import confine_memory_path, is_archived_path
from memhtml.html.document import ParsedMemory, parse_memory
from memhtml.store.history import Touch, memory_history, read_versions
from memhtml.store.repository import Store, open_store
from memhtml.store.transaction import read_committed

MAX_CHAIN: Final[int] = 16


class HistoryTouch(TypedDict):
    """One commit that touched a memory: who, when, what it did to the file, and its provenance trailers."""

    commit: str
    author: str
    authorEmail: str
    at: str
    subject: str
    change: str
    path: str
    session: str | None
    prompt: str | None
    reason: str | None


class ChainedMemory(TypedDict):
    """A memory of a supersedes chain, read from its committed file: its title, gist and validity."""

    path: str
    title: str
    gist: str
    archived: bool
    validFrom: str | None
    validUntil: str | None
    missing: Literal[False]


class MissingChainLink(TypedDict):
    """The path a supersedes chain names but no committed file holds: where the chain ends."""

    path: str
    title: None
    missing: Literal[True]


class MemoryProvenance(TypedDict):
    """The `memory.why` data: a memory's stamps, the commit that wrote it, its history and its chain."""

    path: str
    title: str
    memoryType: str | None
    archived: bool
    createdAt: str | None
    updatedAt: str | None
    session: str | None
    prompt: str | None
    turn: str | None
    writtenBy: HistoryTouch | None
    history: list[HistoryTouch]
    predecessors: list[ChainedMemory | MissingChainLink]
    successors: list[ChainedMemory | MissingChainLink]


def why(root: Path, raw_path: str) -> MemoryProvenance:
    """`memory.why`: provenance, history and the supersedes chain of one committed memory."""
    path = confine_memory_path(raw_path, "why")
    store = open_store(root)
    text = read_committed(store, [path]).get(path)
    if text is None:
        raise PathNotFound(f"no committed memory at {path}", [f"memhtml resolve {path}", "memhtml list"])
    parsed = parse_memory(text)
    history = _own_history(store, parsed, memory_history(store, path))
    written = history[-1] if history else None
    return {
        "path": path,
        "title": parsed.title,
        "memoryType": parsed.memory_type,
        "archived": is_archived_path(path),
        "createdAt": parsed.created,
        "updatedAt": parsed.updated,
        "session": parsed.session,
        "prompt": parsed.prompt,
        "turn": parsed.turn,
        "writtenBy": _touch(written) if written else None,
        "history": [_touch(touch) for touch in history],
        "predecessors": _chain(store, parsed, forward=False),
        "successors": _chain(store, parsed, forward=True),
    }


def _own_history(store: Store, memory: ParsedMemory, touches: list[Touch]) -> list[Touch]:
    """The touches of this memory only. Following moves, git may also walk into the memory it
    replaced (a correction looks like a copy or a rewrite of the same path); a memory is its article,
    so the history ends where the article (or the creation stamp) was another one."""
    versions = read_versions(store, [(touch.commit, touch.path) for touch in touches if touch.status != "D"])
    own: list[Touch] = []
    for touch in touches:
        version = versions.get((touch.commit, touch.path))
        if version is not None:
            earlier = parse_memory(version)
            if earlier.created != memory.created or earlier.content_hash != memory.content_hash:
                break
        own.append(touch)
    return own


def _touch(touch: Touch) -> HistoryTouch:
    return {
        "commit": touch.commit,
        "author": touch.author,
        "authorEmail": touch.author_email,
        "at": touch.authored_at,
        "subject": touch.subject,
        "change": {"A": "added", "M": "modified", "R": "moved", "C": "copied", "D": "deleted"}.get(
            touch.status, touch.status
        ),
        "path": touch.path,
        "session": touch.trailers.get("Memhtml-Session"),
        "prompt": touch.trailers.get("Memhtml-Prompt"),
        "reason": touch.trailers.get("Memhtml-Reason"),
    }


def _chain(store: Store, start: ParsedMemory, *, forward: bool) -> list[ChainedMemory | MissingChainLink]:
    """Follow superseded-by (forward) or supersedes links (backward) hop by hop; a missing file or a
    cycle ends the chain, and a fork is followed along its first branch."""
    chain: list[ChainedMemory | MissingChainLink] = []
    seen: set[str] = set()
    current = start
    for _ in range(MAX_CHAIN):
        if forward:
            href = current.superseded_by
        else:
            href = next((target for rel, target in current.links if rel == "supersedes"), None)
        if not href:
            break
        path = href.lstrip("/")
        if path in seen:
            break
        seen.add(path)
        text = read_committed(store, [path]).get(path)
        if text is None:
            chain.append({"path": path, "title": None, "missing": True})
            break
        current = parse_memory(text)
        chain.append(
            {
                "path": path,
                "title": current.title,
                "gist": current.gist,
                "archived": is_archived_path(path),
                "validFrom": current.valid_from,
                "validUntil": current.valid_until,
                "missing": False,
            }
        )
    return chain
