"""`project_slices` and `in_order`: chunks of work come back in order, whole, with the input read ahead
but never far ahead, and what the pool cannot do is done here."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from memhtml.contracts.errors import GitFailure
from memhtml.index.parallel import CHUNKS_AHEAD, Item, in_order, project_slices
from tests.index.test_search import memory_file

NOW = "2026-11-30T00:00:00Z"


def slice_items(batch: list[int]) -> list[Item]:
    return [
        (f"areas/inbox/m{number:03d}.html", f"{number:040x}", memory_file(f"M{number}", f"Fact {number}.").encode())
        for number in batch
    ]


def test_slices_come_back_in_order_with_at_most_two_read_ahead() -> None:
    slices = [[number, number + 1] for number in range(0, 12, 2)]
    read_calls: list[int] = []
    lock = threading.Lock()

    def read(batch: list[int]) -> list[Item]:
        with lock:
            read_calls.append(batch[0] // 2)
        return slice_items(batch)

    with ThreadPoolExecutor(max_workers=2) as pool:
        received: list[list[str]] = []
        for position, (batch, projected) in enumerate(project_slices(pool, slices, read, NOW)):
            with lock:
                read_so_far = list(read_calls)
            # The next slice is already read (and with the workers) while this one is handed out, and
            # nothing past the slice after that has been read.
            assert set(range(min(position + 2, len(slices)))) <= set(read_so_far)
            assert max(read_so_far) <= position + 2
            assert batch == slices[position]
            received.append([item.path for item in projected])
    assert read_calls == list(range(len(slices)))  # each slice read once, in order
    assert received == [[path for path, _, _ in slice_items(batch)] for batch in slices]


def test_without_a_pool_each_slice_is_read_when_it_is_reached() -> None:
    read_calls: list[int] = []
    consumed: list[int] = []

    def read(batch: list[int]) -> list[Item]:
        read_calls.append(batch[0])
        assert read_calls[:-1] == consumed  # never read ahead: nothing runs beside the caller
        return slice_items(batch)

    for batch, projected in project_slices(None, [[1], [2], [3]], read, NOW):
        consumed.append(batch[0])
        assert len(projected) == 1
    assert consumed == read_calls == [1, 2, 3]


def test_a_failed_read_reaches_the_caller() -> None:
    def read(batch: list[int]) -> list[Item]:
        if batch == [3]:
            raise GitFailure("git cat-file failed", ["retry the same command"])
        return slice_items(batch)

    received: list[int] = []
    with ThreadPoolExecutor(max_workers=2) as pool, pytest.raises(GitFailure):
        for batch, _ in project_slices(pool, [[1], [2], [3], [4]], read, NOW):
            received.append(batch[0])
    assert received == [1]  # slice 2 waits on the failed read of slice 3 before it is handed out


def test_no_slices_give_nothing() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(project_slices(pool, [], slice_items, NOW)) == []


def test_any_slice_value_is_handed_out_even_one_that_reads_as_false() -> None:
    seen: list[object] = []

    def read(batch: object) -> list[Item]:
        seen.append(batch)
        return []

    with ThreadPoolExecutor(max_workers=2) as pool:
        handed = [batch for batch, projected in project_slices(pool, [None, 0, "", []], read, NOW) if not projected]
    assert handed == seen == [None, 0, "", []]


def test_in_order_answers_every_chunk_in_order_taking_only_a_few_ahead() -> None:
    taken: list[int] = []

    def chunks() -> Iterator[int]:
        for number in range(CHUNKS_AHEAD * 3):
            taken.append(number)
            yield number

    with ThreadPoolExecutor(max_workers=2) as pool:
        answered = []
        for chunk, answer in in_order(pool, chunks(), lambda number: number * number):
            assert len(taken) <= chunk + CHUNKS_AHEAD  # never the whole input at once
            answered.append((chunk, answer))
    assert answered == [(number, number * number) for number in range(CHUNKS_AHEAD * 3)]


class _RefusingPool(ThreadPoolExecutor):
    def submit(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("cannot schedule new futures after shutdown")


class _DyingPool(ThreadPoolExecutor):
    def submit(self, *args: Any, **kwargs: Any) -> Any:
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        future: Future[Any] = Future()
        future.set_exception(BrokenProcessPool("a worker died"))
        return future


@pytest.mark.parametrize("pool_class", [_RefusingPool, _DyingPool], ids=["refused", "worker died"])
def test_in_order_works_here_what_the_pool_cannot(pool_class: type[ThreadPoolExecutor]) -> None:
    here: list[int] = []

    def work(number: int) -> int:
        here.append(number)
        return -number

    with pool_class(max_workers=1) as pool:
        assert list(in_order(pool, range(5), work)) == [(number, -number) for number in range(5)]
    assert here == list(range(5))


def test_a_slice_pipeline_hands_the_first_slice_to_the_workers_before_it_is_iterated() -> None:
    from memhtml.index.parallel import SlicePipeline

    started = threading.Event()
    worked: list[int] = []
    lock = threading.Lock()

    def work(entries: list[int]) -> list[int]:
        with lock:
            worked.extend(entries)
        started.set()
        return [entry * 10 for entry in entries]

    slices = [[number, number + 1] for number in range(0, 8, 2)]
    with ThreadPoolExecutor(max_workers=2) as pool, SlicePipeline(pool, slices, list, work) as pipeline:
        # Nothing iterated yet: the first slice is with the workers all the same (a rebuild opens its
        # index meanwhile).
        assert started.wait(10)
        answers = [(batch, chunks) for batch, chunks in pipeline]
    assert [batch for batch, _ in answers] == slices
    assert [chunks for _, chunks in answers] == [[[entry * 10 for entry in batch]] for batch in slices]
    assert sorted(worked) == list(range(8))


def test_a_slice_pipeline_without_workers_works_each_slice_when_it_is_reached() -> None:
    from memhtml.index.parallel import SlicePipeline

    worked: list[int] = []

    def work(entries: list[int]) -> list[int]:
        worked.extend(entries)
        return entries

    with SlicePipeline(None, [[1, 2], [3]], list, work) as pipeline:
        assert worked == []  # here, nothing runs before it is asked for
        assert [chunks for _, chunks in pipeline] == [[[1, 2]], [[3]]]
