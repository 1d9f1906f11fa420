"""Opening a store's index for a command: caught up with HEAD first, rebuilt when missing, and the
`index rebuild|update|status` use cases.

Read commands open read-only when the index is already fresh, so many can run side by side; a stale
or missing index is brought up to date under a read-write connection first.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast

from memhtml.contracts.errors import DamagedIndex, MemhtmlError
from memhtml.contracts.instants import format_instant
from memhtml.index.access import count_read
from memhtml.index.counts import edge_count
from memhtml.index.database import Database, index_exists, open_database
from memhtml.index.file_lookups import active_rows_by_hash
from memhtml.index.migrations import pending_migrations
from memhtml.index.session_links import SessionLink, record_session_links
from memhtml.index.setaside import index_identity, set_aside_index
from memhtml.index.watermark import disk_projections_changed, is_fresh, watermark
from memhtml.store.gitread import GitCorpusReader
from memhtml.store.interrupts import interrupt_requested
from memhtml.store.repository import Store, open_store

if TYPE_CHECKING:
    from memhtml.index.indexer import PassReport
    from memhtml.index.projection import FileProjection
    from memhtml.store.batch import ActiveOwner


# What a long command reports as it goes: (phase, done, of), e.g. ("indexing", 4000, 100000).
PhaseProgress = Callable[[str, int, int], None]


class CommandWarning(TypedDict):
    """A warning on an answer that still succeeded: what went wrong, and the command that puts it right."""

    ok: Literal[False]
    warning: str
    remedy: str


class SkippedPath(TypedDict):
    """A file a pass left out (of the index, of a `validate` run), and why."""

    path: str
    reason: str


class IndexPassReport(TypedDict):
    """What `index rebuild` or `index update` did: the files it indexed and the vectors it wrote."""

    mode: Literal["rebuild", "update"]
    headSha: str | None
    unchanged: NotRequired[bool]  # update only: the pass found nothing to do
    added: NotRequired[int]  # update only, like `modified`, `removed` and `renamed`
    modified: NotRequired[int]
    removed: NotRequired[int]
    renamed: NotRequired[int]
    filesIndexed: NotRequired[int]  # rebuild only, like the counts and `embeddingsPreserved`
    chunksIndexed: NotRequired[int]
    edgesIndexed: NotRequired[int]
    dirty: int
    embeddingsWritten: int
    embeddingsPreserved: NotRequired[int]
    skipped: list[SkippedPath]
    warnings: NotRequired[list[CommandWarning]]
    damagedIndexSetAside: NotRequired[str]  # an unreadable index file, set aside before the rebuild


class IndexStatus(TypedDict):
    """What `index status` says: the watermark, whether the index is fresh, its row and vector counts."""

    mode: Literal["status"]
    headSha: str | None
    fresh: bool
    embedModel: str | None
    embedDim: int | None
    embedModelMatches: bool
    configuredEmbedModel: str | None
    rebuiltAt: str | None
    updatedAt: str | None
    files: int
    activeFiles: int
    edges: int
    derivedEdges: int
    tags: int
    entities: int
    terms: int
    postings: int
    dirtyPaths: list[str]
    chunks: int
    embeddings: int
    vectorCoverage: float
    vectorCoverageFloor: float
    vectorCoverageLow: bool
    traces: int
    hasState: bool


def now_instant() -> str:
    return format_instant(dt.datetime.now(dt.UTC))


def catch_up(
    database: Database,
    reader: GitCorpusReader,
    *,
    worktree: bool = False,
    known: Mapping[str, FileProjection] | None = None,
    embed: bool = True,
    progress: PhaseProgress | None = None,
) -> PassReport:
    """Bring the index up to HEAD, then give the texts it projected their vectors (`embed`); `progress`
    hears ("indexing", files, of) and ("embedding", texts, of). The indexer is imported here, not at
    module load: it pulls in the HTML parser, which a read command on a fresh index never needs."""
    from memhtml.index.indexer import update

    indexing = progress_phase(progress, "indexing")
    report = update(database, reader, now_instant(), worktree=worktree, known=known, progress=indexing)
    follow_with_vectors(database, report, embed=embed, progress=progress_phase(progress, "embedding"))
    return report


def follow_with_vectors(
    database: Database, report: PassReport, *, embed: bool, progress: Callable[[int, int], None] | None = None
) -> None:
    """Keep the vectors in step with a pass: drop those whose text went, embed those that arrived."""
    from memhtml.index.vectors import prune_vectors, vectors_settled
    from memhtml.operations.embedding import embed_after_pass

    # A rename is projected again: with its text changed on the way (`git mv` then an edit, or git pairing a
    # deleted file with a similar new one), the old text's vectors are left to no memory.
    if report.mode == "rebuild" or report.removed or report.modified or report.renamed or report.dirty:
        report.embeddings_pruned = prune_vectors(database)
    if embed:
        # Texts an earlier pass stored and never embedded (it was cut short) are embedded with these.
        paths = None if report.vectors_owed else report.projected_paths
        outcome = embed_after_pass(database, paths, progress=progress)
        report.embeddings_written += outcome.written
        if outcome.warning is not None:
            _pass_warnings(report).append(outcome.warning)
        if report.vectors_owed or report.projected_paths:
            vectors_settled(database)


@contextmanager
def fresh_index(store: Store, *, writable: bool = False, committed_nothing: bool = False) -> Iterator[Database]:
    """The store's index, caught up with HEAD's commits, open for this command; the dirty tree is
    projected again only when a file the index holds from disk changed there (`is_fresh`).

    A fresh index is opened once, read-only, so concurrent readers never block each other; a stale or
    missing one (or `writable`) is opened read-write and caught up first. `committed_nothing`: the
    command has committed nothing since it opened `store`, so an index at the HEAD it opened on is fresh
    without another `git` process (a command that commits and then reads must leave it False).
    """
    reader = GitCorpusReader(store.root)
    if index_exists(store.root) and not writable:
        with ExitStack() as stack:
            database = stack.enter_context(open_database(store.root, read_only=True))
            head_seen = store.opened_at if committed_nothing else None
            if (
                database.read_only
                and not pending_migrations(database)
                and is_fresh(database, reader, head_seen=head_seen)
            ):
                yield database
                return
    with open_database(store.root) as database:
        # A file projected from disk that changed there since is projected again (with the whole dirty
        # tree: one `git status`), so an edit taken back never keeps answering.
        catch_up(database, reader, worktree=disk_projections_changed(database, reader))
        yield database


def rebuild_index(root: Path, *, embed: bool = True, progress: PhaseProgress | None = None) -> IndexPassReport:
    """`index rebuild`: every memory in HEAD, then the dirty working tree. Every vector whose chunk
    survives is kept; with `embed`, the rest are embedded (in the configured space: a rebuild is a
    remedy for a space mismatch). `progress` hears ("indexing", files, of) and ("embedding", texts, of).
    An index file that cannot be read is set aside (`damagedIndexSetAside`) and rebuilt from scratch."""
    store = open_store(root)
    opened = index_identity(store.root)
    try:
        return _rebuild_in(store, embed=embed, progress=progress)
    except DamagedIndex:
        # Everything the file held comes back from git (its vectors by embedding again), so a file that
        # cannot be read is set aside, never deleted, and the rebuild starts from a fresh one.
        aside = set_aside_index(store.root, now_instant(), opened)
        data = _rebuild_in(store, embed=embed, progress=progress)
        if aside is not None:
            data["damagedIndexSetAside"] = aside.relative_to(store.root).as_posix()
            data.setdefault("warnings", []).append(
                {
                    "ok": False,
                    "warning": f"the index file could not be read; it was set aside as {data['damagedIndexSetAside']} "
                    "and the index rebuilt from git",
                    "remedy": f"rm {data['damagedIndexSetAside']} once nothing else needs it",
                }
            )
        return data


def _rebuild_in(store: Store, *, embed: bool, progress: PhaseProgress | None) -> IndexPassReport:
    from memhtml.index.indexer import rebuild, rebuild_plan
    from memhtml.index.vectors import embed_pending, prune_vectors, vector_state
    from memhtml.operations.embedding import configured_embedder, configured_space

    reader = GitCorpusReader(store.root)
    # git walks the working tree while the index opens and the commit is projected: at the end, where it
    # was asked, it cost a rebuild a stretch with every other core idle.
    reader.prefetch_dirty()
    now = now_instant()
    # The workers start on HEAD's memories before the index is opened and emptied (`rebuild_plan`).
    with rebuild_plan(reader, now) as plan, open_database(store.root) as database:
        indexing = progress_phase(progress, "indexing")
        report = rebuild(database, reader, now, progress=indexing, plan=plan)
        report.embeddings_pruned = prune_vectors(database)
        kept = vector_state(database)
        space = configured_space()
        replacing = kept.space is not None and space is not None and kept.space != space
        report.embeddings_preserved = 0 if replacing else kept.embeddings
        if embed and space is not None and (replacing or kept.embedded_texts < kept.texts):
            embedder = configured_embedder()
            assert embedder is not None
            embedding = progress_phase(progress, "embedding")
            report.embeddings_written = embed_pending(database, embedder, replace_space=True, progress=embedding)
        return _with_warnings(report, _rebuilt_counts(database))


def _rebuilt_counts(database: Database) -> dict[str, int]:
    """What a rebuild left in the index besides its files: the chunks their bodies cut into (counted
    per memory, with embeddings on or off) and the links they assert."""
    from memhtml.index.vectors import indexed_chunks

    return {
        "chunksIndexed": indexed_chunks(database),
        "edgesIndexed": edge_count(database),
    }


def _stopping_on_signal(progress: PhaseProgress | None) -> PhaseProgress:
    """`progress`, stopping the work it reports on once a signal asked this process to stop (after its
    commit landed, a signal interrupts nothing by itself: `store.interrupts`)."""

    def report(phase: str, done: int, of: int) -> None:
        if interrupt_requested():
            raise KeyboardInterrupt
        if progress is not None:
            progress(phase, done, of)

    return report


def progress_phase(progress: PhaseProgress | None, phase: str) -> Callable[[int, int], None] | None:
    """`progress` for one phase of the work, as the (done, of) callback the lower layers take."""
    return None if progress is None else lambda done, of: progress(phase, done, of)


def update_index(root: Path, *, embed: bool = True) -> IndexPassReport:
    """`index update`: the commits since the watermark, then the dirty working tree."""
    store = open_store(root)
    reader = GitCorpusReader(store.root)
    reader.prefetch_dirty()  # git walks the working tree while the index opens and takes the commits
    with open_database(store.root, meanwhile=lambda: load_pass_code(embed=embed)) as database:
        return _with_warnings(catch_up(database, reader, worktree=True, embed=embed))


def load_pass_code(*, embed: bool) -> None:
    """Import the indexer and load the embedder a pass may use, so that it happens while DuckDB
    starts: an update after one commit and a write both finish sooner. A model that cannot load is left
    to the pass, which turns that into a warning."""
    import memhtml.index.indexer  # noqa: F401
    from memhtml.operations.embedding import configured_embedder

    if embed:
        with suppress(MemhtmlError):
            configured_embedder()


def _pass_warnings(report: PassReport) -> list[CommandWarning]:
    """The warnings a pass gathered, as the list itself: `PassReport` holds them untyped."""
    return cast("list[CommandWarning]", report.warnings)


def _with_warnings(report: PassReport, counts: Mapping[str, int] | None = None) -> IndexPassReport:
    """The pass's answer; `counts` follow `filesIndexed`, in the order the command's contract gives."""
    data = report.as_data()
    if counts:
        placed: dict[str, Any] = {}
        for name, value in data.items():
            placed[name] = value
            if name == "filesIndexed":
                placed.update(counts)
        data = placed
    if report.warnings:
        data["warnings"] = report.warnings
    # `PassReport.as_data` and its warnings are untyped (`memhtml.index.indexer`): this is their shape.
    return cast("IndexPassReport", data)


def index_status(root: Path) -> IndexStatus:
    """`index status`: watermark, freshness and row counts."""
    from memhtml.index.counts import index_totals
    from memhtml.index.vectors import vector_state
    from memhtml.operations.config import load_config
    from memhtml.operations.embedding import configured_space

    floor = load_config().coverage_floor()  # a bad value is refused before the store is opened
    store = open_store(root)
    reader = GitCorpusReader(store.root)
    with fresh_index(store) as database:
        head, dirty_paths = watermark(database)[:2]
        counts = index_totals(database)
        vectors = vector_state(database)
    configured = configured_space()
    return {
        "mode": "status",
        "headSha": head,
        "fresh": head == reader.head(),
        "embedModel": vectors.space,
        "embedDim": vectors.dims,
        "embedModelMatches": vectors.space is None or vectors.space == configured,
        "configuredEmbedModel": configured,
        "rebuiltAt": counts.rebuilt_at,
        "updatedAt": counts.updated_at,
        "files": counts.files,
        "activeFiles": counts.active_files,
        "edges": counts.edges,
        "derivedEdges": 0,
        "tags": counts.tags,
        "entities": counts.entities,
        "terms": counts.terms,
        "postings": counts.postings,
        "dirtyPaths": dirty_paths,
        "chunks": vectors.chunks,
        "embeddings": vectors.embeddings,
        "vectorCoverage": vectors.coverage,
        "vectorCoverageFloor": floor,
        "vectorCoverageLow": configured is not None and vectors.coverage < floor,
        "traces": 0,
        "hasState": counts.has_state,
    }


class IndexSession:
    """The index as a mutating command sees it: the dedupe lookup before its commit and the catch-up
    after it. When the index cannot be opened the command still works (dedupe falls back to the
    working tree) and reports an `index` warning; the next command catches up from the watermark."""

    def __init__(
        self,
        store: Store,
        database: Database | None,
        failure: MemhtmlError | None,
        stack: ExitStack | None = None,
    ) -> None:
        self.store = store
        self.database = database
        self.problem = None if failure is None else failure.message
        # What the warning tells the caller to run: a failure no retry helps (a damaged file) names its
        # own repair, and the index does not catch up by itself until that ran.
        self.repair: str | None = None if failure is None or failure.retryable else _first(failure.suggestions)
        self.reader = GitCorpusReader(store.root)
        self._stack = stack
        self._released = False

    def release(self) -> None:
        """Close the index until `follow_commit`: a long batch must not hold the file (one process may
        open it at a time) while it writes files, so readers are not kept waiting."""
        if self._stack is not None and self.database is not None:
            self._stack.close()
            self.database = None
            self._released = True

    def _lose(self, failure: MemhtmlError) -> None:
        """Go on without the index, as a session that could not open it does."""
        if self._stack is not None:
            self._stack.close()
        self.database = None
        self.problem = failure.message
        self.repair = None if failure.retryable else _first(failure.suggestions)

    def owners(self, content_hashes: Sequence[str]) -> dict[str, ActiveOwner]:
        """The active, non-task memory holding each content hash (for those that have one), with its
        semantic head as indexed; without an index, found by scanning the tree (no head)."""
        from memhtml.store.batch import ActiveOwner

        if self.database is None:
            from memhtml.store.scan import find_active_by_hash

            found = {digest: find_active_by_hash(self.store, digest) for digest in content_hashes}
            return {digest: ActiveOwner(path) for digest, path in found.items() if path is not None}
        # Asked under the store's write lock: catch up first, so a commit that landed since this index
        # was opened (another writer's, while we waited for the lock) is seen and never stored twice.
        try:
            catch_up(self.database, self.reader)
        except MemhtmlError as error:  # the index cannot answer: the tree can, and the answer warns
            self._lose(error)
            return self.owners(content_hashes)
        rows = active_rows_by_hash(self.database, content_hashes)
        if not rows:
            return {}
        # A row projected from the dirty working tree is not a committed memory: only its file can say.
        uncommitted = set(watermark(self.database).dirty_paths)
        return {
            row.content_hash: ActiveOwner(row.path, None if _listed(row.path, uncommitted) else row.head)
            for row in rows
        }

    def follow_commit(
        self,
        session_links: Sequence[SessionLink] = (),
        known: Mapping[str, FileProjection] | None = None,
        progress: PhaseProgress | None = None,
        counters_moved: Sequence[tuple[str, str]] = (),
    ) -> CommandWarning | None:
        """Index the commit just made (and record its session links); any failure here becomes a
        warning, never a failed command: the commit has landed. So does a signal: the pass stops at its
        next report and is left to the next command. `progress` as `catch_up` takes it.
        `counters_moved`: (from, to) paths whose access counters follow a memory the commit moved where
        git's diff cannot see a rename (a corrected memory archived while its successor takes its path)."""
        from memhtml.index.indexer import move_access_counters

        def follow(database: Database) -> PassReport:
            report = catch_up(database, self.reader, known=known, progress=_stopping_on_signal(progress))
            record_session_links(database, session_links, now_instant())
            move_access_counters(database, counters_moved)
            return report

        if not self._released and self.database is None:
            return self.warning()
        try:
            if interrupt_requested():
                raise KeyboardInterrupt
            if self._released:
                with open_database(self.store.root) as database:
                    report = follow(database)
            else:
                assert self.database is not None
                report = follow(self.database)
        except (Exception, KeyboardInterrupt) as error:  # the commit landed: only a warning now
            if isinstance(error, MemhtmlError):
                self.problem = error.message
                self.repair = None if error.retryable else _first(error.suggestions)
            else:
                self.problem = "interrupted" if isinstance(error, KeyboardInterrupt) else type(error).__name__
            return self.warning()
        warnings = _pass_warnings(report)
        return warnings[0] if warnings else None

    def warning(self) -> CommandWarning:
        if self.repair is not None:
            return {
                "ok": False,
                "warning": f"committed, but the index was not updated ({self.problem}); it catches up once repaired",
                "remedy": self.repair,
            }
        return {
            "ok": False,
            "warning": f"committed, but the index was not updated ({self.problem}); the next command catches up",
            "remedy": "memhtml index update",
        }


