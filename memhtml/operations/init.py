"""The `init` use case: create or complete a store and report what was laid down."""

from __future__ import annotations

from pathlib import Path

from memhtml.store.repository import init_store


def init(root: Path) -> dict[str, object]:
    report = init_store(root)
    return {
        "root": str(report.root),
        "created": report.created,
        "headSha": report.head_sha,
        "wrote": report.wrote,
    }
