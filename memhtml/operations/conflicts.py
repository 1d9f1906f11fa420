"""The conflict assist: typed findings for the ops of a write or batch, and the whole-store audit.

Candidates are the active, non-task memories (and earlier ops of the same batch) that share an
entity or a frame key with an op, found with one index query per batch; each pair is then typed by
the deterministic classifier in `domain.conflicts`. Report-only: nothing here changes what is written.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypedDict

from memhtml.contracts.paths import slugify
from memhtml.domain.conflicts import ClaimFacts, ConflictFinding, are_candidates, classify_pair
from memhtml.domain.frames import frame_key
from memhtml.html.document import parse_memory
from memhtml.index.claims import StoredClaim, all_active_claims, claims_sharing
from memhtml.index.database import Database
from memhtml.operations.indexing import fresh_index
from memhtml.store.repository import open_store

if TYPE_CHECKING:
    from memhtml.operations.write import WriteRequest
    from memhtml.store.batch import PlacedMemory

# An entity shared by more memories than this is a hub (`org:acme` on half the corpus): pairing
# every member would be quadratic, so the audit compares such a group only within its frame keys
# and reports how many groups it narrowed.
HUB_GROUP_LIMIT: Final[int] = 200

# A typed conflict finding: the stored memory (`path`) or earlier op of the batch (`batch_index`) it is
# against, that one's claim, its conflict class, the suggested action and the reason. The functional
# form, because `class` is a Python keyword no class body can declare.
ConflictEntry = TypedDict(
    "ConflictEntry",
    {"path": str | None, "batch_index": int | None, "claim": str, "class": str, "action": str, "reason": str},
)


class AuditFinding(ConflictEntry):
    """A conflict the audit found: the newer memory and its claim, then the finding against the older one."""

    newer: str
    newerClaim: str


class ConflictAudit(TypedDict):
    """The `conflicts.audit` data: how many memories and pairs were examined, and the findings."""

    scanned: int
    pairs: int
    reported: int
    narrowedGroups: int
    findings: list[AuditFinding]


def finding_entry(finding: ConflictFinding, claim: str, *, path: str | None, batch_index: int | None) -> ConflictEntry:
    return {
        "path": path,
        "batch_index": batch_index,
        "claim": claim,
        "class": finding.conflict_class,
        "action": finding.action,
        "reason": finding.reason,
    }


def op_claim(request: WriteRequest, placed: PlacedMemory) -> ClaimFacts | None:
    """What the conflict classifier knows about one write (tasks never conflict)."""
    if request.memory_type == "task":
        return None
    claim = request.claim if request.claim is not None else parse_memory(placed.file_text).gist
    workspace = slugify(request.workspace) if request.workspace and request.workspace.strip() else None
    return ClaimFacts(claim, request.memory_type, workspace, tuple(request.entities))


def stored_candidates(database: Database, ops: Sequence[ClaimFacts]) -> list[StoredClaim]:
    """Active non-task memories sharing an entity or a frame key with any op: one query per batch."""
    frames = {key for facts in ops if (key := frame_key(facts.claim)) is not None}
    entities = {entity.strip().lower() for facts in ops for entity in facts.entities if entity.strip()}
    return claims_sharing(database, frames, entities)


def batch_findings(
    ops: Sequence[ClaimFacts | None], stored: Sequence[StoredClaim], own_paths: Sequence[str | None]
) -> list[list[ConflictEntry]]:
    """For each op, its findings against stored memories, then against earlier ops (never its own file).
    A later op reports on an earlier one, never the reverse."""
    findings: list[list[ConflictEntry]] = []
    for position, facts in enumerate(ops):
        found: list[ConflictEntry] = []
        if facts is not None:
            for memory in stored:
                if memory.path == own_paths[position] or not are_candidates(facts, memory.facts):
                    continue
                finding = classify_pair(facts, memory.facts)
                if finding is not None:
                    found.append(finding_entry(finding, memory.facts.claim, path=memory.path, batch_index=None))
            for earlier, other in enumerate(ops[:position]):
                if other is None or (own_paths[earlier] is not None and own_paths[earlier] == own_paths[position]):
                    continue
                if not are_candidates(facts, other):
                    continue
                finding = classify_pair(facts, other)
                if finding is not None:
                    found.append(finding_entry(finding, other.claim, path=None, batch_index=earlier))
        findings.append(found)
    return findings


def audit(root: Path) -> ConflictAudit:
    """`conflicts audit`: every candidate pair of active memories, typed. The answer says how many
    memories and pairs were examined, so "0 reported" is never mistaken for "not checked"."""
    store = open_store(root)
    with fresh_index(store) as database:
        memories = all_active_claims(database)
    groups: dict[str, list[int]] = defaultdict(list)
    for position, memory in enumerate(memories):
        key = frame_key(memory.facts.claim)
        if key is not None:
            groups["frame:" + key].append(position)
        for entity in {entity.strip().lower() for entity in memory.facts.entities if entity.strip()}:
            groups["entity:" + entity].append(position)
    pairs: set[tuple[int, int]] = set()
    narrowed = 0
    for name, members in groups.items():
        if name.startswith("entity:") and len(members) > HUB_GROUP_LIMIT:
            narrowed += 1
            continue
        pairs.update((first, second) for index, first in enumerate(members) for second in members[index + 1 :])
    findings: list[AuditFinding] = []
    for first, second in sorted(pairs):
        older, newer = memories[first], memories[second]
        finding = classify_pair(newer.facts, older.facts)
        if finding is not None:
            entry = finding_entry(finding, older.facts.claim, path=older.path, batch_index=None)
            findings.append({"newer": newer.path, "newerClaim": newer.facts.claim, **entry})
    return {
        "scanned": len(memories),
        "pairs": len(pairs),
        "reported": len(findings),
        "narrowedGroups": narrowed,
        "findings": findings,
    }
