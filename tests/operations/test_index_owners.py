"""The write path's dedupe lookup: who holds a content hash, with the semantic head the index knows.

The head lets a restatement that changes nothing be answered without reading the file, so its entity
labels and tags must be the stored memory's own, and only that memory's.
"""

from __future__ import annotations

from pathlib import Path

from memhtml.operations.indexing import writable_index
from memhtml.store.repository import open_store
from tests.conftest import run_cli


def _write(store_root: Path, title: str, *extra: str) -> str:
    answer = run_cli("write", "--repo", str(store_root), "--title", title, "--type", "semantic", *extra)
    assert answer.status == 0, answer.stdout + answer.stderr
    return str(answer.data["contentHash"])


def test_owners_carry_each_memory_s_own_entities_and_tags(store_root: Path) -> None:
    tagged = _write(
        store_root,
        "Retry budget",
        "--claim",
        "The retry budget is 3 attempts.",
        "--entity",
        "person:ada",
        "--entity",
        "service:billing",
        "--tag",
        "ops",
        "--tag",
        "limits",
    )
    plain = _write(store_root, "Cache size", "--claim", "The cache holds 512 entries.")
    with writable_index(open_store(store_root)) as session:
        found = session.owners([tagged, plain, "0" * 64])
    assert set(found) == {tagged, plain}
    tagged_head, plain_head = found[tagged].head, found[plain].head
    assert tagged_head is not None and plain_head is not None
    assert {"person:ada", "service:billing"} <= tagged_head.entities
    assert tagged_head.tags == frozenset({"ops", "limits"})
    assert not {"person:ada", "service:billing"} & plain_head.entities
    assert plain_head.tags == frozenset()
    assert tagged_head.memory_type == plain_head.memory_type == "semantic"


def test_no_hash_asked_finds_no_owner(store_root: Path) -> None:
    _write(store_root, "Retry budget", "--claim", "The retry budget is 3 attempts.")
    with writable_index(open_store(store_root)) as session:
        assert session.owners([]) == {}
