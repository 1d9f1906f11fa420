"""The executable loads its modules without the cyclic collector running every 700 allocations: the
threshold its package sets leaves a command's start-up a collection or two, where Python's own gave
two dozen."""

from __future__ import annotations

import subprocess
import sys

COUNT_COLLECTIONS = """
import gc, sys
collections = []
gc.callbacks.append(lambda phase, info: collections.append(info["generation"]) if phase == "start" else None)
if sys.argv[1] == "default":
    gc.set_threshold(700, 10, 10)
    gc.set_threshold = lambda *threshold: None  # the package's own setting, left out
import memhtml.cli.entry, memhtml.operations.indexing, memhtml.index.indexer
print(len(collections), gc.get_threshold()[0])
"""


def _collections_loading_the_update(threshold: str) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", COUNT_COLLECTIONS, threshold], capture_output=True, text=True, check=True
    )
    count, first = done.stdout.split()
    return int(count), int(first)


def test_loading_an_update_runs_the_collector_a_few_times_at_most() -> None:
    count, threshold = _collections_loading_the_update("package")
    assert threshold == 10_000
    assert count <= 3
    # Python's own threshold, the same modules: the measurement can tell the difference.
    at_default, default = _collections_loading_the_update("default")
    assert default == 700
    assert at_default >= 3 * max(count, 1)
