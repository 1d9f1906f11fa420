"""Keeping the index a projection of git: full rebuild, incremental update from the watermark, and the
projection of the dirty working tree (including paths that were dirty last time and are clean now).

Both passes read git in batches through the `CorpusReader` port and write through `rows`, so a
catch-up costs what changed, not the corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from memhtml.contracts.corpus import CorpusReader, DirtyEntry, TreeChange
from memhtml.contracts.errors import GitFailure
from memhtml.index.database import Database, membership
from memhtml.index.parallel import (
    Item,
    PendingProjection,
    SlicePipeline,
    expect_pool,
    project_slices,
    projection_pool,
)
from memhtml.index.projection import FileProjection, SkippedFile, relocated
from memhtml.index.rows import (
    ALL_TABLES,
    create_indexes,
    duplicates_due,
    empty_tables,
    forget_duplicates,
    remove_paths,
    rename_path,
    store_projections,
)
from memhtml.index.watermark import watermark

if TYPE_CHECKING:
    from memhtml.index.staging import StagedChunk

# Files are read and projected in slices so a 100k-file rebuild never holds every blob at once.
REBUILD_SLICE: Final[int] = 2000


class PassReport:
    """What one rebuild or update pass did; the pass and the vector step after it fill it in."""

    def __init__(self, mode: str, head_sha: str | None) -> None:
        self.mode = mode
        self.head_sha = head_sha
        self.added = self.modified = self.removed = self.renamed = self.dirty = self.files_indexed = 0
        self.skipped: list[SkippedFile] = []
        self.renames: list[tuple[str, str]] = []
        # The paths this pass (re)projected: the only memories whose text can lack a vector now, unless
        # an earlier pass was cut short before its vectors (`vectors_owed`, read from the watermark).
        self.projected_paths: set[str] = set()
        self.vectors_owed = mode == "rebuild"
        # The paths whose rows (or listing as a duplicate) hold working-tree bytes, not HEAD's: at the
        # start the watermark's dirty paths, kept current as the pass projects from HEAD or from disk.
        self.from_disk: set[str] = set()
        self.previously_dirty: tuple[str, ...] = ()  # the watermark's dirty paths when the pass began
        # Held copies of an article that an arriving copy displaced during this pass.
        self.displaced: set[str] = set()
        self.embeddings_written = self.embeddings_preserved = self.embeddings_pruned = 0
        self.warnings: list[dict[str, Any]] = []

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.modified or self.removed or self.renamed or self.dirty or self.files_indexed)

    def as_data(self) -> dict[str, Any]:
        skipped = [{"path": item.path, "reason": item.reason} for item in self.skipped]
        if self.mode == "rebuild":
            return {
                "mode": "rebuild",
                "headSha": self.head_sha,
                "filesIndexed": self.files_indexed,
                "dirty": self.dirty,
                "embeddingsWritten": self.embeddings_written,
                "embeddingsPreserved": self.embeddings_preserved,
                "skipped": skipped,
            }
        return {
            "mode": "update",
            "headSha": self.head_sha,
            "unchanged": self.unchanged,
            "added": self.added,
            "modified": self.modified,
            "removed": self.removed,
            "renamed": self.renamed,
            "dirty": self.dirty,
            "embeddingsWritten": self.embeddings_written,
            "skipped": skipped,
        }


class RebuildPlan:
    """What a rebuild takes from git and hands to the workers before it needs the index: HEAD, its
    memory files, and their slices already being projected into staged lines (`rebuild_plan`), and the
    directory the loader writes a slice's staging files in. `release` lets go of the workers and that
    directory once every slice is stored."""

    def __init__(
        self,
        head: str | None,
        paths: int,
        slices: SlicePipeline[Any, Any, StagedChunk],
        release: Callable[[], None],
        staging: str,
    ) -> None:
        self.head = head
        self.paths = paths
        self.slices = slices
        self.release = release
        self.staging = staging


@contextmanager
def rebuild_plan(reader: CorpusReader, now: str) -> Iterator[RebuildPlan]:
    """Read HEAD's tree and start projecting its memories on every core, for `rebuild` to store: made
    before the index is opened, the workers' first slice overlaps the open and the emptying of the tables
    (the first staged slice takes a while to arrive after the pool starts, with one core idle before)."""
    # Imported here: an update never loads this way, and would pay for these imports for nothing.
    from memhtml.index.staging import stage_blobs, staging_directory

    head = reader.head()
    if head:
        expect_pool(reader.tracked_files_above)  # the fork server boots while git lists the tree
    tree = reader.tree(head) if head else {}
    paths = sorted(tree)
    slices = [paths[start : start + REBUILD_SLICE] for start in range(0, len(paths), REBUILD_SLICE)]

    def entries(batch: list[str]) -> list[tuple[str, str]]:
        return [(path, tree[path]) for path in batch]

    # Each process reads its chunk's blobs itself and encodes the projections it makes as JSON lines, which
    # the loader writes into one staging file a slice for DuckDB to load itself.
    with ExitStack() as resources:
        directory = resources.enter_context(staging_directory())
        pool = resources.enter_context(projection_pool(len(paths)))
        source = resources.enter_context(closing(reader.blob_source()))
        work = partial(stage_blobs, now=now, source=source)
        pipeline = resources.enter_context(SlicePipeline(pool, slices, entries, work))
        yield RebuildPlan(head, len(paths), pipeline, resources.close, directory)


def rebuild(
    database: Database,
    reader: CorpusReader,
    now: str,
    *,
    progress: Callable[[int, int], None] | None = None,
    plan: RebuildPlan | None = None,
) -> PassReport:
    """Re-project every memory in HEAD (`plan`, made before the index was opened, or made now), then the
    dirty working tree; `progress` hears (files stored, files in HEAD) after each slice."""
    if plan is None:
        with rebuild_plan(reader, now) as made:
            return rebuild(database, reader, now, progress=progress, plan=made)
    head = plan.head
    report = PassReport("rebuild", head)
    with database.transaction(checkpoint_at_commit=True):
        database.run("UPDATE index_state SET head_sha = NULL WHERE id = 1")
        indexes = empty_tables(database, ALL_TABLES)
        from memhtml.index.bulkload import StagedLoader

        loader = StagedLoader(database, plan.staging)
        stored = 0
        for batch, chunks in plan.slices:
            for chunk in chunks:
                report.skipped += chunk.skipped
                report.projected_paths.update(staged.path for staged in chunk.projected)
            report.skipped += loader.load(chunks)
            stored += len(batch)
            if progress is not None:
                progress(stored, plan.paths)
        loader.close()
        plan.release()  # the workers and the staging files: every slice is stored
        create_indexes(database, indexes)  # built once from the loaded keys, before any lookup by them
        dirty_now = _project_working_tree(
            database, reader, head, reader.dirty(), previously_dirty=[], now=now, report=report
        )
        _promote_duplicates(database, reader, head, now, report)
        _settle_skipped(database, report)
        database.run(
            "UPDATE index_state SET head_sha = $head, dirty_paths = $paths, rebuilt_at = $now, updated_at = $now, "
            "vectors_owed = TRUE WHERE id = 1",
            {"head": head, "paths": dirty_now, "now": now},
        )
    report.files_indexed = int(database.value("SELECT count(*) FROM files"))
    return report


def update(
    database: Database,
    reader: CorpusReader,
    now: str,
    *,
    worktree: bool = True,
    known: Mapping[str, FileProjection] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> PassReport:
    """Apply what changed since the watermark (renames re-pointed, not re-parsed), then the dirty tree.

    `worktree=False` skips the working-tree scan (`git status` walks every file), which keeps the
    write path's cost flat in the corpus size; `index update` and rebuilds always include it.
    `known` maps blob ids to projections the caller already made of exactly those bytes (a batch
    renders and checks every file before committing it), so they are not read and parsed again.
    `progress` hears (files stored, files changed) after each slice of the commits' files.
    """
    indexed_head, previously_dirty, built, owed_before = watermark(database)
    head = reader.head()
    if not built or (indexed_head is None and head is not None):
        return rebuild(database, reader, now)  # never completed, or a rebuild was cut short
    changes: list[TreeChange] = []
    if indexed_head is not None and head is not None and indexed_head != head:
        try:
            changes = reader.changes(indexed_head, head)
        except GitFailure:
            return rebuild(database, reader, now)  # the watermark's commit is gone (history rewritten)
    report = PassReport("update", head)
    report.vectors_owed = owed_before
    if head == indexed_head and not worktree:
        return report  # already at HEAD: writing nothing keeps the close from checkpointing
    report.from_disk.update(previously_dirty)
    report.previously_dirty = tuple(previously_dirty)
    with database.transaction():
        if changes:
            _apply_commits(database, reader, changes, now=now, report=report, known=known or {}, progress=progress)
        elif head is None and indexed_head is not None:
            report.removed += remove_paths(database, _all_paths(database))
            forget_duplicates(database, _listed_paths(database))
        if worktree:
            dirty_now: list[str] | None = _project_working_tree(
                database, reader, head, reader.dirty(), previously_dirty=previously_dirty, now=now, report=report
            )
        else:
            dirty_now = _project_changed_paths_on_disk(
                database, reader, head, changes=changes, known=known or {}, now=now, report=report
            )
        _promote_duplicates(database, reader, head, now, report)
        _settle_skipped(database, report)
        # The watermark in one statement: the head, the dirty paths when they may have changed (each
        # update of the one row costs a statement), and whether texts arrived whose vectors are owed.
        owed = "vectors_owed = TRUE, " if report.projected_paths else ""
        if dirty_now is not None:
            paths_sql, paths_parameters = _paths_value(dirty_now)
            database.run(
                f"UPDATE index_state SET head_sha = $head, dirty_paths = {paths_sql}, {owed}updated_at = $now "
                "WHERE id = 1",
                {"head": head, "now": now, **paths_parameters},
            )
        else:
            database.run(
                f"UPDATE index_state SET head_sha = $head, {owed}updated_at = $now WHERE id = 1",
                {"head": head, "now": now},
            )
    move_access_counters(database, report.renames)
    return report


def _paths_value(paths: Sequence[str]) -> tuple[str, dict[str, list[str]]]:
    """The watermark's dirty paths in a statement, and its parameters: `[]` written out for none (a clean
    tree, the common case), so that no list is bound (`database.SCALAR_INSERT_VALUES`), else `$paths`."""
    return ("$paths", {"paths": list(paths)}) if paths else ("[]", {})


def _apply_commits(
    database: Database,
    reader: CorpusReader,
    changes: Sequence[TreeChange],
    *,
    now: str,
    report: PassReport,
    known: Mapping[str, FileProjection],
    progress: Callable[[int, int], None] | None,
) -> None:
    removed = [change.path for change in changes if change.status == "D"]
    report.removed += remove_paths(database, removed)
    report.from_disk.difference_update(removed)
    for change in changes:
        if change.status == "R" and change.old_path is not None:
            if rename_path(database, change.old_path, change.path) or _moved_before(database, change):
                report.renamed += 1
                report.renames.append((change.old_path, change.path))
            else:
                report.added += 1
    # Renamed files are re-projected too: a move usually comes with a head stamp (archive, correct).
    wanted = [(change.path, change.blob_sha) for change in changes if change.status != "D" and change.blob_sha]

    # In slices, so a 50k-file commit never holds every blob and projection at once; one worker pool.
    def read(chunk: list[tuple[str, str]]) -> list[Item]:
        unknown = [(path, sha) for path, sha in chunk if sha not in known]
        contents = reader.committed_blobs(unknown)
        return [(path, sha, contents.get(sha)) for path, sha in unknown]

    chunks = [wanted[start : start + REBUILD_SLICE] for start in range(0, len(wanted), REBUILD_SLICE)]
    stored = 0
    with projection_pool(sum(1 for _, sha in wanted if sha not in known)) as pool:
        for chunk, results in project_slices(pool, chunks, read, now):
            reused = [relocated(known[sha], path) for path, sha in chunk if sha in known]
            report.from_disk.difference_update(path for path, _ in chunk)  # their rows now hold HEAD's bytes
            projected = _sorted_results(database, results, report)
            _store(database, sorted([*projected, *reused], key=lambda item: item.path), report)
            stored += len(chunk)
            if progress is not None:
                progress(stored, len(wanted))
    report.added += sum(1 for change in changes if change.status == "A")
    report.modified += sum(1 for change in changes if change.status == "M")


def _project_changed_paths_on_disk(
    database: Database,
    reader: CorpusReader,
    head: str | None,
    *,
    changes: Sequence[TreeChange],
    known: Mapping[str, FileProjection],
    now: str,
    report: PassReport,
) -> list[str] | None:
    """Without a working-tree scan, the paths the commits changed as the working tree has them: a file
    whose bytes on disk are not HEAD's (a `reset` that kept the changes, a partial commit, a file taken
    out of git that stays on disk) is projected from disk, as a scan would, not left with HEAD's text.
    Only those paths are looked at (hashed here), and not the ones whose bytes the caller committed itself
    (`known`); git's status is asked only about the ones whose bytes differ (a rare state). Returns the
    watermark's dirty paths, sorted, or None when the pass changed none of them."""
    expected: dict[str, str | None] = {}
    for change in changes:
        if change.status == "R" and change.old_path is not None:
            expected.setdefault(change.old_path, None)
        expected[change.path] = None if change.status == "D" else change.blob_sha
    for path, blob in list(expected.items()):
        if blob is not None and blob in known:
            del expected[path]
    if not expected:
        return sorted(report.from_disk) if report.from_disk != set(report.previously_dirty) else None
    on_disk = reader.worktree_blob_ids(list(expected))
    # Bytes that differ are only a hint (a filter, a sparse checkout, an ignored file): git decides.
    differing = [path for path, blob in expected.items() if on_disk.get(path) != blob]
    entries = reader.dirty_among(differing) if differing else []
    previously = sorted(set(report.previously_dirty).intersection(expected))
    _project_working_tree(database, reader, head, entries, previously_dirty=previously, now=now, report=report)
    return sorted(report.from_disk) if report.from_disk != set(report.previously_dirty) else None


