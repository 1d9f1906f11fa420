"""Writer preference for a store's DuckDB files: a turnstile that readers pass and a writer holds.

DuckDB locks a file for one read-write process or for any number of readers, and a waiting writer is
not queued: with a few processes searching in a loop, their read-only opens overlap and a writer's
retries can find the file held for all of its `LOCK_RETRY_SECONDS` (3 of 32 writes beside 4 searching
loops waited all of it and left their index update to the next command). So a process that opens for
writing first takes an exclusive `flock` on a file beside the index (`index.duckdb.turnstile`, ignored
by every store as `.memhtml/index.duckdb.*`) and holds it until its own open is done; a reader takes
the same lock shared and lets go of it at once, before its own open. While a writer waits, no new
reader starts, and the readers already in finish and leave it the file.

The turnstile only orders opens: a process that cannot take it within the wait given opens anyway
(its DuckDB lock retries are what bound the wait), and a file system without `flock` skips it.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # no flock here: opens go unordered, as DuckDB alone would have them
    fcntl = None  # type: ignore[assignment]

TURNSTILE_SUFFIX = ".turnstile"


@contextlib.contextmanager
def writers_first(index_file: Path, *, writer: bool, wait_seconds: float) -> Iterator[None]:
    """Pass the turnstile of `index_file` (a reader) or hold it for the block (a writer); after
    `wait_seconds` without it, go on without it."""
    descriptor = _opened(index_file.with_name(index_file.name + TURNSTILE_SUFFIX), create=writer)
    if descriptor is None:
        yield
        return
    try:
        taken = _take(descriptor, fcntl.LOCK_EX if writer else fcntl.LOCK_SH, wait_seconds)
        if taken and not writer:
            fcntl.flock(descriptor, fcntl.LOCK_UN)  # passed: readers never hold it
        yield
    finally:
        os.close(descriptor)  # releases a writer's lock with it


def _opened(path: Path, *, create: bool) -> int | None:
    """The turnstile's file, made by the first writer: with none yet, no writer can be waiting."""
    if fcntl is None:
        return None
    try:
        return os.open(path, (os.O_RDWR | os.O_CREAT if create else os.O_RDONLY) | os.O_CLOEXEC, 0o644)
    except OSError:  # none yet, or a directory it may not write to: the opens go unordered
        return None


def _take(descriptor: int, mode: int, wait_seconds: float) -> bool:
    """Whether the lock was taken within `wait_seconds`, polled with jittered backoff (a blocking
    `flock` cannot be bounded)."""
    deadline = time.monotonic() + wait_seconds
    delay = 0.002
    while True:
        try:
            fcntl.flock(descriptor, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, 0.05)
        except OSError:  # the file system refuses flock
            return False
