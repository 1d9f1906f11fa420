"""Retiring and relating committed memories: archive, correct (supersede), link and task status.

Each operation reads the committed file, refuses a working-tree copy with uncommitted changes, edits
the head by byte splices, and lands as one commit through a journaled transaction. Archiving is a
move into `archive/<YYYY>/`; when that path is already taken (a path reused and retired twice in one
year) the archived copy takes the same `-N` suffix a write would, instead of failing or nesting.
"""

from __future__ import annotations

from typing import NamedTuple

from memhtml.contracts.errors import InvalidMemory, MemhtmlError, PathNotFound
from memhtml.contracts.paths import is_archived_path
from memhtml.contracts.vocabulary import TASK_RELS, rel_token
from memhtml.html.document import ParsedMemory, parse_memory
from memhtml.html.headedit import add_link, set_meta
from memhtml.html.identity import Restatement, restate
from memhtml.store.archiving import archive_destination, archived_text, superseding_text
from memhtml.store.batch import ActiveOwners, PathClaimer, PlacedMemory
from memhtml.store.repository import Store
from memhtml.store.transaction import (
    Committed,
    FileChange,
    ModificationGuard,
    commit_changes,
    exclusive,
    read_committed,
)


class Retired(NamedTuple):
    path: str
    archive_path: str
    committed: Committed


class Corrected(NamedTuple):
    outcome: str  # written (a new file superseded the target) | updated | unchanged (see correct_memory)
    path: str
    archive_path: str | None
    committed: Committed | None
    changed: tuple[str, ...] = ()


def committed_memory(store: Store, path: str) -> tuple[str, ParsedMemory]:
    """The committed text of an active memory at `path`, refused when it is missing or modified."""
    text = read_committed(store, [path]).get(path)
    if text is None:
        raise PathNotFound(
            f"no committed memory at {path}",
            [f"memhtml resolve {path}", "memhtml list --include-archived"],
        )
    ModificationGuard(store).check(path, text)
    return text, parse_memory(text)


def archive_memory(store: Store, path: str, instant: str, message: str) -> Retired:
    """Move the active memory at `path` into the archive with its stamps, as one commit."""
    with exclusive(store):
        text, _ = committed_memory(store, path)
        destination = archive_destination(PathClaimer(store.root), path, int(instant[:4]))
        change = FileChange(destination, archived_text(text, instant), source=path)
        committed = commit_changes(store, [change], message)
    return Retired(path, destination, committed)


def correct_memory(
    store: Store,
    target: str,
    *,
    placed: PlacedMemory,
    restatement: Restatement,
    owners: ActiveOwners,
    instant: str,
    message: str,
    explicit_type: bool = True,
) -> Corrected:
    """Supersede `target` with `placed` in one commit: the new file (placed in the target's directory,
    whose own path counts as free) links to the target's archive path and starts its validity where
    the target's ends. The same article as the target is a restatement of it (updated/unchanged);
    the article of another active memory makes that memory the successor (no second copy)."""
    with exclusive(store):
        text, _ = committed_memory(store, target)
        found = owners([placed.content_hash]).get(placed.content_hash)
        owner = found.path if found is not None else None
        if owner == target:
            restated = restate(text, restatement, instant)
            if not restated.changed:
                return Corrected("unchanged", target, None, None)
            committed = commit_changes(store, [FileChange(target, restated.text, rewrite=True)], message)
            return Corrected("updated", target, None, committed, restated.changed)
        claimer = PathClaimer(store.root, vacating=frozenset({target}))
        destination = archive_destination(claimer, target, int(instant[:4]))
        changes: list[FileChange] = []
        changed: tuple[str, ...] = ()
        owner_text = read_committed(store, [owner]).get(owner) if owner is not None else None
        if owner is not None and owner_text is not None:
            successor, successor_text = owner, owner_text
            ModificationGuard(store).check(successor, successor_text)
            outcome = "updated"
            # The correction's head still applies to the memory that already says it (its type only
            # when the caller named one: the default is the target's, not a statement about this one).
            if not explicit_type:
                restatement = restatement._replace(memory_type=parse_memory(successor_text).memory_type or "")
            restated = restate(successor_text, restatement, instant)
            successor_text, changed = restated.text, (*restated.changed, "supersedes")
        else:
            successor = claimer.claim(placed.directory, placed.slug, placed.date_prefix)
            successor_text, outcome = placed.file_text, "written"
        successor_text, valid_from = superseding_text(successor_text, destination, instant)
        if outcome == "updated":
            successor_text = set_meta(successor_text, "memhtml-updated", instant)
        changes.append(FileChange(destination, archived_text(text, instant, successor, valid_from), source=target))
        changes.append(FileChange(successor, successor_text, rewrite=outcome == "updated"))
        committed = commit_changes(store, changes, message)
    return Corrected(outcome, successor, destination, committed, changed)