def _project_working_tree(
    database: Database,
    reader: CorpusReader,
    head: str | None,
    entries: Sequence[DirtyEntry],
    *,
    previously_dirty: Sequence[str],
    now: str,
    report: PassReport,
) -> list[str]:
    """Project dirty files (`entries`) from disk; re-project from HEAD the paths of `previously_dirty`
    that are clean now. Returns the dirty paths, sorted, for the watermark (`index_state.dirty_paths`)."""
    dirty_now = {entry.path for entry in entries}
    # A path this pass already projected from HEAD (its edit was committed since) is current as it is.
    cleaned = sorted(set(previously_dirty) - dirty_now - report.projected_paths)
    if cleaned:
        committed = reader.tree(head, cleaned) if head else {}
        gone = [path for path in cleaned if path not in committed]
        moved = _follow_moves(database, gone, committed, report)  # a dirty `git mv` moved back
        report.removed += remove_paths(database, [path for path in gone if path not in moved])
        contents = reader.blobs(committed.values())
        restored = _project_all(
            database, ((path, sha, contents.get(sha)) for path, sha in committed.items()), now, report
        )
        report.from_disk.difference_update(cleaned)
        _store(database, restored, report)
        report.modified += len(restored)  # back to HEAD's text: the row changed, so the pass did too
    deleted = [entry.path for entry in entries if entry.deleted]
    present = [entry.path for entry in entries if not entry.deleted]
    blobs = reader.worktree_blobs(present)
    moved = _follow_moves(database, deleted, {path: sha for path, (sha, _) in blobs.items()}, report)
    report.removed += remove_paths(database, [path for path in deleted if path not in moved])
    projected = _project_all(database, ((path, sha, data) for path, (sha, data) in blobs.items()), now, report)
    report.from_disk.difference_update(deleted)
    report.from_disk.update(present)
    _store(database, projected, report)
    report.dirty += len(entries)
    return sorted(dirty_now)


