"""The embedding lane: which chunks lack a vector, embedding them, keeping vectors across renames and
rebuilds, the index's vector space, and coverage.

Vectors are keyed by content (`content_hash`, ordinal): a moved, archived or head-edited memory keeps
its vectors, and a rebuild keeps every vector whose chunk still exists. The index holds one space at a
time (`index_state.embed_model`); a different configured space is refused, never mixed, until a
rebuild or `index embed` replaces the vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import NamedTuple

from memhtml.contracts.errors import EmbedSpaceMismatch
from memhtml.domain.chunking import CHUNK_MAX_CHARS, chunk_text
from memhtml.index.database import Database, membership
from memhtml.index.embedders import EMBED_SLICE, Embedder

Progress = Callable[[int, int], None]


class VectorState(NamedTuple):
    """The index's vector space and how much of the corpus it covers."""

    space: str | None
    texts: int  # distinct memory texts (content hashes) whose body has a word
    embedded_texts: int
    chunks: int  # embedded chunks plus one per text still waiting (its chunk count is known once cut)
    embeddings: int

    @property
    def coverage(self) -> float:
        return 1.0 if self.texts == 0 else round(self.embedded_texts / self.texts, 4)

    @property
    def dims(self) -> int | None:
        return int(self.space.rsplit("@", 1)[1]) if self.space and "@" in self.space else None


def vector_state(database: Database) -> VectorState:
    # Counted from the hash and word-count columns, never the body texts: this runs on every search.
    row = database.rows(
        """
        WITH texts AS (SELECT DISTINCT content_hash FROM files WHERE word_count > 0)
        SELECT (SELECT embed_model FROM index_state),
               (SELECT count(*) FROM texts),
               (SELECT count(*) FROM texts WHERE content_hash IN (SELECT content_hash FROM chunk_vectors)),
               (SELECT count(*) FROM chunk_vectors)
        """
    )[0]
    space, texts, embedded_texts, embeddings = row[0], int(row[1]), int(row[2]), int(row[3])
    return VectorState(space, texts, embedded_texts, embeddings + (texts - embedded_texts), embeddings)


def indexed_chunks(database: Database) -> int:
    """How many chunks the indexed memories' bodies cut into, counted per memory (two memories with one
    text count its chunks twice) and whether or not they have vectors yet."""
    # Only a body longer than the cap can cut into more than one chunk, and a body with a word into at
    # least one; the byte length bounds the character length, so the rest are single chunks without
    # their text leaving the index.
    single = int(
        database.value(
            "SELECT count(*) FROM files WHERE word_count > 0 AND strlen(body_text) <= $cap", {"cap": CHUNK_MAX_CHARS}
        )
    )
    others = database.rows(
        "SELECT body_text FROM files WHERE NOT (word_count > 0 AND strlen(body_text) <= $cap)", {"cap": CHUNK_MAX_CHARS}
    )
    return single + sum(len(chunk_text(str(row[0]))) for row in others)


def recorded_space(database: Database) -> str | None:
    """The vector space the index's vectors were embedded in (None before any was)."""
    value = database.value("SELECT embed_model FROM index_state")
    return None if value is None else str(value)


def check_space(database: Database, space: str, state: VectorState | None = None) -> bool:
    """Refuse a configured space that differs from the one the index's vectors are in (read from
    `state` when the caller has just read it, else from the index); returns whether the index already
    records `space` (False: it records none yet)."""
    recorded = state.space if state is not None else recorded_space(database)
    if recorded is None or recorded == space:
        return recorded is not None
    holds_vectors = state.embeddings > 0 if state is not None else _has_vectors(database)
    if holds_vectors:
        raise EmbedSpaceMismatch(
            f"the index holds vectors of {recorded}, but the configured embedder is {space}; "
            "vectors of two spaces are never mixed",
            ["memhtml index embed", "memhtml index rebuild", f"MEMHTML_EMBED set back to the one that made {recorded}"],
        )
    return False  # another space, recorded without a vector left in it: the first vectors record `space`


class PendingTexts(NamedTuple):
    """The memory texts without a vector, as `pending_in_space` found them for one space."""

    space: str
    space_recorded: bool  # the index records `space` already (it records none otherwise)
    texts: list[tuple[str, str]]  # (content_hash, body_text), one per hash


def pending_in_space(database: Database, space: str, paths: Collection[str] | None = None) -> PendingTexts:
    """`check_space` for `space`, then `pending_texts(database, paths)`."""
    recorded = check_space(database, space)
    return PendingTexts(space, recorded, pending_texts(database, paths))


