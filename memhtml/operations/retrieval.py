"""The `search` and `recall` use cases: scope and as-of resolution, the query vector, the fused arms,
MMR, hydration, snippets, and the disclosure fold of recall."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, NamedTuple, TypedDict

from memhtml.contracts.errors import UsageError
from memhtml.contracts.instants import is_sortable_instant
from memhtml.contracts.paths import is_archived_path
from memhtml.domain.ranking import ARM_LIMIT, MMR_LAMBDA, MMR_POOL_FACTOR, mmr
from memhtml.domain.tokens import QueryTerms, content_terms, parse_query
from memhtml.index.database import Database
from memhtml.index.scope import AsOfCommit, AsOfValidity, Scope
from memhtml.index.search import QueryVector, archived_matches, fused_search, hydrate
from memhtml.index.vectors import check_space, vector_state
from memhtml.operations.config import load_config
from memhtml.operations.embedding import configured_embedder, configured_space
from memhtml.operations.indexing import fresh_index, now_instant
from memhtml.store.gitread import GitCorpusReader
from memhtml.store.repository import Store, open_store

SNIPPET_MAX_CHARS: Final[int] = 700
RECALL_CANDIDATES: Final[int] = 30
ARC_BODY_BUDGET: Final[int] = 9000
ARCHIVED_HINT_LIMIT: Final[int] = 5


class RetrievalRequest(NamedTuple):
    """A search or recall as the caller states it (values already validated by the door)."""

    query: str
    memory_types: Sequence[str] = ()
    workspace: str | None = None
    tags: Sequence[str] = ()
    entity: str | None = None
    facets: Sequence[tuple[str, str]] = ()
    include_archived: bool = False
    as_of: str | None = None
    limit: int = 10
    budget: int = 16000


class SearchHit(TypedDict):
    """One memory of `memory.hits`: what it is, its fused score, a snippet of its body and its successor."""

    path: str
    title: str
    gist: str
    memoryType: str
    score: float
    confidence: float | None
    updatedAt: str
    snippet: str
    entities: list[str]
    supersededBy: str | None


class ArchivedMatch(TypedDict):
    """An archived memory that matches a query no live memory matched, and what replaced it."""

    path: str
    title: str
    supersededBy: str | None


class SearchHits(TypedDict):
    """The `memory.hits` data: the hits best first, the arms that voted, and why an answer may be thin."""

    hits: list[SearchHit]
    degraded: bool
    vectorCoverage: float
    arms: list[str]
    entityScope: str | None
    scopeEmpty: bool
    archivedMatches: int
    archived: list[ArchivedMatch]


class MemorySummary(TypedDict):
    """A memory as one index line of a recall pack: path, title, gist and type."""

    path: str
    title: str
    gist: str
    memoryType: str


class DisclosedMemory(MemorySummary):
    """A memory a recall pack quotes: its index line and the text disclosed under the budget."""

    body: str


class RecallFold(TypedDict):
    """One budgeted part of a recall pack: the memories quoted, the rest as index lines, and what it spent."""

    disclosed: list[DisclosedMemory]
    indexLines: list[MemorySummary]
    spentChars: int
    truncated: bool


class RecallPack(TypedDict):
    """The `recall.pack` data: the arcs and the other memories, each folded under its own budget."""

    arcs: RecallFold
    memories: RecallFold
    spentChars: int
    truncated: bool
    degraded: bool
    vectorCoverage: float


def facet_pairs(values: Sequence[str]) -> list[tuple[str, str]]:
    """`name=value` pairs (the door already refused any other shape), whitespace collapsed: how every
    door reads `--facet` / `facets`."""
    pairs = []
    for value in values:
        name, _, text = value.partition("=")
        pairs.append((name.strip(), " ".join(text.split())))
    return pairs


def resolve_as_of(store: Store, as_of: str | None, command: str) -> AsOfValidity | AsOfCommit | None:
    """A date or instant is event time; anything else names a commit (transaction time)."""
    if as_of is None:
        return None
    if is_sortable_instant(as_of):
        return AsOfValidity(as_of)
    reader = GitCorpusReader(store.root)
    resolved = reader.resolve_commit(as_of)
    if resolved is None:
        raise UsageError(
            "ERR_INVALID_FLAG",
            f"--as-of {as_of} names no commit of this store (nor is it YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)",
            [f"git -C {store.root} log --oneline", f"memhtml help {command}"],
        )
    sha, instant = resolved
    live = {path: blob for path, blob in reader.tree(sha).items() if not is_archived_path(path)}
    return AsOfCommit(sha, instant, live)


@contextmanager
def _as_it_was(database: Database, store: Store, scope: Scope, *, vector_arm: bool) -> Iterator[None]:
    """For an as-of-commit query, show the index with each memory as that commit held it (`index/asof.py`);
    `vector_arm`: the query's vector arm votes, so past texts without a vector are embedded for it."""
    if not isinstance(scope.as_of, AsOfCommit):
        yield
        return
    # Imported here: the overlay's rows bring the HTML parser, which only a look into a past that
    # today's index does not hold needs; every other search would pay for it.
    from memhtml.index.asof import overlay, past_versions

    tree = scope.as_of.live_blobs
    past, replaced, archived = past_versions(database, tree, scope.as_of.instant)
    if not past and not replaced and not archived:
        yield
        return
    from memhtml.index.parallel import PendingProjection, projection_pool
    from memhtml.index.projection import FileProjection

    read = [*past, *archived]
    contents = GitCorpusReader(store.root).blobs(tree[path] for path in read)
    items = [(path, tree[path], contents.get(tree[path])) for path in read]
    with projection_pool(len(items)) as pool:  # a reorganised store can make thousands of memories past
        results = PendingProjection(pool, items, now_instant()).results()
    projections: list[FileProjection] = []
    for result in results:
        if not isinstance(result, FileProjection):
            continue
        since = archived.get(result.path)
        if since is None:
            projections.append(result)
        elif result.row["content_hash"] != since.content_hash:  # edited since it was archived
            projections.append(result)
            replaced.append(since.archived_path)
    with overlay(database, projections, replaced, configured_embedder() if vector_arm else None):
        yield