def _follow_moves(
    database: Database, leaving: Sequence[str], arriving: Mapping[str, str], report: PassReport
) -> set[str]:
    """Re-point the row of each leaving path whose exact bytes arrive at a path without a row (a `git mv`
    the working tree holds, not yet committed, or one moved back), so its doc_id, vectors and access
    counters follow it, as a committed rename's do; returns the leaving paths re-pointed. The arriving
    files are projected again afterwards (a move can change what a path implies: archived, workspace)."""
    if not leaving or not arriving:
        return set()
    among, parameters = membership("path", "paths", [*leaving, *arriving])
    indexed = dict(database.rows(f"SELECT path, blob_sha FROM files WHERE {among}", parameters))
    free: dict[str, list[str]] = {}
    for path in sorted(arriving):
        if path not in indexed:
            free.setdefault(arriving[path], []).append(path)
    moved: set[str] = set()
    for old in sorted(leaving):
        targets = free.get(indexed.get(old, ""))
        if targets and rename_path(database, old, targets[0]):
            new = targets.pop(0)
            moved.add(old)
            report.renamed += 1
            report.renames.append((old, new))
    return moved


def _promote_duplicates(
    database: Database, reader: CorpusReader, head: str | None, now: str, report: PassReport
) -> None:
    """Index again each listed duplicate that should be held now (the held copy was deleted, edited,
    archived, broken, or displaced by a copy that comes first), from the bytes it was listed with, if
    its path still holds them: HEAD's for a committed copy, the disk's for an uncommitted one. Storing
    the copies in `held_first` order holds the first of each article and lists the rest again."""
    due = duplicates_due(database, report.from_disk)
    if not due:
        return
    on_disk = reader.worktree_blobs([path for path, _ in due if path in report.from_disk])
    committed = reader.tree(head, [path for path, _ in due if path not in report.from_disk]) if head else {}
    contents = reader.blobs(blob for path, blob in due if committed.get(path) == blob)
    items: list[tuple[str, str, bytes | None]] = []
    for path, blob in due:
        if path in report.from_disk and on_disk.get(path, ("", b""))[0] == blob:
            items.append((path, blob, on_disk[path][1]))
        elif path not in report.from_disk and committed.get(path) == blob:
            items.append((path, blob, contents.get(blob)))
    already = report.projected_paths | report.displaced
    projected = _project_all(database, items, now, report)
    _store(database, projected, report)
    held = _held(database, [projection.path for projection in projected])
    report.added += sum(1 for projection in projected if projection.path in held and projection.path not in already)


