"""The embedder this process uses, and embedding after an index pass: what every command that moves
the index does to keep vectors in step, and the `index embed` use case.

The embedder is loaded at most once per process (a server answers many requests with one model) and
only when there is something to embed or a query to embed. An embedding failure after a commit is a
warning on an answer that still reports success: the commit landed and the lexical index is whole.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple, TypedDict

from memhtml.contracts.errors import EmbedSpaceMismatch, MemhtmlError, ModelUnavailable
from memhtml.index.database import Database, open_database
from memhtml.index.embedders import Embedder, checked_setting, load_embedder, space_of
from memhtml.index.vectors import embed_pending, pending_in_space, prune_vectors, vector_state, vectors_settled
from memhtml.operations.config import load_config

if TYPE_CHECKING:
    from memhtml.operations.indexing import CommandWarning, PhaseProgress

_loaded: dict[str, Embedder | None] = {}
_loading = threading.Lock()
# A harness that chooses its embedder itself (the discrimination gate) overrides MEMHTML_EMBED.
_override: list[str] = []


def embed_setting() -> str:
    return _override[-1] if _override else load_config().embed_setting()


@contextmanager
def embedding_override(setting: str) -> Iterator[None]:
    """Use `setting` instead of MEMHTML_EMBED inside this block (in this process)."""
    _override.append(checked_setting(setting))
    try:
        yield
    finally:
        _override.pop()


def configured_space() -> str | None:
    """The space the configured embedder writes (`None` when embeddings are off), without loading it."""
    return space_of(embed_setting())


def configured_embedder() -> Embedder | None:
    """The configured embedder, loaded once per process; `None` when embeddings are off."""
    setting = embed_setting()
    with _loading:
        if setting not in _loaded:
            _loaded[setting] = load_embedder(setting)
        return _loaded[setting]


class EmbedOutcome(NamedTuple):
    written: int
    warning: CommandWarning | None = None


class EmbedReport(TypedDict):
    """What `index embed` did (or, with `dryRun`, would do): the vectors written and those still owed."""

    mode: Literal["embed"]
    headSha: str | None
    dryRun: bool
    embedModel: str
    replacedEmbedModel: str | None
    chunks: int
    embeddings: int
    embeddingsWritten: int
    embeddingsRemaining: int
    vectorCoverage: float
    vectorCoverageFloor: float


def embed_after_pass(
    database: Database, paths: Collection[str] | None, *, progress: Callable[[int, int], None] | None = None
) -> EmbedOutcome:
    """Embed the texts of the memories a pass stored (`paths`; `None`: every text without a vector);
    `progress` hears (texts embedded, texts). Never raises for a model or space problem: the pass
    before it has landed, so that becomes a warning."""
    space = configured_space()
    if space is None:
        return EmbedOutcome(0)
    try:
        pending = pending_in_space(database, space, paths)
        if not pending.texts:
            return EmbedOutcome(0)  # the model is not even loaded
        embedder = configured_embedder()
        if embedder is None:
            return EmbedOutcome(0)
        return EmbedOutcome(embed_pending(database, embedder, paths=paths, pending=pending, progress=progress))
    except (EmbedSpaceMismatch, ModelUnavailable) as error:
        return EmbedOutcome(0, _embedding_warning(error))


def _embedding_warning(error: MemhtmlError) -> CommandWarning:
    return {
        "ok": False,
        "warning": f"indexed, but not embedded ({error.message}); search runs without those vectors",
        "remedy": error.suggestions[0] if error.suggestions else "memhtml index embed",
    }


def embed_index(root: Path, *, dry_run: bool = False, progress: PhaseProgress | None = None) -> EmbedReport:
    """`index embed`: give every chunk without a vector one; a different configured space replaces the
    index's vectors (the remedy for a mismatch), never mixes with them. `progress` hears ("embedding",
    texts, of)."""
    from memhtml.operations.indexing import catch_up, progress_phase
    from memhtml.store.gitread import GitCorpusReader
    from memhtml.store.repository import open_store

    store = open_store(root)
    with open_database(store.root) as database:
        report = catch_up(database, GitCorpusReader(store.root), embed=False)
        before = vector_state(database)
        space = configured_space()
        if space is None:
            raise ModelUnavailable(
                "embeddings are off (MEMHTML_EMBED=off): there is no embedder to fill vectors with",
                ["unset MEMHTML_EMBED (the shipped static model)", "MEMHTML_EMBED=hash"],
            )
        replacing = before.space is not None and before.space != space and before.embeddings > 0
        written = 0
        if not dry_run:
            embedder = configured_embedder()
            assert embedder is not None
            prune_vectors(database)
            written = embed_pending(
                database,
                embedder,
                replace_space=True,
                progress=progress_phase(progress, "embedding"),
            )
            vectors_settled(database)
        after = vector_state(database)
    remaining = after.texts - after.embedded_texts if not dry_run or not replacing else after.texts
    return {
        "mode": "embed",
        "headSha": report.head_sha,
        "dryRun": dry_run,
        "embedModel": space,
        "replacedEmbedModel": before.space if replacing else None,
        "chunks": after.chunks,
        "embeddings": after.embeddings,
        "embeddingsWritten": written,
        "embeddingsRemaining": remaining,
        "vectorCoverage": after.coverage if not (dry_run and replacing) else 0.0,
        "vectorCoverageFloor": load_config().coverage_floor(),
    }