def _scope(store: Store, request: RetrievalRequest, command: str) -> Scope:
    return Scope(
        memory_types=tuple(request.memory_types),
        workspace=request.workspace,
        tags=tuple(request.tags),
        entity=request.entity,
        facets=tuple(request.facets),
        include_archived=request.include_archived,
        as_of=resolve_as_of(store, request.as_of, command),
    )


def search(root: Path, request: RetrievalRequest) -> SearchHits:
    """The `memory.hits` data: relevant memories only, best first, with a real fused score."""
    store = open_store(root)
    scope = _scope(store, request, "search")
    query = content_terms(parse_query(request.query))
    with fresh_index(store, committed_nothing=True) as database:
        # The index's coverage, and whether the vector arm votes, before any look into the past.
        semantic = query_vector(database, request.query, embed=bool(query.terms))
        with _as_it_was(database, store, scope, vector_arm=semantic.vector is not None):
            pool = request.limit * MMR_POOL_FACTOR
            fused, arms = fused_search(database, query, scope, pool=pool, vector=semantic.vector)
            # MMR without vectors keeps the fused order, so hits stay sorted by their score. With vectors
            # its rank-based relevance (1 / position) demotes every close paraphrase of the top hit below
            # unrelated ones; diversity waits for a measured setting.
            order = mmr([(hit.path, None) for hit in fused], request.limit, MMR_LAMBDA)
            scores = {hit.path: hit.score for hit in fused}
            details = hydrate(database, order)
            # The hint answers "why nothing?": only asked when no live memory matched.
            archived = _archived_hint(database, query, scope, request, semantic.vector) if not order else []
    hits = [_hit(details[path], scores[path]) for path in order if path in details]
    return {
        "hits": hits,
        "degraded": semantic.degraded,
        "vectorCoverage": semantic.coverage,
        "arms": arms,
        "entityScope": request.entity,
        "scopeEmpty": scope.narrowing and not hits,
        "archivedMatches": len(archived),
        "archived": archived[:ARCHIVED_HINT_LIMIT],
    }