def _held(database: Database, paths: Sequence[str]) -> set[str]:
    """Those of `paths` that have a files row."""
    if not paths:
        return set()
    among, parameters = membership("path", "paths", paths)
    return {str(row[0]) for row in database.rows(f"SELECT path FROM files WHERE {among}", parameters)}


def _settle_skipped(database: Database, report: PassReport) -> None:
    """The pass's `skipped` as the index ends it: one entry per path (its last reason), and none for a
    path held after all (a copy listed early in the pass and held once the first copy went)."""
    last = {item.path: item for item in report.skipped}
    held = _held(database, list(last))
    report.skipped = [item for path, item in sorted(last.items()) if path not in held]


def _store(database: Database, projections: Sequence[FileProjection], report: PassReport) -> None:
    skipped = store_projections(database, projections, from_disk=report.from_disk)
    arriving = {projection.path for projection in projections}
    report.displaced.update(item.path for item in skipped if item.path not in arriving)
    report.skipped += skipped
    report.projected_paths.update(arriving)


def _project_all(
    database: Database, items: Iterable[tuple[str, str, bytes | None]], now: str, report: PassReport
) -> list[FileProjection]:
    """Project every item; a large change set (a big batch commit) is projected on every core."""
    listed = list(items)
    with projection_pool(len(listed)) as pool:
        return _sorted_results(database, PendingProjection(pool, listed, now).results(), report)


