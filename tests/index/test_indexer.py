"""The index follows git: an incremental update after any sequence of changes leaves exactly the rows
a full rebuild would, renames keep their row identity, and a reverted dirty edit is forgotten."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from memhtml.contracts.errors import StorageFailure
from memhtml.index import indexer
from memhtml.index.database import database_paths, open_database
from memhtml.index.indexer import rebuild, update
from memhtml.store.gitread import GitCorpusReader
from tests.conftest import git, run_cli

NOW = "2026-11-30T06:00:00Z"


def snapshot(root: Path) -> dict[str, Any]:
    """Every index row that git determines, keyed by path (surrogate ids and clocks left out)."""
    with open_database(root, read_only=True) as database:
        files = database.rows("SELECT * EXCLUDE (doc_id, indexed_at) FROM files ORDER BY path")
        postings = database.rows(
            """
            SELECT f.path, t.term, p.tf, p.dl FROM postings p JOIN terms t USING (term_id)
            JOIN files f ON f.doc_id = p.doc_id ORDER BY 1, 2
            """
        )
        children = {
            table: database.rows(f"SELECT * FROM {table} ORDER BY ALL")
            for table in ("file_tags", "file_entities", "file_facets", "file_citations", "edges")
        }
        watermark = database.rows("SELECT head_sha, dirty_paths FROM index_state")
        duplicates = database.rows("SELECT * FROM duplicate_files ORDER BY ALL")
    return {
        "files": files,
        "postings": postings,
        "children": children,
        "watermark": watermark,
        "duplicates": duplicates,
    }


def rebuilt_snapshot(root: Path, scratch: Path) -> dict[str, Any]:
    """Rebuild a copy of the store from scratch and snapshot it."""
    copy = scratch / "copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, symlinks=True)
    for database_file in database_paths(copy):
        database_file.unlink(missing_ok=True)
    with open_database(copy) as database:
        rebuild(database, GitCorpusReader(copy), NOW)
    shot = snapshot(copy)
    return shot


def updated_snapshot(root: Path) -> dict[str, Any]:
    with open_database(root) as database:
        update(database, GitCorpusReader(root), NOW)
    return snapshot(root)


def write(root: Path, title: str, claim: str, *extra: str) -> str:
    answer = run_cli("write", "--repo", str(root), "--title", title, "--type", "semantic", "--claim", claim, *extra)
    assert answer.status == 0, answer.stdout + answer.stderr
    return str(answer.data["path"])


def without_root(shot: dict[str, Any]) -> dict[str, Any]:
    return shot


@pytest.fixture
def seeded(store_root: Path) -> Path:
    write(
        store_root,
        "Pool ceiling",
        "The connection pool ceiling is 64.",
        "--tag",
        "db",
        "--entity",
        "service:db",
    )
    write(store_root, "Retry budget", "The retry budget of the gateway is 3.", "--workspace", "payments")
    write(store_root, "Deploy key", "Rotate the deploy key every 90 days.", "--tag", "ops")
    return store_root


def test_update_equals_rebuild_after_every_kind_of_change(seeded: Path, tmp_path: Path) -> None:
    root = seeded
    steps = []
    # A committed rename (git mv), an edit, a delete, a new file by hand.
    git(root, "mv", "resources/db/pool-ceiling.html", "resources/db/pool-ceiling-moved.html")
    git(root, "commit", "-q", "-m", "move")
    steps.append("rename")
    retry = root / "projects/payments/retry-budget.html"
    retry.write_text(retry.read_text().replace("is 3.", "is 4."))
    git(root, "commit", "-q", "-am", "edit")
    steps.append("edit")
    git(root, "rm", "-q", "resources/ops/deploy-key.html")
    git(root, "commit", "-q", "-m", "delete")
    steps.append("delete")
    write(root, "Cache ttl", "The cache ttl of the edge is 300 seconds.")
    steps.append("write")
    for step in steps:
        assert step  # the sequence above is the scenario; each was applied
    assert updated_snapshot(root) == rebuilt_snapshot(root, tmp_path)
    # A dirty edit is projected, and forgotten again once reverted.
    dirty = root / "projects/payments/retry-budget.html"
    original = dirty.read_text()
    dirty.write_text(original.replace("is 4.", "is 7 quokkafoo."))
    dirty_shot = updated_snapshot(root)
    assert dirty_shot == rebuilt_snapshot(root, tmp_path)
    assert any("quokkafoo" in row[6] for row in dirty_shot["files"])  # body_text
    git(root, "checkout", "--", "projects/payments/retry-budget.html")
    clean_shot = updated_snapshot(root)
    assert not any("quokkafoo" in str(row) for row in clean_shot["files"])
    assert clean_shot == rebuilt_snapshot(root, tmp_path)
    # An untracked file, then deleted before any commit.
    stray = root / "areas/inbox/stray.html"
    shutil.copy(root / "projects/payments/retry-budget.html", stray)
    stray.write_text(stray.read_text().replace("is 4.", "is 9 strayword."))
    assert any("strayword" in str(row) for row in updated_snapshot(root)["files"])
    stray.unlink()
    gone = updated_snapshot(root)
    assert not any("strayword" in str(row) for row in gone["files"])
    assert gone == rebuilt_snapshot(root, tmp_path)


def test_a_git_mv_keeps_the_row_identity_and_access_counters(seeded: Path) -> None:
    root = seeded
    path = "resources/db/pool-ceiling.html"
    assert run_cli("read", "--repo", str(root), path).status == 0
    with open_database(root) as database:
        update(database, GitCorpusReader(root), NOW)
        doc_id = database.value("SELECT doc_id FROM files WHERE path = $p", {"p": path})
    git(root, "mv", path, "resources/db/renamed.html")
    git(root, "commit", "-q", "-m", "rename")
    with open_database(root) as database:
        report = update(database, GitCorpusReader(root), NOW)
        assert report.renamed == 1
        assert database.value("SELECT doc_id FROM files WHERE path = 'resources/db/renamed.html'") == doc_id
        assert database.value("SELECT access_count FROM state.access WHERE path = 'resources/db/renamed.html'") == 1
        assert database.value("SELECT count(*) FROM files WHERE path = $p", {"p": path}) == 0


def test_deleting_the_index_file_and_running_any_command_restores_it(seeded: Path) -> None:
    root = seeded
    for database_file in database_paths(root):
        database_file.unlink()
    found = run_cli("search", "--repo", str(root), "pool ceiling")
    assert found.status == 0, found.stdout + found.stderr
    assert [hit["path"] for hit in found.data["hits"]] == ["resources/db/pool-ceiling.html"]
    database_paths(root)[0].unlink()
    listed = run_cli("list", "--repo", str(root))
    assert len(listed.data["files"]) == 3


def test_a_second_active_copy_of_a_memory_is_skipped_and_reported(seeded: Path) -> None:
    root = seeded
    shutil.copy(root / "resources/db/pool-ceiling.html", root / "resources/db/qq-copy.html")
    report = run_cli("index", "update", "--repo", str(root))
    assert report.status == 0
    assert report.data["skipped"] == [
        {
            "path": "resources/db/qq-copy.html",
            "reason": "duplicate of resources/db/pool-ceiling.html: same content hash, both active",
        }
    ]


def test_a_watermark_whose_commit_is_gone_triggers_a_rebuild(seeded: Path, tmp_path: Path) -> None:
    root = seeded
    assert run_cli("index", "update", "--repo", str(root)).status == 0
    # Rewrite the last commit and purge the old one, so the watermark names a commit that no longer exists.
    git(root, "commit", "-q", "--amend", "-m", "rewritten")
    git(root, "reflog", "expire", "--expire=now", "--all")
    git(root, "gc", "-q", "--prune=now")
    report = run_cli("index", "update", "--repo", str(root))
    assert report.status == 0 and report.data["mode"] == "rebuild"
    assert snapshot(root) == rebuilt_snapshot(root, tmp_path)


def test_only_memory_paths_are_indexed(seeded: Path) -> None:
    root = seeded
    page = (root / "resources/db/pool-ceiling.html").read_text()
    for generated in ("areas/inbox/index.html", "areas/sitemap.xml", "notes/loose.html", "areas/inbox/page.txt"):
        target = root / generated
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page.replace("is 64.", "is 65 generatedword."))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "generated artifacts and loose files")
    assert run_cli("index", "update", "--repo", str(root)).status == 0
    indexed = [row[0] for row in snapshot(root)["files"]]
    assert indexed == sorted(indexed) and len(indexed) == 3
    assert not any("generatedword" in str(row) for row in snapshot(root)["files"])
    assert run_cli("search", "--repo", str(root), "generatedword").data["hits"] == []


def table_definitions(root: Path) -> list[tuple[Any, ...]]:
    """Every index-plane table's definition and constraints, as DuckDB's catalog states them."""
    with open_database(root, read_only=True) as database:
        catalog = {"catalog": database.main_catalog}
        tables = database.rows(
            "SELECT table_name, sql FROM duckdb_tables() WHERE database_name = $catalog ORDER BY 1", catalog
        )
        constraints = database.rows(
            """SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints()
            WHERE database_name = $catalog ORDER BY ALL""",
            catalog,
        )
        indexes = database.rows(
            "SELECT table_name, index_name, sql FROM duckdb_indexes() WHERE database_name = $catalog ORDER BY ALL",
            catalog,
        )
    return [*tables, *constraints, *indexes]


def test_a_rebuild_over_an_index_equals_one_from_nothing_and_keeps_every_table_definition(
    seeded: Path, tmp_path: Path
) -> None:
    root = seeded
    assert run_cli("index", "update", "--repo", str(root)).status == 0
    definitions = table_definitions(root)
    assert any(row[1] == "CHECK" for row in definitions)  # the catalog query sees the constraints
    assert any(row[1] == "terms_term" and "UNIQUE" in row[2] for row in definitions)  # and the unique keys
    # Rows the rebuild must drop: a memory deleted and one edited since the index was last built.
    git(root, "rm", "-q", "resources/ops/deploy-key.html")
    retry = root / "projects/payments/retry-budget.html"
    retry.write_text(retry.read_text().replace("is 3.", "is 5."))
    git(root, "commit", "-q", "-am", "delete one, edit one")
    with open_database(root) as database:
        report = rebuild(database, GitCorpusReader(root), NOW)
    assert report.files_indexed == 2
    assert snapshot(root) == rebuilt_snapshot(root, tmp_path)
    assert table_definitions(root) == definitions
    # The unique keys still hold after the tables were emptied.
    with open_database(root) as database, pytest.raises(StorageFailure):
        database.run("INSERT INTO terms SELECT term_id + 1000000, term FROM terms LIMIT 1")


def test_a_rebuild_that_fails_part_way_leaves_the_index_it_found(seeded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = seeded
    assert run_cli("index", "update", "--repo", str(root)).status == 0
    before = snapshot(root)
    assert len(before["files"]) == 3
    definitions = table_definitions(root)

    def failing_store(*_: object, **__: object) -> None:
        raise StorageFailure("a store that fails after the tables were emptied", [])

    monkeypatch.setattr(indexer, "_store", failing_store)
    with open_database(root) as database, pytest.raises(StorageFailure):
        rebuild(database, GitCorpusReader(root), NOW)
    assert snapshot(root) == before
    assert table_definitions(root) == definitions


def _break(root: Path, path: str) -> None:
    """Edit a memory into one the index must leave out: its claim is gone."""
    file = root / path
    text = file.read_text(encoding="utf-8")
    assert "<mark>" in text
    file.write_text(text.replace("<mark>", "<b>").replace("</mark>", "</b>"), encoding="utf-8")


def _search_paths(root: Path, query: str) -> list[str]:
    answer = run_cli("search", "--repo", str(root), query)
    assert answer.status == 0, answer.stdout + answer.stderr
    return [hit["path"] for hit in answer.data["hits"]]


def test_a_committed_edit_that_breaks_a_memory_drops_its_row_as_a_rebuild_would(seeded: Path, tmp_path: Path) -> None:
    root = seeded
    path = "resources/db/pool-ceiling.html"
    assert run_cli("index", "update", "--repo", str(root)).status == 0
    assert path in _search_paths(root, "pool ceiling")
    _break(root, path)
    git(root, "commit", "-q", "-am", "break the pool memory")
    report = run_cli("index", "update", "--repo", str(root))
    assert report.status == 0
    assert [item["path"] for item in report.data["skipped"]] == [path]
    assert path not in _search_paths(root, "pool ceiling")  # its old text is no longer in the repository
    assert snapshot(root) == rebuilt_snapshot(root, tmp_path)


def test_a_dirty_edit_that_breaks_a_memory_drops_its_row_until_it_is_reverted(seeded: Path, tmp_path: Path) -> None:
    root = seeded
    path = "resources/db/pool-ceiling.html"
    _break(root, path)
    assert updated_snapshot(root) == rebuilt_snapshot(root, tmp_path)
    assert path not in _search_paths(root, "pool ceiling")
    git(root, "checkout", "--", path)
    assert updated_snapshot(root) == rebuilt_snapshot(root, tmp_path)
    assert path in _search_paths(root, "pool ceiling")


def test_a_committed_symbolic_link_is_no_memory_to_an_update_as_to_a_rebuild(store_root: Path, tmp_path: Path) -> None:
    from tests.index.test_search import commit_files, memory_file

    commit_files(
        store_root,
        {
            "areas/real/fact.html": memory_file("Fact", "The heron stands still."),
            "areas/real/other.html": memory_file("Other", "The egret waits."),
        },
    )
    assert run_cli("index", "update", "--repo", str(store_root)).status == 0
    (store_root / "areas" / "real" / "link.html").symlink_to("fact.html")
    (store_root / "areas" / "real" / "other.html").unlink()
    (store_root / "areas" / "real" / "other.html").symlink_to("fact.html")  # a memory turned into a link
    git(store_root, "add", "-A", "areas")
    git(store_root, "commit", "-q", "-m", "links")
    answer = run_cli("index", "update", "--repo", str(store_root))
    assert answer.status == 0, answer.stdout + answer.stderr
    assert answer.data["skipped"] == []
    with open_database(store_root, read_only=True) as database:
        assert database.rows("SELECT path FROM files ORDER BY path") == [("areas/real/fact.html",)]
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)
