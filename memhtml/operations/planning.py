"""Rendering and checking a large batch on every core, before the store is touched.

Each op costs a few hundred microseconds of pure Python (canonical article, hash, the full format
check of the rendered file), so a 10k-op batch spends seconds here; workers render slices in
parallel. Small batches stay in-process, where a pool would cost more than it saves.

A file whose content the index already shows stored is not projected for the index: the batch will
answer it `unchanged` without writing it, so its rows would be thrown away (a fifth of a re-applied
op's cost). Should the store have changed meanwhile and the file be written after all, the index
pass after the commit parses it from its blob instead.
"""

from __future__ import annotations

import datetime as dt
import os
import pickle
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from typing import Final

from memhtml.contracts.errors import MemhtmlError
from memhtml.contracts.instants import format_instant
from memhtml.index.parallel import exit_with_parent
from memhtml.index.projection import FileProjection, project_memory
from memhtml.operations.write import WriteRequest, render_checked
from memhtml.store.batch import PlannedOp
from memhtml.store.gitcmd import blob_id

PARALLEL_MINIMUM_OPS: Final[int] = 1000
CHUNK_OPS: Final[int] = 500
MAX_WORKERS: Final[int] = 4


# The op, and for a rendered file its blob id and pickled index rows.
Planned = tuple[PlannedOp, tuple[str, bytes] | None]
# Where a rendered file is projected before the store picks its path; `relocated` moves it.
_PLACEHOLDER_PATH: Final[str] = "areas/inbox/unplaced.html"


class PickledProjections(Mapping[str, FileProjection]):
    """Index rows of a batch's rendered files by blob id, kept pickled until the index pass reads
    them: a live projection costs several times its pickle, and a large batch holds thousands."""

    def __init__(self, pickled: dict[str, bytes]) -> None:
        self._pickled = pickled

    def __getitem__(self, blob: str) -> FileProjection:
        projection = pickle.loads(self._pickled[blob])
        assert isinstance(projection, FileProjection)
        return projection

    def __iter__(self) -> Iterator[str]:
        return iter(self._pickled)

    def __len__(self) -> int:
        return len(self._pickled)


def plan_one(request: WriteRequest, moment: dt.datetime, stored_hashes: Set[str] = frozenset()) -> Planned:
    """The op for `request` and the pickled index rows of its rendered file (None when refused, or
    when it is not a task and its content hash is among `stored_hashes`)."""
    try:
        placed, parsed = render_checked(request, moment)
    except MemhtmlError as refusal:
        return PlannedOp(None, refusal=refusal), None
    is_task = request.memory_type == "task"
    restatement = None if is_task else request.restatement()
    if not is_task and placed.content_hash in stored_hashes:
        return PlannedOp(placed, restatement), None
    blob = blob_id(placed.file_text.encode("utf-8"))
    projection = project_memory(_PLACEHOLDER_PATH, blob, parsed, format_instant(moment))
    return PlannedOp(placed, restatement), (blob, pickle.dumps(projection, protocol=pickle.HIGHEST_PROTOCOL))


class _WorkerContext:
    """What a pool worker was told when it started (`_start_worker`), so no slice has to carry it."""

    stored_hashes: frozenset[str] = frozenset()


_worker = _WorkerContext()


def plan_slice(
    requests: Sequence[WriteRequest | None], moment: dt.datetime, stored_hashes: Set[str] | None = None
) -> list[Planned | None]:
    known = _worker.stored_hashes if stored_hashes is None else stored_hashes
    return [None if request is None else plan_one(request, moment, known) for request in requests]


def _start_worker(parent_pid: int, stored_hashes: frozenset[str]) -> None:
    _worker.stored_hashes = stored_hashes
    exit_with_parent(parent_pid)


def plan_all(
    requests: Sequence[WriteRequest | None],
    moment: dt.datetime,
    stored_hashes: frozenset[str] = frozenset(),
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[Planned | None]:
    """`plan_one` of every request in order (None stays None), on every core for a large batch.
    `stored_hashes`: content hashes the index shows active, whose files need no projection.
    `progress` hears (requests planned, requests) after each slice."""
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if len(requests) < PARALLEL_MINIMUM_OPS or workers < 2:
        return _plan_here(requests, moment, stored_hashes, progress)
    # Imported here: the pool machinery is a sizeable import that a small batch would pay for nothing.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["memhtml.operations.planning"])
    slices = [list(requests[start : start + CHUNK_OPS]) for start in range(0, len(requests), CHUNK_OPS)]
    try:
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(os.getpid(), stored_hashes),
        ) as pool:
            futures = [pool.submit(plan_slice, chunk, moment) for chunk in slices]
            planned: list[Planned | None] = []
            for future in futures:
                planned += future.result()
                if progress is not None:
                    progress(len(planned), len(requests))
            return planned
    except (BrokenProcessPool, OSError, RuntimeError):
        # Workers could not start or died: the same work, here.
        return _plan_here(requests, moment, stored_hashes, progress)


def _plan_here(
    requests: Sequence[WriteRequest | None],
    moment: dt.datetime,
    stored_hashes: frozenset[str],
    progress: Callable[[int, int], None] | None,
) -> list[Planned | None]:
    """`plan_slice` in this process, a slice at a time when someone hears the progress."""
    if progress is None:
        return plan_slice(requests, moment, stored_hashes)
    planned: list[Planned | None] = []
    for start in range(0, len(requests), CHUNK_OPS):
        planned += plan_slice(requests[start : start + CHUNK_OPS], moment, stored_hashes)
        progress(len(planned), len(requests))
    return planned