def recall(root: Path, request: RetrievalRequest) -> RecallPack:
    """The `recall.pack` data: the best memories quoted in full under a character budget, the rest as
    index lines; arcs have their own budget."""
    store = open_store(root)
    scope = _scope(store, request, "recall")
    query = content_terms(parse_query(request.query))
    with fresh_index(store, committed_nothing=True) as database:
        semantic = query_vector(database, request.query, embed=bool(query.terms))
        with _as_it_was(database, store, scope, vector_arm=semantic.vector is not None):
            fused, _ = fused_search(database, query, scope, pool=RECALL_CANDIDATES, vector=semantic.vector)
            details = hydrate(database, [hit.path for hit in fused])
    ranked = [details[hit.path] for hit in fused if hit.path in details]
    arcs = [row for row in ranked if row["memory_type"] == "arc"]
    memories = [row for row in ranked if row["memory_type"] != "arc"]
    arc_pack = _fold(arcs, ARC_BODY_BUDGET)
    memory_pack = _fold(memories, request.budget)
    return {
        "arcs": arc_pack,
        "memories": memory_pack,
        "spentChars": arc_pack["spentChars"] + memory_pack["spentChars"],
        "truncated": bool(arc_pack["truncated"] or memory_pack["truncated"]),
        "degraded": semantic.degraded,
        "vectorCoverage": semantic.coverage,
    }


class SemanticSide(NamedTuple):
    """The vector side of one query: its vector (None: the arm sits out), the index's coverage, and
    whether the answer is degraded (embeddings off, or too few memories embedded to trust the arm)."""

    vector: QueryVector | None
    coverage: float
    degraded: bool


def query_vector(database: Database, text: str, *, embed: bool = True) -> SemanticSide:
    """Embed the query when the index's vectors can answer it; a space mismatch is refused. `embed`
    False (a query with no term, which matches nothing) reports the index's side without embedding."""
    space = configured_space()
    state = vector_state(database)
    if space is None:
        return SemanticSide(None, state.coverage if state.space else 0.0, True)
    check_space(database, space, state)
    coverage = state.coverage if state.space else (1.0 if state.texts == 0 else 0.0)
    floor = load_config().coverage_floor()
    if coverage < floor or state.texts == 0 or not embed:
        return SemanticSide(None, coverage, coverage < floor)
    embedder = configured_embedder()
    assert embedder is not None
    values = embedder.embed_query(text)
    if not any(values):  # no known token: nothing for the arm to compare
        return SemanticSide(None, coverage, False)
    return SemanticSide(QueryVector(values, embedder.similarity_floor), coverage, False)


def _fold(rows: list[dict[str, Any]], budget: int) -> RecallFold:
    # Imported here: only recall folds, and a search should not pay for defining its records.
    from memhtml.domain.recall_fold import DisclosureCandidate, fold_disclosure

    candidates = [
        DisclosureCandidate(
            path=row["path"],
            title=row["title"],
            gist=row["gist"],
            memory_type=row["memory_type"],
            disclosure_text=row["disclosure_text"],
            entity_names=tuple(row["entity_names"]),
        )
        for row in rows
    ]
    folded = fold_disclosure(candidates, budget)
    by_path = {row["path"]: row for row in rows}
    return {
        "disclosed": [{**_summary(by_path[item.path]), "body": item.disclosure_text} for item in folded.disclosed],
        "indexLines": [_summary(by_path[item.path]) for item in folded.index_lines],
        "spentChars": folded.spent_chars,
        "truncated": folded.truncated,
    }


def _summary(row: dict[str, Any]) -> MemorySummary:
    return {"path": row["path"], "title": row["title"], "gist": row["gist"], "memoryType": row["memory_type"]}


def _hit(row: dict[str, Any], score: float) -> SearchHit:
    return {
        "path": row["path"],
        "title": row["title"],
        "gist": row["gist"],
        "memoryType": row["memory_type"],
        "score": round(score, 6),
        "confidence": row["confidence"],
        "updatedAt": row["updated_at"],
        "snippet": snippet(row["body_text"]),
        "entities": row["entities"],
        "supersededBy": row["superseded_by"],
    }


def snippet(body_text: str) -> str:
    """The first 700 characters of the body, the `…` counted inside the 700."""
    text = body_text.strip()
    return text if len(text) <= SNIPPET_MAX_CHARS else text[: SNIPPET_MAX_CHARS - 1] + "…"


def _archived_hint(
    database: Database, query: QueryTerms, scope: Scope, request: RetrievalRequest, vector: QueryVector | None
) -> list[ArchivedMatch]:
    if request.include_archived or request.as_of is not None:
        return []
    paths = archived_matches(database, query, scope, vector)[:ARM_LIMIT]
    details = hydrate(database, paths)
    return [
        {"path": path, "title": details[path]["title"], "supersededBy": details[path]["superseded_by"]}
        for path in paths
        if path in details
    ]
