"""The `init` use case: create or complete a store and report what was laid down."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict

from memhtml.index.location import refuse_for_init
from memhtml.store.initialize import init_store

if TYPE_CHECKING:
    from memhtml.operations.indexing import CommandWarning


class RepoInit(TypedDict):
    """What `init` laid down: the store's root, whether it was created, the scaffold files, the commit."""

    root: str
    created: bool
    headSha: str | None
    wrote: list[str]
    index: NotRequired[CommandWarning]  # git's index could not be brought in line with the commit


def init(root: Path) -> RepoInit:
    refuse_for_init(root)
    report = init_store(root)
    data: RepoInit = {
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
