"""Work on many files on every core: the CPU-bound part of a rebuild, `validate` and `doctor` runs in
worker processes.

Parsing and checking a memory costs a few hundred microseconds of pure Python, so a 10k-file rebuild
is dominated by it; workers project slices while the parent writes the previous slice to DuckDB.
Small passes stay in-process, where a pool would cost more than it saves.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Final, Generic, TypeAlias, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future
    from multiprocessing.context import BaseContext

    from memhtml.index.projection import FileProjection, SkippedFile

PARALLEL_MINIMUM_FILES: Final[int] = 1000
CHUNK_FILES: Final[int] = 250
# Chunks `in_order` hands the workers ahead of the one being answered: enough to keep every worker busy,
# few enough that memory holds a few thousand files, whatever the store's size.
CHUNKS_AHEAD: Final[int] = 8
MAX_WORKERS: Final[int] = 4
PARENT_POLL_SECONDS: Final[float] = 0.2

Item = tuple[str, str, bytes | None]
Entry = TypeVar("Entry")  # what a slice is read into and worked on: items, or (path, blob sha) pairs
Slice = TypeVar("Slice")
Chunk = TypeVar("Chunk")
Answer = TypeVar("Answer")
# The projection is imported where it runs, not here: `doctor` and `validate` take their pool from this
# module and never project (the projection's modules would slow `validate --staged`, a commit hook).
Projected: TypeAlias = "FileProjection | SkippedFile"
# Pools forked ahead (`fork_workers_ahead`), by the process that forked them: a child of this one never
# takes its parent's workers.
_forked_ahead: dict[int, Executor] = {}


def project_items(items: Sequence[Item], now: str) -> list[Projected]:
    """Project `(path, blob sha, bytes)` items in order; an unreadable blob is a skipped file."""
    from memhtml.index.projection import SkippedFile, project_file

    return [
        SkippedFile(path, "blob could not be read") if content is None else project_file(path, sha, content, now)
        for path, sha, content in items
    ]


@contextmanager
def projection_pool(file_count: int) -> Iterator[Executor | None]:
    """A worker pool when the pass is big enough and there is more than one core, else None."""
    workers = _worker_count()
    forked = _forked_ahead.pop(os.getpid(), None)
    if file_count < PARALLEL_MINIMUM_FILES or workers < 2:
        if forked is not None:
            forked.shutdown()  # idle workers: they end at once, before this process's exit looks for children
        yield None
        return
    if forked is not None:
        with forked:
            yield forked
        return
    # Imported here: the pool machinery is a sizeable import, which every small update would pay for nothing.
    from concurrent.futures import ProcessPoolExecutor

    context = start_projection_server()
    if context is None:  # no process can be started (a process limit): project in this one
        yield None
        return
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=exit_with_parent, initargs=(os.getpid(),)
    ) as pool:
        yield pool


def expect_pool(files_above: Callable[[int], bool]) -> None:
    """Start the fork server now if a pass will want a pool: more than one core, and `files_above` (a
    hint of the pass's size, asked only then) says it reaches `PARALLEL_MINIMUM_FILES`."""
    if os.getpid() not in _forked_ahead and _worker_count() >= 2 and files_above(PARALLEL_MINIMUM_FILES - 1):
        start_projection_server()


def fork_workers_ahead(files_above: Callable[[int], bool]) -> None:
    """Fork the next pool's workers from this process now, if it has no thread but its main one and
    `files_above` says the pass reaches `PARALLEL_MINIMUM_FILES`; the next `projection_pool` of this
    process takes them.

    Only a process with one thread may fork: a thread's lock held at the fork stays held in the child
    forever. A command that will project its whole store (`index rebuild`) asks for this first thing,
    before the index is opened on a thread (DuckDB starts threads of its own). Forked workers have the
    projection already imported and need no fork server, nor the resource tracker that one starts: two
    interpreters booted for nothing, CPU a rebuild on few cores needs for its own work.
    """
    pid = os.getpid()
    if pid in _forked_ahead or _worker_count() < 2 or not _only_thread():
        return
    if not files_above(PARALLEL_MINIMUM_FILES - 1):
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # The workers' code, imported once here for every fork to share.
    import memhtml.index.projection
    import memhtml.index.staging  # noqa: F401

    pool = ProcessPoolExecutor(
        max_workers=_worker_count(),
        mp_context=multiprocessing.get_context("fork"),
        initializer=exit_with_parent,
        initargs=(pid,),
    )
    children = set(multiprocessing.active_children())
    try:
        pool.submit(os.getpid)  # a pool of forks forks every worker at its first task, before its threads
    except (OSError, RuntimeError):
        # A fork refused midway (a process limit): the workers already forked would wait for tasks
        # that never come, and this process's exit would wait for them.
        for worker in set(multiprocessing.active_children()) - children:
            worker.kill()
        pool.shutdown(wait=False, cancel_futures=True)
        return
    _forked_ahead[pid] = pool


def _only_thread() -> bool:
    """Whether this process runs one thread, native ones included (Linux's `/proc` says; elsewhere the
    answer is no, and the fork server is used)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _worker_count() -> int:
    """The workers a pool takes: one per core, at most `MAX_WORKERS`; fewer than two means no pool."""
    return min(os.cpu_count() or 1, MAX_WORKERS)


def start_projection_server() -> BaseContext | None:
    """Start the fork server the pool's workers come from, if it is not running, and return its context;
    None when no process can be started.

    A fork server imports the projection once; forking it is then cheap, and the parent's DuckDB threads
    are never forked. Booting it (a fresh interpreter importing the projection) runs beside the caller,
    which may start it before it knows its files (a rebuild, while git lists HEAD's tree); the first
    submit would otherwise wait for all of it.
    """
    import multiprocessing
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["memhtml.index.projection", "memhtml.index.staging"])
    try:
        forkserver.ensure_running()
    except OSError:
        return None
    return context


def exit_with_parent(parent_pid: int) -> None:
    """Make this worker end when `parent_pid` does, even when the parent was killed with SIGKILL.

    A worker blocked on its task queue outlives a killed parent, and it inherited the parent's open
    files, the write lock among them; left running it would hold the store locked for nobody.
    """
    import threading
    import time

    def watch() -> None:
        while _process_alive(parent_pid):
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # The state follows the parenthesised command name; a zombie has exited already.
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def in_order(
    pool: Executor | None, chunks: Iterable[Chunk], work: Callable[[Chunk], Answer]
) -> Iterator[tuple[Chunk, Answer]]:
    """Each chunk with `work` done on it, in order: in the pool's workers, with at most `CHUNKS_AHEAD`
    chunks taken from `chunks` ahead of the one answered, so a lazily read input is never all in memory;
    without a pool, here, one chunk at a time. A chunk the pool refuses, or whose worker dies, is worked
    here. `work` must be picklable (a module-level function)."""
    if pool is None:
        for chunk in chunks:
            yield chunk, work(chunk)
        return
    from concurrent.futures.process import BrokenProcessPool

    def answer(chunk: Chunk, future: Future[Answer] | None) -> Answer:
        try:
            return future.result() if future is not None else work(chunk)
        except (BrokenProcessPool, OSError):
            return work(chunk)

    in_flight: deque[tuple[Chunk, Future[Answer] | None]] = deque()
    for chunk in chunks:
        try:
            in_flight.append((chunk, pool.submit(work, chunk)))
        except (BrokenProcessPool, OSError, RuntimeError):
            in_flight.append((chunk, None))  # worked here when its turn comes
        if len(in_flight) >= CHUNKS_AHEAD:
            oldest, future = in_flight.popleft()
            yield oldest, answer(oldest, future)
    while in_flight:
        oldest, future = in_flight.popleft()
        yield oldest, answer(oldest, future)


class PendingWork(Generic[Entry, Answer]):
    """`work` done on one slice's items in chunks of `CHUNK_FILES`: now (no pool) or in workers, collected
    by `results`, one answer per chunk in order. `work` must be picklable (a module-level function, or a
    `functools.partial` of one)."""

    def __init__(
        self, pool: Executor | None, items: Sequence[Entry], work: Callable[[Sequence[Entry]], Answer]
    ) -> None:
        self._items = items
        self._work = work
        self._ready: list[Answer] | None = None
        self._futures: list[Future[Answer]] = []
        if pool is None:
            self._ready = self._here()
            return
        from concurrent.futures.process import BrokenProcessPool

        try:
            for start in range(0, len(items), CHUNK_FILES):
                self._futures.append(pool.submit(work, list(items[start : start + CHUNK_FILES])))
        except (BrokenProcessPool, OSError, RuntimeError):
            self._ready = self._here()

    def results(self) -> list[Answer]:
        """The chunks' answers; if the workers died (or could not start), computed here instead."""
        if self._ready is not None:
            return self._ready
        from concurrent.futures.process import BrokenProcessPool

        try:
            return [future.result() for future in self._futures]
        except (BrokenProcessPool, OSError):
            return self._here()

    def _here(self) -> list[Answer]:
        return [
            self._work(self._items[start : start + CHUNK_FILES]) for start in range(0, len(self._items), CHUNK_FILES)
        ]


class PendingProjection:
    """Projections of one slice, computed now (no pool) or in workers (collected by `results`)."""

    def __init__(self, pool: Executor | None, items: Sequence[Item], now: str) -> None:
        self._pending = PendingWork(pool, items, partial(project_items, now=now))

    def results(self) -> list[Projected]:
        """The slice's projections, in order."""
        return [projected for chunk in self._pending.results() for projected in chunk]


def project_slices(
    pool: Executor | None, slices: Sequence[Slice], read: Callable[[Slice], Sequence[Item]], now: str
) -> Iterator[tuple[Slice, list[Projected]]]:
    """Each slice with its projections, in order (`SlicePipeline`); `read` gives a slice's items (its
    blobs, from git)."""
    with SlicePipeline(pool, slices, read, partial(project_items, now=now)) as pipeline:
        for batch, chunks in pipeline:
            yield batch, [projected for chunk in chunks for projected in chunk]


class SlicePipeline(Generic[Slice, Entry, Answer]):
    """`work` done on each slice's items, started when made: with a pool, the first slice's chunks are with
    the workers before the constructor returns, so the caller can do other work (open the index) while
    they run; iterating gives each slice with its chunks' answers, in order. Use it as a context manager:
    leaving stops its blob reader.

    With a pool the work runs as a pipeline, so no stage waits for another between slices: a thread
    reads the blobs of the slice after next while the workers work the next slice and the caller
    stores this one's answers (read in turn, a rebuild spent a noticeable time reading blobs with its
    workers idle).
    """

    def __init__(
        self,
        pool: Executor | None,
        slices: Sequence[Slice],
        read: Callable[[Slice], Sequence[Entry]],
        work: Callable[[Sequence[Entry]], Answer],
    ) -> None:
        self._pool = pool
        self._read = read
        self._work = work
        self._unread: deque[Slice] = deque(slices)
        self._reads: deque[tuple[Slice, Future[Sequence[Entry]]]] = deque()
        self._submitted: deque[tuple[Slice, PendingWork[Entry, Answer]]] = deque()
        self._reader: Executor | None = None
        if pool is not None and slices:
            from concurrent.futures import ThreadPoolExecutor

            self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memhtml-blob-reader")
            self._read_next()
            self._submit_next()

    def __enter__(self) -> SlicePipeline[Slice, Entry, Answer]:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._reader is not None:
            self._reader.shutdown(wait=True)

    def __iter__(self) -> Iterator[tuple[Slice, list[Answer]]]:
        if self._reader is None:
            while self._unread:
                batch = self._unread.popleft()
                yield batch, PendingWork(self._pool, self._read(batch), self._work).results()
            return
        while self._submitted:
            if self._reads:
                self._submit_next()  # the workers get the next slice before this one is awaited
            handed = self._submitted.popleft()
            yield handed[0], handed[1].results()
            del handed  # its blobs go before the wait for the next read, not after it

    def _read_next(self) -> None:
        if self._unread and self._reader is not None:
            batch = self._unread.popleft()
            self._reads.append((batch, self._reader.submit(self._read, batch)))

    def _submit_next(self) -> None:
        batch, items = self._reads.popleft()
        self._submitted.append((batch, PendingWork(self._pool, items.result(), self._work)))
        self._read_next()
