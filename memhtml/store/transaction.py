"""One store transaction: create, rewrite and move memory files, then commit them all as one commit.

The caller holds the write lock. Every touched path is journaled first (its prior bytes, or its
absence); until the branch moves, any failure, interrupt or SIGINT/SIGTERM/SIGHUP puts every byte back,
so the tree is identical to before. Once the branch has moved the files belong to history: nothing is
undone and no signal interrupts the answer (`store/interrupts.py`). Moves are `git mv`-shaped (the
source leaves the tree in the same commit). The journal is also written to `.git`
(`store/recovery.py`), so what a writer killed outright leaves is put back by the next command.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Final, NamedTuple

from memhtml.contracts.errors import DetachedHead, DirtyTree
from memhtml.store import interrupts
from memhtml.store.commit import (
    PACK_THRESHOLD,
    TRANSACTION_REF_PREFIX,
    Landed,
    Staged,
    commit_paths,
    drop_transaction_ref,
    index_records,
    leftover_transaction_refs,
    sweep_private_indexes,
)
from memhtml.store.files import (
    LinkedPath,
    create_file_exclusively,
    linked_component,
    linked_refusal,
    read_regular_file,
    remove_directories,
)
from memhtml.store.gitcmd import detached_head, head_sha, missing_object, run_git
from memhtml.store.gitread import GitCorpusReader
from memhtml.store.lock import write_lock
from memhtml.store.recovery import JournalFile, recover_interrupted_writes
from memhtml.store.repository import Store
from memhtml.store.upkeep import start_maintenance_if_due

# Files written between two progress reports: a report per file would cost more than a person can read.
PROGRESS_FILES: Final[int] = 100


class FileChange(NamedTuple):
    """`text` lands at `path`. `source` set: the file moves from there (`git mv`); `rewrite`: `path` is an
    existing committed file replaced in place; neither: a new file."""

    path: str
    text: str
    source: str | None = None
    rewrite: bool = False


class Committed(NamedTuple):
    landed: Landed

    @property
    def index_synced(self) -> bool:
        """Whether the user's git index now shows our paths as committed."""
        return self.landed.index_synced


class _CommitTally:
    """The commits this process has landed (`commit_changes`), so `exclusive` knows whether its block made one."""

    landed = 0


@contextlib.contextmanager
def exclusive(store: Store) -> Iterator[None]:
    """The store's write lock, with SIGINT/SIGTERM/SIGHUP turned into interrupts so rollbacks run, and
    what any killed writer left (files of its unfinished transaction, its private index files, its
    transaction refs, git's index lock: `store.recovery`) cleared away. A store whose HEAD is detached
    is refused: a commit there would belong to no branch. A block that committed is followed by what `git commit` would
    start, git's automatic maintenance (`store.upkeep`), once the lock is released: a `git gc` run in
    the foreground (`gc.autoDetach` off) must not keep the next writer waiting."""
    landed_before = _CommitTally.landed
    with interrupts.signals_taken(), write_lock(store.git_dir):
        sweep_private_indexes(store.git_dir)
        for ref in leftover_transaction_refs(store.git_dir):
            drop_transaction_ref(store.root, ref)
        recover_interrupted_writes(store.root, store.git_dir)
        refuse_detached_head(store)
        yield
    if _CommitTally.landed != landed_before:
        start_maintenance_if_due(store.root, store.git_dir)


def refuse_detached_head(store: Store) -> None:
    """Refuse to commit while HEAD names a commit instead of a branch (a checkout of a tag or a commit,
    a rebase or bisect in progress): the commit would be reachable from no branch once HEAD moves on."""
    head = detached_head(store.git_dir)
    if head is None:
        return
    raise DetachedHead(
        f"HEAD is detached at {head[:12]}: a commit made now would belong to no branch; nothing was written",
        [f"git -C {store.root} switch -", f"git -C {store.root} switch -c <branch>", f"git -C {store.root} status"],
    )