def link_memories(store: Store, source: str, rel: str, destination: str, message: str) -> Committed | None:
    """Add `<link rel=memhtml-<rel> href=/<destination>>` to `source` and commit; None when it is there."""
    if source == destination:
        raise InvalidMemory("invalid memory: a memory cannot link to itself", [f"memhtml neighbors {source}"])
    with exclusive(store):
        text, parsed = committed_memory(store, source)
        target_text = read_committed(store, [destination]).get(destination)
        if target_text is None:
            raise PathNotFound(f"no committed memory at {destination}", [f"memhtml resolve {destination}"])
        _check_endpoints(rel, source, parsed, destination, parse_memory(target_text))
        linked = add_link(text, rel_token(rel), "/" + destination)
        if linked == text:
            return None
        return commit_changes(store, [FileChange(source, linked, rewrite=True)], message)


def _check_endpoints(rel: str, source: str, parsed: ParsedMemory, destination: str, target: ParsedMemory) -> None:
    if is_archived_path(source):
        raise InvalidMemory(
            f"invalid memory: {source} is archived; link from the memory that carries the fact now",
            [f"memhtml resolve {source}"],
        )
    if rel in TASK_RELS:
        for path, memory in ((source, parsed), (destination, target)):
            if memory.memory_type != "task":
                raise InvalidMemory(
                    f"invalid memory: {rel} is a task rel and {path} is not a task: both endpoints must be tasks",
                    ["memhtml link <task> blocks <task>", f"memhtml link {source} relates_to {destination}"],
                )
        return
    for path, memory in ((source, parsed), (destination, target)):
        if memory.memory_type == "task":
            raise InvalidMemory(
                f"invalid memory: {rel} is a memory rel and {path} is a task: a task never enters the memory graph",
                [f"memhtml link {source} blocks {destination}"],
            )


class TaskMoved(NamedTuple):
    path: str
    status: str
    archive_path: str | None
    committed: Committed | None  # None: the task already had this status


def move_task(store: Store, path: str, status: str, instant: str, message_for: dict[str, str]) -> TaskMoved:
    """Set a task's status (one commit); `done` stamps it and archives it in that same commit."""
    with exclusive(store):
        text, parsed = committed_memory(store, path)
        if parsed.memory_type != "task":
            raise InvalidMemory(
                f"invalid memory: {path} is a {parsed.memory_type} memory, not a task",
                ["memhtml task list", f"memhtml read {path}"],
            )
        if is_archived_path(path):
            raise InvalidMemory(f"invalid memory: {path} is archived; its status is final", [f"memhtml read {path}"])
        if parsed.task_status == status:
            return TaskMoved(path, status, None, None)
        text = set_meta(set_meta(text, "memhtml-task-status", status), "memhtml-updated", instant)
        if status != "done":
            committed = commit_changes(store, [FileChange(path, text, rewrite=True)], message_for["task"])
            return TaskMoved(path, status, None, committed)
        destination = archive_destination(PathClaimer(store.root), path, int(instant[:4]))
        change = FileChange(destination, archived_text(text, instant), source=path)
        committed = commit_changes(store, [change], message_for["archive"])
    return TaskMoved(path, status, destination, committed)


def refuse_archived(path: str, live: str | None, command: str) -> MemhtmlError:
    """The refusal for retiring a memory that is already in the archive, naming where the fact lives now."""
    where = f"; the fact now lives at {live}" if live and live != path else ""
    suggestions = [f"memhtml {command} {live}"] if live and live != path else []
    return InvalidMemory(
        f"invalid memory: {path} is already archived{where}. Nothing was written",
        [*suggestions, f"memhtml resolve {path}"],
    )
