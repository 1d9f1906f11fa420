"""The cross-process write lock of a store: an exclusive `flock` on a file inside `.git`.

The kernel releases the lock when its holder dies, so a crashed writer never wedges the store; the
lock file itself is never deleted (deleting it would let two writers lock two different inodes).
The git children a holder starts share its lock descriptor (`held_descriptors`), so a writer killed
while its `update-ref` or `update-index` still runs keeps the store locked until that child is done:
the next writer never looks at (or recovers) a store that a dead writer's git child is still changing.
"""

from __future__ import annotations

import fcntl
import os
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from memhtml.contracts.errors import LockTimeout

LOCK_FILENAME: Final[str] = "memhtml-write.lock"
DEFAULT_LOCK_TIMEOUT_SECONDS: Final[float] = 60.0

_held: list[int] = []  # descriptors of the locks this process holds now


def held_descriptors() -> tuple[int, ...]:
    """The lock descriptors a child process should inherit (see the module's docstring)."""
    return tuple(_held)


@contextmanager
def write_lock(git_dir: Path, timeout_seconds: float = DEFAULT_LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the store's write lock for the duration of the block, waiting with jittered backoff."""
    descriptor = os.open(git_dir / LOCK_FILENAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout_seconds
        delay = 0.002
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(
                        f"another memhtml writer held the store lock for over {timeout_seconds:.0f} s",
                        ["retry the same command; nothing was written"],
                    ) from None
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.1)
        _held.append(descriptor)
        try:
            yield
        finally:
            _held.remove(descriptor)
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)
