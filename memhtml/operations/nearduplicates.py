"""The near-duplicate assist of the write doors (`--detect-near-duplicates`): report-only.

A new memory is a near-duplicate of an active memory, or of an earlier op of the same batch, when
their cosine is at least `NEAR_DUPLICATE_THRESHOLD` and the divergence veto does not object (a
negation, a number or a variant qualifier that differs makes them different facts). Exact
duplicates are the dedupe's business and are not repeated here. `None` means "not checked": the
embedder is off, failed, or holds another vector space, and the answer then says so at batch level.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple, TypedDict

from memhtml.contracts.errors import EmbedSpaceMismatch, ModelUnavailable
from memhtml.domain.divergence import diverges
from memhtml.index.database import Database
from memhtml.index.file_lookups import content_hashes
from memhtml.index.similarity import Neighbour, earlier_neighbours, stored_neighbours
from memhtml.index.vectors import check_space, vector_state
from memhtml.operations.config import load_config
from memhtml.operations.embedding import configured_embedder

NEAR_DUPLICATE_THRESHOLD: Final[float] = 0.92
MAX_NEAR_DUPLICATES: Final[int] = 3
# Neighbours fetched before the veto, so vetoed ones do not crowd out real near-duplicates.
_CANDIDATES: Final[int] = 12


class NearDuplicateText(NamedTuple):
    """One op's text to compare, with the memory type (tasks and arcs are never compared) and the
    content hash it will be stored under (an identical stored memory is a dedupe, not a finding)."""

    text: str
    memory_type: str
    content_hash: str


class NearDuplicateFinding(TypedDict):
    """A near-duplicate of one op: the stored memory (`path`) or earlier op (`batch_index`), its cosine and text."""

    path: str | None
    batch_index: int | None
    similarity: float
    claim: str


class NearDuplicateReport(NamedTuple):
    findings: list[list[NearDuplicateFinding] | None]
    degraded: bool


def find_near_duplicates(database: Database | None, items: Sequence[NearDuplicateText | None]) -> NearDuplicateReport:
    """Per item: its near-duplicates best first (at most three), `[]` when none, `None` when unchecked."""
    unchecked = NearDuplicateReport([None] * len(items), degraded=True)
    if database is None:
        return unchecked
    try:
        embedder = configured_embedder()
        if embedder is None:
            return unchecked
        check_space(database, embedder.space)
    except (EmbedSpaceMismatch, ModelUnavailable):
        return unchecked
    if vector_state(database).coverage < load_config().coverage_floor():
        return unchecked  # too many memories without a vector: "none found" would not be true
    positions = [
        index for index, item in enumerate(items) if item is not None and item.memory_type not in ("task", "arc")
    ]
    texts = [items[index].text for index in positions]  # type: ignore[union-attr]
    vectors = embedder.embed_documents(texts)
    stored = stored_neighbours(database, vectors, NEAR_DUPLICATE_THRESHOLD, _CANDIDATES)
    own_hashes = _hashes_of(database, [stored_paths for stored_paths in stored])
    earlier = earlier_neighbours(vectors, texts, NEAR_DUPLICATE_THRESHOLD, _CANDIDATES)
    findings: list[list[NearDuplicateFinding] | None] = [None] * len(items)
    for slot, index in enumerate(positions):
        item = items[index]
        assert item is not None
        found: list[tuple[float, NearDuplicateFinding]] = []
        for neighbour in stored[slot]:
            if own_hashes.get(neighbour.path or "") == item.content_hash or diverges(item.text, neighbour.text):
                continue
            found.append((neighbour.similarity, _finding(neighbour, path=neighbour.path)))
        for neighbour in earlier[slot]:
            assert neighbour.position is not None
            other = items[positions[neighbour.position]]
            if other is None or other.content_hash == item.content_hash or diverges(item.text, neighbour.text):
                continue
            found.append((neighbour.similarity, _finding(neighbour, batch_index=positions[neighbour.position])))
        # A stored match outranks a batch match of the same similarity, as conflicts do.
        found.sort(key=lambda pair: (-pair[0], pair[1]["path"] is None))
        findings[index] = [finding for _, finding in found[:MAX_NEAR_DUPLICATES]]
    # Tasks and arcs are never compared: checked, with nothing to report.
    for index, item in enumerate(items):
        if item is not None and item.memory_type in ("task", "arc"):
            findings[index] = []
    return NearDuplicateReport(findings, degraded=False)


def _finding(neighbour: Neighbour, *, path: str | None = None, batch_index: int | None = None) -> NearDuplicateFinding:
    return {
        "path": path,
        "batch_index": batch_index,
        "similarity": round(neighbour.similarity, 4),
        "claim": neighbour.text,
    }


def _hashes_of(database: Database, groups: Sequence[Sequence[Neighbour]]) -> dict[str, str]:
    return content_hashes(database, {neighbour.path for group in groups for neighbour in group if neighbour.path})
