"""The cross-process write lock of a store: an exclusive `flock` on a file inside `.git`.

The kernel releases the lock when its holder dies, so a crashed writer never wedges the store; the
lock file itself is never deleted (deleting it would let two writers lock two different inodes).
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
        try:
            yield
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)