def pending_texts(database: Database, paths: Collection[str] | None = None) -> list[tuple[str, str]]:
    """(content_hash, body_text) of every memory text that has no vector yet, one per hash; `paths`
    narrows the search to the memories a pass just stored, so a write costs what it wrote."""
    if paths is None:
        rows = database.rows(
            """
            SELECT content_hash, any_value(body_text) FROM files f
            WHERE word_count > 0
              AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.content_hash = f.content_hash)
            GROUP BY content_hash ORDER BY content_hash
            """
        )
        return [(str(row[0]), str(row[1])) for row in rows]
    if not paths:
        return []
    named, parameters = membership("path", "paths", sorted(paths))
    # Found by path (the key's index); the vectors then filtered to those hashes, a filter DuckDB pushes
    # into its scan of their hash column (a fraction of what joining the whole column cost). Two plain
    # statements cost an update after one commit less than one statement joining them, more so in a
    # large store.
    texts: dict[str, str] = {}
    for content_hash, body_text in database.rows(
        f"SELECT content_hash, body_text FROM files WHERE word_count > 0 AND {named}", parameters
    ):
        texts.setdefault(str(content_hash), str(body_text))
    if not texts:
        return []
    hashes, parameters = membership("content_hash", "hashes", sorted(texts))
    embedded = {row[0] for row in database.rows(f"SELECT content_hash FROM chunk_vectors WHERE {hashes}", parameters)}
    return [(content_hash, texts[content_hash]) for content_hash in sorted(texts) if content_hash not in embedded]


def embed_pending(
    database: Database,
    embedder: Embedder,
    *,
    paths: Collection[str] | None = None,
    replace_space: bool = False,
    progress: Progress | None = None,
    pending: PendingTexts | None = None,
) -> int:
    """Embed every chunk that has no vector; returns how many vectors were written.

    With `replace_space`, vectors of another space are dropped first (the remedy for a mismatch);
    without it a mismatch is refused. Each slice commits on its own, so an interrupted pass keeps what
    it wrote and the next one continues from there. `pending`: what `pending_in_space(database,
    embedder.space, paths)` answered just before, when the caller already asked.
    """
    if replace_space:
        recorded = recorded_space(database)
        if recorded is not None and recorded != embedder.space:
            with database.transaction():
                database.run("DELETE FROM chunk_vectors")
                database.run("UPDATE index_state SET embed_model = NULL, embed_dim = NULL WHERE id = 1")
            paths, pending = None, None  # every text is pending in the new space
    if pending is None or pending.space != embedder.space:
        pending = pending_in_space(database, embedder.space, paths)
    # The space is written once, with the first vectors (or at once when there are none to write), and
    # not at all when the index records it already: an update of a row that stays as it is still costs
    # a statement on every write.
    space_recorded = pending.space_recorded
    texts = pending.texts
    if not texts:
        if not space_recorded:
            _record_space(database, embedder)
        return 0
    written = 0
    for start in range(0, len(texts), EMBED_SLICE):
        hashes: list[str] = []
        ordinals: list[int] = []
        chunks: list[str] = []
        for content_hash, body_text in texts[start : start + EMBED_SLICE]:
            for ordinal, chunk in enumerate(chunk_text(body_text)):
                hashes.append(content_hash)
                ordinals.append(ordinal)
                chunks.append(chunk)
        vectors = embedder.embed_documents(chunks)
        with database.transaction():
            database.insert_vectors(hashes, ordinals, [len(chunk) for chunk in chunks], vectors)
            if not space_recorded:
                _record_space(database, embedder)
        space_recorded = True
        written += len(chunks)
        if progress is not None:
            progress(min(start + EMBED_SLICE, len(texts)), len(texts))
    return written


def prune_vectors(database: Database) -> int:
    """Drop vectors whose text no memory has any more (its file removed or its article changed)."""
    orphans = int(
        database.value(
            "SELECT count(*) FROM chunk_vectors v WHERE NOT EXISTS "
            "(SELECT 1 FROM files f WHERE f.content_hash = v.content_hash)"
        )
    )
    if orphans:
        database.run("DELETE FROM chunk_vectors WHERE content_hash NOT IN (SELECT DISTINCT content_hash FROM files)")
    return orphans


def vectors_settled(database: Database) -> None:
    """Every text a pass stored has had its vectors written (or the embedder said why not): nothing is
    owed any more (`index_state.vectors_owed`)."""
    database.run("UPDATE index_state SET vectors_owed = FALSE WHERE id = 1 AND vectors_owed")


def _record_space(database: Database, embedder: Embedder) -> None:
    database.run(
        "UPDATE index_state SET embed_model = $space, embed_dim = $dims "
        "WHERE id = 1 AND embed_model IS DISTINCT FROM $space",
        {"space": embedder.space, "dims": int(embedder.space.rsplit("@", 1)[1])},
    )


def _has_vectors(database: Database) -> bool:
    return bool(database.value("SELECT EXISTS (SELECT 1 FROM chunk_vectors)"))