def _moved_before(database: Database, change: TreeChange) -> bool:
    """Whether a committed rename's rows already moved: a pass saw the `git mv` in the working tree."""
    found = database.value(
        "SELECT count(*) FROM files WHERE path = $new AND path <> $old", {"new": change.path, "old": change.old_path}
    )
    return int(found) > 0


def move_access_counters(database: Database, renames: Sequence[tuple[str, str]]) -> None:
    """Access counters follow a renamed memory; DuckDB writes one database per transaction, so apart. A
    counter that already moved (the working tree held the move first) stays where it is."""
    if not renames or database.read_only:
        return
    with database.transaction():
        for old, new in renames:
            moves = {"old": old, "new": new}
            database.run(
                "DELETE FROM state.access WHERE path = $new AND $new <> $old "
                "AND EXISTS (SELECT 1 FROM state.access WHERE path = $old)",
                moves,
            )
            database.run("UPDATE state.access SET path = $new WHERE path = $old", moves)


def _sorted_results(
    database: Database, results: Sequence[FileProjection | SkippedFile], report: PassReport
) -> list[FileProjection]:
    """The projections among `results`; a skipped file is reported and its path's row dropped: the row
    holds text the file no longer has (a committed or dirty edit broke it), which a rebuild would not
    index either."""
    projected: list[FileProjection] = []
    skipped: list[str] = []
    for result in results:
        if isinstance(result, SkippedFile):
            report.skipped.append(result)
            skipped.append(result.path)
        else:
            projected.append(result)
    if skipped:
        report.removed += remove_paths(database, skipped)
    return projected


def _listed_paths(database: Database) -> list[str]:
    return [row[0] for row in database.rows("SELECT path FROM duplicate_files")]


def _all_paths(database: Database) -> list[str]:
    return [row[0] for row in database.rows("SELECT path FROM files")]
