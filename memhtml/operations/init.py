"""The `init` use case: create or complete a store and report what was laid down."""

from __future__ import annotations

from pathlib import Path

from memhtml.index.location import refuse_for_init
from memhtml.store.initialize import init_store


def init(root: Path) -> dict[str, object]:
    refuse_for_init(root)
    report = init_store(root)
    data: dict[str, object] = {
        "root": str(report.root),
        "created": report.created,
        "headSha": report.head_sha,
        "wrote": report.wrote,
    }
    if not report.index_synced:
        data["index"] = {
            "ok": False,
            "warning": "committed, but the git index could not be brought in line: the scaffold shows as deleted",
            "remedy": "memhtml doctor --fix",
        }
    return data
