"""Committing generated files the store owns (the state sidecar): replace the file, commit that path.

Unlike memories, a generated file may be overwritten; it is still committed alone, under the write
lock, without touching the user's staging area, and an unchanged file makes no commit.
"""

from __future__ import annotations

import os

from memhtml.store.commit import Staged, commit_paths
from memhtml.store.files import linked_component, linked_refusal
from memhtml.store.repository import Store
from memhtml.store.transaction import exclusive


def commit_generated_file(store: Store, path: str, text: str, message: str) -> str | None:
    """Write `path` with `text` and commit it; None when the committed file already has these bytes."""
    target = store.root / path
    data = text.encode("utf-8")
    with exclusive(store):
        linked = linked_component(store.root, path)
        if linked is not None:
            raise linked_refusal(linked, "written")
        previous = target.read_bytes() if target.is_file() else None
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, target)
        try:
            landed = commit_paths(store.root, store.git_dir, [Staged(path)], message)
        except BaseException:
            if previous is None:
                target.unlink(missing_ok=True)
            else:
                target.write_bytes(previous)
            raise
    return landed.sha if landed.created else None
