"""`--as-of <commit>` answers from the memories as that commit held them: a memory edited in place since
answers with its old text, tags and claim; one deleted or moved away since is still found at its old
path; and the index is left as it was, for the next query and for writers."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memhtml.index import database as database_module
from memhtml.index.database import database_paths
from memhtml.operations.retrieval import RetrievalRequest, recall
from memhtml.operations.retrieval import search as search_in_process
from tests.conftest import git, run_cli
from tests.index.test_search import commit_files, memory_file, paths, search

POOL = "resources/db/pool.html"


def _two_versions(root: Path) -> tuple[str, str]:
    """The pool memory says 64 (tagged `old`) at the first commit, 96 (tagged `new`) at the second."""
    first = commit_files(root, {POOL: memory_file("Pool ceiling", "The pool ceiling is 64 connections.", tags=["old"])})
    second = commit_files(
        root, {POOL: memory_file("Pool ceiling", "The pool ceiling is 96 connections.", tags=["new"])}
    )
    return first, second


def test_a_memory_edited_since_answers_with_the_text_it_had(store_root: Path) -> None:
    first, second = _two_versions(store_root)
    then = search(store_root, "pool ceiling", "--as-of", first)
    assert paths(then) == [POOL] and "64" in then["hits"][0]["gist"]
    assert paths(search(store_root, "96", "--as-of", first)) == []
    assert paths(search(store_root, "64", "--as-of", first)) == [POOL]
    # Today and at the second commit: the new text.
    for answer in (search(store_root, "pool ceiling"), search(store_root, "pool ceiling", "--as-of", second)):
        assert paths(answer) == [POOL] and "96" in answer["hits"][0]["gist"]
    assert paths(search(store_root, "64")) == []


def test_scopes_read_the_head_the_memory_had(store_root: Path) -> None:
    first, _ = _two_versions(store_root)
    assert paths(search(store_root, "pool", "--as-of", first, "--tag", "old")) == [POOL]
    assert paths(search(store_root, "pool", "--as-of", first, "--tag", "new")) == []
    assert paths(search(store_root, "pool", "--tag", "new")) == [POOL]


def test_a_memory_deleted_or_moved_since_is_found_where_it_was(store_root: Path) -> None:
    first = commit_files(
        store_root,
        {
            "areas/inbox/gone.html": memory_file("Gone", "The kestrel feeder was removed."),
            "areas/inbox/moved.html": memory_file("Moved", "The kestrel nest box faces east."),
        },
    )
    git(store_root, "rm", "-q", "areas/inbox/gone.html")
    (store_root / "resources/birds").mkdir(parents=True)
    git(store_root, "mv", "areas/inbox/moved.html", "resources/birds/moved.html")
    git(store_root, "commit", "-q", "-m", "tidy")
    assert paths(search(store_root, "kestrel")) == ["resources/birds/moved.html"]
    assert sorted(paths(search(store_root, "kestrel", "--as-of", first))) == [
        "areas/inbox/gone.html",
        "areas/inbox/moved.html",
    ]


def test_recall_packs_the_past_text(store_root: Path) -> None:
    first, _ = _two_versions(store_root)
    packed = recall(store_root, RetrievalRequest("pool ceiling", as_of=first))
    quoted = packed["memories"]["disclosed"]
    assert [item["path"] for item in quoted] == [POOL] and "64" in quoted[0]["body"]


def test_the_index_file_and_later_queries_are_untouched(store_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, _ = _two_versions(store_root)
    assert paths(search(store_root, "pool ceiling")) == [POOL]  # the index is current before the look back
    index_file = database_paths(store_root)[0]
    before = hashlib.sha256(index_file.read_bytes()).hexdigest()
    assert paths(search(store_root, "64", "--as-of", first)) == [POOL]
    assert hashlib.sha256(index_file.read_bytes()).hexdigest() == before
    # One process, one DuckDB instance kept across calls (the MCP server's way): nothing is left behind.
    monkeypatch.setattr(database_module, "_shared_instance", [])
    monkeypatch.setattr(database_module, "_shared_in_use", [False])
    database_module.share_one_instance()
    try:
        then = search_in_process(store_root, RetrievalRequest("64", as_of=first))
        now = search_in_process(store_root, RetrievalRequest("64"))
    finally:
        database_module._shared_instance[0].close()
    assert [hit["path"] for hit in then["hits"]] == [POOL] and now["hits"] == []
    written = run_cli("write", "--repo", str(store_root), "--title", "T", "--type", "semantic", "--claim", "A pool.")
    assert written.status == 0, written.stdout + written.stderr


def test_a_listed_second_copy_stays_out_of_the_past(store_root: Path) -> None:
    text = memory_file("Pool ceiling", "The pool ceiling is 64 connections.")
    first = commit_files(store_root, {POOL: text, "resources/db/zz-copy.html": text})
    commit_files(store_root, {"areas/inbox/later.html": memory_file("Later", "A later pool note.")})
    assert paths(search(store_root, "64", "--as-of", first)) == [POOL]


def test_a_memory_written_later_at_a_path_stays_out_of_the_past(store_root: Path) -> None:
    slot = "resources/db/pool-ceiling.html"  # where a correction titled "Pool ceiling" is written
    first = commit_files(store_root, {slot: memory_file("Pool ceiling", "The pool ceiling is 64 connections.")})
    corrected = run_cli(
        "correct", slot, "--repo", str(store_root), "--title", "Pool ceiling", "--claim", "The pool ceiling is 96."
    )
    assert corrected.status == 0, corrected.stdout + corrected.stderr
    assert corrected.data["path"] == slot  # the correction is written at the path the old one left
    archived = str(corrected.data["archivedPath"])
    then = search(store_root, "pool ceiling", "--as-of", first)
    assert paths(then) == [archived] and "64" in then["hits"][0]["gist"]
    assert paths(search(store_root, "96", "--as-of", first)) == []


@pytest.mark.parametrize("committed", [False, True], ids=["edited on disk", "edit committed"])
def test_a_memory_archived_and_edited_since_answers_with_the_text_it_had(store_root: Path, committed: bool) -> None:
    first = commit_files(store_root, {POOL: memory_file("Pool ceiling", "The pool ceiling is 64 connections.")})
    archived = run_cli("archive", POOL, "--repo", str(store_root), "--reason", "moved to the wiki")
    assert archived.status == 0, archived.stdout + archived.stderr
    archived_file = store_root / str(archived.data["archivePath"])
    archived_file.write_text(archived_file.read_text().replace("64 connections", "72 platypus connections"))
    if committed:
        git(store_root, "commit", "-q", "-a", "-m", "edit the archived memory")
    assert run_cli("index", "update", "--repo", str(store_root)).status == 0
    assert paths(search(store_root, "platypus", "--as-of", first)) == []
    then = search(store_root, "pool ceiling", "--as-of", first)
    assert paths(then) == [POOL] and "64" in then["hits"][0]["gist"]
    # Today the archived memory answers with its edit.
    assert paths(search(store_root, "platypus", "--include-archived")) == [str(archived.data["archivePath"])]


def test_embeddings_off_look_into_the_past_without_an_embedder(store_root: Path) -> None:
    first, _ = _two_versions(store_root)
    rebuilt = run_cli("index", "rebuild", "--repo", str(store_root))  # the old text's vector goes
    assert rebuilt.status == 0, rebuilt.stdout + rebuilt.stderr
    today = run_cli("search", "--repo", str(store_root), "pool", env={"MEMHTML_EMBED": "off"})
    then = run_cli("search", "--repo", str(store_root), "pool", "--as-of", first, env={"MEMHTML_EMBED": "off"})
    assert then.status == 0, then.stdout + then.stderr
    assert [hit["path"] for hit in then.data["hits"]] == [POOL]
    assert (then.data["vectorCoverage"], then.data["degraded"]) == (today.data["vectorCoverage"], True)