def read_committed(store: Store, paths: Iterable[str]) -> dict[str, str]:
    """HEAD's text of each path that HEAD holds (one `ls-tree` and one `cat-file --batch`)."""
    wanted = list(dict.fromkeys(paths))
    if not wanted:
        return {}
    reader = GitCorpusReader(store.root)
    head = reader.head()
    if head is None:
        return {}
    tree = reader.tree(head, wanted)
    blobs = reader.blobs(tree.values())
    lost = sorted(path for path, sha in tree.items() if sha not in blobs)
    if lost:
        raise missing_object(store.root, f"HEAD's copy of {lost[0]}")
    return {path: blobs[sha].decode("utf-8") for path, sha in tree.items()}


class ModificationGuard:
    """Refuses to rewrite or move a committed file that holds someone's uncommitted work: changed or
    missing in the working tree, or with changes staged in the user's git index (which we would
    either sweep into our commit or overwrite). The staged paths are listed once, when first needed."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._staged: frozenset[str] | None = None

    def check(self, path: str, committed_text: str) -> None:
        # A directory of `path` swapped for a symbolic link leads elsewhere, whatever bytes sit there:
        # git no longer sees the committed file, and a rewrite or move would land outside the store.
        try:
            on_disk = read_regular_file(self.store.root, path)
        except LinkedPath as link:
            raise linked_refusal(link.component, "rewritten and moved") from None
        if on_disk != committed_text.encode("utf-8"):
            raise DirtyTree(
                f"{path} has uncommitted changes (or is missing from the working tree); nothing was written",
                [f"git diff -- {path}", f"git checkout -- {path}", f"git commit -- {path}"],
            )
        if path in self.staged():
            raise DirtyTree(
                f"{path} has changes staged in the git index; nothing was written",
                [f"git diff --cached -- {path}", f"git commit -- {path}", f"git restore --staged -- {path}"],
            )

    def staged(self) -> frozenset[str]:
        if self._staged is None:
            output = run_git(
                self.store.root, ["diff-index", "--cached", "--name-only", "-z", "HEAD", "--"], ok_statuses=(0, 128)
            ).stdout
            self._staged = frozenset(name.decode("utf-8", "surrogateescape") for name in output.split(b"\0") if name)
        return self._staged


def commit_changes(
    store: Store, changes: Sequence[FileChange], message: str, *, progress: Callable[[int, int], None] | None = None
) -> Committed:
    """Put `changes` in the working tree and commit them as one commit; restore everything on failure.
    `progress` hears (files written, files) while a large change set is written."""
    planned_on = head_sha(store.root)
    journal = _Journal(store.root, _begin_journal(store, changes))
    destinations = {change.path for change in changes}
    # A source that another change refills (an in-place correction) stays in the tree.
    staged = [
        Staged(change.source, present=False)
        for change in changes
        if change.source is not None and change.source not in destinations
    ]
    staged += [Staged(change.path, data=change.text.encode("utf-8")) for change in changes]
    keep_as = TRANSACTION_REF_PREFIX + journal.log.path.name if len(changes) >= PACK_THRESHOLD else None
    try:
        try:
            if keep_as is not None:
                records = _write_while_packing(store, journal, changes, staged, keep_as=keep_as, progress=progress)
            else:
                for change in changes:
                    journal.apply(change)
                records = index_records(store.root, staged)
            landed = commit_paths(store.root, store.git_dir, staged, message, records, planned_on=planned_on)
        except BaseException:
            with interrupts.held():  # an undo cut short would leave the tree half put back
                journal.undo()
            raise
    finally:
        if keep_as is not None:
            with interrupts.held(), contextlib.suppress(Exception):  # swept by the next writer otherwise
                drop_transaction_ref(store.root, keep_as)
    journal.log.finish()
    _CommitTally.landed += 1
    return Committed(landed)


def _begin_journal(store: Store, changes: Sequence[FileChange]) -> JournalFile:
    """Record on disk, before the tree is touched, every file the transaction creates and every
    directory it makes (rewrites and moves record their prior bytes as they happen)."""
    creates = [(change.path, change.text.encode("utf-8")) for change in changes if not change.rewrite]
    checked: set[Path] = set()
    directories: set[str] = set()
    for path, _ in creates:
        parent = (store.root / path).parent
        while parent != store.root and parent not in checked:
            checked.add(parent)
            if os.path.lexists(parent):
                break
            directories.add(parent.relative_to(store.root).as_posix())
            parent = parent.parent
    return JournalFile.begin(store.git_dir, creates, directories)


def _write_while_packing(
    store: Store,
    journal: _Journal,
    changes: Sequence[FileChange],
    staged: Sequence[Staged],
    *,
    keep_as: str,
    progress: Callable[[int, int], None] | None,
) -> bytes:
    """Write the working-tree files on a thread while git packs the same bytes from memory (kept
    reachable from `keep_as`): creating thousands of small files is I/O the packing need not wait for.
    Both finish before anything else. `progress` is called from the writing thread, the only caller
    while it runs."""
    from concurrent.futures import ThreadPoolExecutor, wait

    with ThreadPoolExecutor(max_workers=1) as pool:
        writing = pool.submit(journal.apply_all, changes, progress)
        try:
            records = index_records(store.root, staged, keep_as=keep_as)
        finally:
            with interrupts.held():
                wait([writing])  # never undo (or commit) while files are still being written
        writing.result()  # a failed write fails the transaction
    return records


class _Journal:
    """What a transaction did to the working tree, so it can be put back byte for byte."""

    def __init__(self, root: Path, log: JournalFile) -> None:
        self.root = root
        self.log = log  # the same journal on disk, for a writer killed before it can undo
        self.created: list[str] = []
        self.directories: list[Path] = []
        self.known_directories: set[Path] = set()
        self.prior: list[tuple[str, bytes]] = []

    def apply_all(self, changes: Sequence[FileChange], progress: Callable[[int, int], None] | None = None) -> None:
        for number, change in enumerate(changes, 1):
            self.apply(change)
            if progress is not None and (number % PROGRESS_FILES == 0 or number == len(changes)):
                progress(number, len(changes))

    def apply(self, change: FileChange) -> None:
        """Make one change; a signal waits until it is made and noted, so an undo knows of it."""
        with interrupts.held():
            self._apply(change)

    def _apply(self, change: FileChange) -> None:
        if change.rewrite:
            self._replace(change.path, change.text)
            return
        if change.source is not None:
            self._refuse_links(change.source)
        self.directories += create_file_exclusively(self.root, change.path, change.text, self.known_directories)
        self.created.append(change.path)
        if change.source is not None:
            source = self.root / change.source
            prior = source.read_bytes()
            self.log.remove(change.source, prior)
            self.prior.append((change.source, prior))
            source.unlink()

    def _replace(self, path: str, text: str) -> None:
        target = self.root / path
        self._refuse_links(path)
        prior = target.read_bytes()
        temporary = target.with_name(f".{target.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
        data = text.encode("utf-8")
        self.log.rewrite(path, prior, data, temporary.name)
        self.prior.append((path, prior))
        try:
            with temporary.open("xb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)

    def _refuse_links(self, path: str) -> None:
        """The guard checked this path when the operation read it; refuse a link swapped in since."""
        component = linked_component(self.root, path)
        if component is not None:
            raise linked_refusal(component, "rewritten and moved")

    def undo(self) -> None:
        # New files go first: an in-place correction creates a file where the moved one used to be.
        for path in self.created:
            (self.root / path).unlink(missing_ok=True)
        for path, data in reversed(self.prior):
            target = self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        remove_directories(self.directories)
        self.log.finish()  # an undo cut short leaves the journal for the next lock holder