def _first(suggestions: Sequence[str]) -> str | None:
    return suggestions[0] if suggestions else None


def _listed(path: str, entries: set[str]) -> bool:
    """Whether `path`, or a directory holding it (`dir/` entries, as `git status` lists them), is listed."""
    if path in entries:
        return True
    parts = path.split("/")
    return any("/".join(parts[:depth]) + "/" in entries for depth in range(1, len(parts)))


@contextmanager
def writable_index(store: Store, *, read_before_the_lock: bool = True) -> Iterator[IndexSession]:
    """A read-write index, or a session that says why there is none. Caught up with HEAD at once when
    the caller reads it before taking the write lock (`read_before_the_lock`); a write that only asks
    `owners` leaves the one catch-up to that question, under the lock."""
    with ExitStack() as stack:
        try:
            # The commit this session is for will be indexed and embedded: load that code while DuckDB starts.
            database = stack.enter_context(open_database(store.root, meanwhile=lambda: load_pass_code(embed=True)))
            if read_before_the_lock:
                catch_up(database, GitCorpusReader(store.root))
        except MemhtmlError as error:
            stack.close()
            yield IndexSession(store, None, error)
            return
        yield IndexSession(store, database, None, stack)


def indexed_active_hashes(root: Path) -> frozenset[str]:
    """The content hashes the index shows active, read without waiting for or catching up the index: a
    hint for planning a batch (an empty set when there is no index or another process holds it), never
    the dedupe decision itself, which is made under the write lock."""
    from memhtml.index.rows import active_hashes

    if not index_exists(root):
        return frozenset()
    try:
        with open_database(root, read_only=True, lock_wait=0) as database:
            return active_hashes(database)
    except MemhtmlError:
        return frozenset()


def record_session_link(database: Database, link: SessionLink) -> None:
    """Provenance both ways: which session wrote, read or corrected which memory."""
    record_session_links(database, [link], now_instant())


def record_access(
    store: Store, path: str, session_id: str | None, prompt_id: str | None, turn_uuid: str | None
) -> CommandWarning | None:
    """Count a read of `path` (and its session link); a state failure is a warning, never a failed read."""
    now = now_instant()
    try:
        with open_database(store.root) as database:
            count_read(database, path, now)
            if session_id:
                record_session_link(database, SessionLink(path, "read", session_id, prompt_id, turn_uuid))
    except MemhtmlError as error:
        return {
            "ok": False,
            "warning": f"the read was not counted ({error.message})",
            "remedy": "memhtml status",
        }
    return None
