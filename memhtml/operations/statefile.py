"""`state export` and `state import`: the committed sidecar `.memhtml/state/access.jsonl`, the only
durable copy of the access counters (the state database is not rebuildable from the tree)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final, TypedDict

from memhtml.contracts.errors import InvalidMemory
from memhtml.contracts.paths import is_memory_path
from memhtml.index.access import access_rows, merge_access_row
from memhtml.index.database import open_database
from memhtml.operations.indexing import fresh_index
from memhtml.store.commit import commit_message, commit_subject
from memhtml.store.generated_files import commit_generated_file
from memhtml.store.repository import open_store

SIDECAR_PATH: Final[str] = ".memhtml/state/access.jsonl"


class StateExport(TypedDict):
    """What `state export` wrote: the sidecar's path, rows and size, and the commit (None: unchanged)."""

    path: str
    rows: int
    bytes: int
    written: bool
    commitSha: str | None


class StateImport(TypedDict):
    """What `state import` replayed: the sidecar's rows, how many were restored or skipped."""

    path: str
    rows: int
    restored: int
    skipped: int
    hasState: bool


class AccessRecord(TypedDict):
    """One sidecar row, checked, as the parameters of the statement that merges it into the state database."""

    path: str
    access_count: int
    reinforcement_count: int
    outcome_score: float
    last_accessed_at: str | None
    last_reinforced_at: str | None
    updated_at: str


def export_state(root: Path) -> StateExport:
    """Write every access row, sorted by path, one JSON object a line (byte-stable), and commit it."""
    store = open_store(root)
    with fresh_index(store) as database:
        rows = access_rows(database)
    lines = [json.dumps(row, ensure_ascii=False, sort_keys=False) for row in rows]
    text = "".join(line + "\n" for line in lines)
    message = commit_message(commit_subject("state", f"export {len(rows)} access rows to the committed sidecar"))
    sha = commit_generated_file(store, SIDECAR_PATH, text, message)
    return {
        "path": SIDECAR_PATH,
        "rows": len(rows),
        "bytes": len(text.encode("utf-8")),
        "written": sha is not None,
        "commitSha": sha,
    }


def import_state(root: Path) -> StateImport:
    """Replay the sidecar into the state database; each counter keeps the larger of the two values."""
    store = open_store(root)
    sidecar = store.root / SIDECAR_PATH
    if not sidecar.is_file():
        return {"path": SIDECAR_PATH, "rows": 0, "restored": 0, "skipped": 0, "hasState": False}
    records, skipped = _read_sidecar(sidecar)
    with open_database(store.root) as database, database.transaction():
        for record in records:
            merge_access_row(database, record)
    return {
        "path": SIDECAR_PATH,
        "rows": len(records) + skipped,
        "restored": len(records),
        "skipped": skipped,
        "hasState": True,
    }


def sidecar_problem(root: Path) -> str | None:
    """Why the committed sidecar cannot be imported, or None when it can (or there is none)."""
    sidecar = root / SIDECAR_PATH
    if not sidecar.is_file():
        return None
    try:
        _read_sidecar(sidecar)
    except InvalidMemory as failure:
        return failure.message
    return None


def _read_sidecar(sidecar: Path) -> tuple[list[AccessRecord], int]:
    """The sidecar's rows as statement parameters, and how many were skipped: a row about a path no
    memory can have (`../x`, `.git/config`), which would never be read, or whose counters are not numbers.
    A line that is not JSON at all is refused: the file is damaged, and `state export` writes it anew."""
    refusal = ["memhtml state export"]
    try:
        text = sidecar.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidMemory(f"{SIDECAR_PATH} is not UTF-8 text", refusal) from None
    records: list[AccessRecord] = []
    skipped = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidMemory(f"{SIDECAR_PATH} line {number} is not JSON ({error.msg})", refusal) from None
        path = record.get("path") if isinstance(record, dict) else None
        if not isinstance(path, str) or not is_memory_path(path):
            skipped += 1
            continue
        instants = [record.get(name) for name in ("last_accessed_at", "last_reinforced_at", "updated_at")]
        if not all(value is None or isinstance(value, str) for value in instants):
            skipped += 1
            continue
        try:
            records.append(
                {
                    "path": path,
                    "access_count": max(int(record.get("access_count") or 0), 0),
                    "reinforcement_count": max(int(record.get("reinforcement_count") or 0), 0),
                    "outcome_score": max(-1.0, min(1.0, float(record.get("outcome_score") or 0))),
                    "last_accessed_at": record.get("last_accessed_at"),
                    "last_reinforced_at": record.get("last_reinforced_at"),
                    "updated_at": record.get("updated_at") or "",
                }
            )
        except (TypeError, ValueError, OverflowError):
            skipped += 1
    return records, skipped
