"""The migration ledgers: a read-only open notices any shipped migration either plane lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from memhtml.index.database import Database, open_database
from memhtml.index.migrations import pending_migrations


def _pending(store: Path) -> bool:
    with open_database(store, read_only=True) as opened:
        assert opened.read_only
        return pending_migrations(opened)


@pytest.mark.parametrize("plane", ["index", "state"])
def test_a_new_migration_of_either_plane_is_pending_until_a_read_write_open(
    tmp_path: Path, shipped: Path, plane: str
) -> None:
    store = tmp_path / "store"
    with open_database(store):
        pass  # created and migrated
    assert not _pending(store)
    catalog = "main" if plane == "index" else "state"
    (shipped / plane / "0099_probe.sql").write_text(f"CREATE TABLE {catalog}.probe (id INTEGER);\n", encoding="utf-8")
    assert _pending(store)
    with open_database(store) as migrated:
        assert migrated.value(f"SELECT count(*) FROM {catalog}.probe") == 0
    assert not _pending(store)


def test_a_file_that_is_not_a_migration_is_never_pending(tmp_path: Path, shipped: Path) -> None:
    store = tmp_path / "store"
    with open_database(store):
        pass
    (shipped / "index" / "notes.sql").write_text("SELECT 1;\n", encoding="utf-8")
    assert not _pending(store)


def _two_memories_and_no_index(store_root: Path) -> None:
    """Commit two memories, then delete the index files, for a test to build them as it chooses."""
    from memhtml.index.database import database_paths
    from tests.index.test_search import commit_files, memory_file

    commit_files(
        store_root,
        {
            "resources/db/pool.html": memory_file("Pool", "The pool ceiling is 64.", tags=("db",)),
            "areas/ops/rotate.html": memory_file("Rotate", "Rotate the deploy key every 90 days."),
        },
    )
    for database_file in database_paths(store_root):
        database_file.unlink(missing_ok=True)


def test_an_index_from_before_the_bulk_loadable_keys_is_rebuilt_once_and_keeps_its_vectors(
    store_root: Path, tmp_path: Path, shipped: Path
) -> None:
    """Migration 0004 re-creates `files` (its keys as indexes, no `fts_text`) and `terms` empty: the next
    pass rebuilds the index from git, to the rows a rebuild from nothing gives, and embeds nothing again."""
    from memhtml.operations.indexing import update_index
    from tests.index.test_indexer import rebuilt_snapshot, snapshot

    _two_memories_and_no_index(store_root)
    # 0004 and the migrations after it that assume its schema, held back until the index is built
    # (0007 and later add what this code reads, and touch nothing 0004 changes).
    later = {
        path: path.read_text(encoding="utf-8")
        for path in sorted(shipped.glob("index/*.sql"))
        if "0004" <= path.name < "0007"
    }
    for migration in later:
        migration.unlink()
    with open_database(store_root) as database:  # the schema as the migrations before 0004 left it
        database.run("ALTER TABLE files ALTER COLUMN fts_text SET DEFAULT ''")  # which this code never fills
    first = update_index(store_root)
    assert first["embeddingsWritten"] == 2
    with open_database(store_root, read_only=True) as database:
        old_columns = {
            row[0] for row in database.rows("SELECT column_name FROM duckdb_columns() WHERE table_name = 'files'")
        }
        assert "fts_text" in old_columns
        vectors = database.rows("SELECT content_hash, ordinal, vector FROM chunk_vectors ORDER BY ALL")
    for migration, statements in later.items():
        migration.write_text(statements, encoding="utf-8")
    second = update_index(store_root)
    assert second["mode"] == "rebuild"
    assert second["embeddingsWritten"] == 0
    with open_database(store_root, read_only=True) as database:
        columns = {
            row[0] for row in database.rows("SELECT column_name FROM duckdb_columns() WHERE table_name = 'files'")
        }
        indexes = {
            row[0] for row in database.rows("SELECT index_name FROM duckdb_indexes() WHERE table_name = 'files'")
        }
        assert database.rows("SELECT content_hash, ordinal, vector FROM chunk_vectors ORDER BY ALL") == vectors
    assert columns == old_columns - {"fts_text"}
    assert indexes == {"files_path", "files_doc_id", "files_active_hash"}
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)


def _text_compressions(database: Database) -> dict[str, set[str]]:
    """Each VARCHAR column of `files` and the compressions its stored segments use."""
    found: dict[str, set[str]] = {}
    for column, compression in database.rows(
        "SELECT column_name, compression FROM pragma_storage_info('files') WHERE segment_type = 'VARCHAR'"
    ):
        found.setdefault(column, set()).add(compression)
    return found


PLAIN_COLUMNS = {"path", "blob_sha", "content_hash", "title", "gist", "body_text", "disclosure_text", "token_text"}


def test_an_index_from_before_the_plain_texts_keeps_its_rows_and_stores_them_plain_from_then_on(
    store_root: Path, tmp_path: Path, shipped: Path
) -> None:
    """Migration 0005 copies `files` into a table whose long texts and keys are stored uncompressed: no
    rebuild follows, every row stays as it was, and a rebuild keeps the choice (it re-creates the table
    from its own definition)."""
    from memhtml.operations.indexing import rebuild_index, update_index
    from tests.index.test_indexer import rebuilt_snapshot, snapshot

    _two_memories_and_no_index(store_root)
    migration = shipped / "index" / "0005_files_texts_stored_plain.sql"
    statements = migration.read_text(encoding="utf-8")
    migration.unlink()
    update_index(store_root)
    before = snapshot(store_root)
    with open_database(store_root) as database:
        doc_ids = database.rows("SELECT path, doc_id FROM files ORDER BY path")
        database.run("CHECKPOINT")
        assert _text_compressions(database)["body_text"] != {"Uncompressed"}
    migration.write_text(statements, encoding="utf-8")
    after = update_index(store_root)
    assert after["mode"] == "update"
    assert after["unchanged"] is True
    assert snapshot(store_root) == before == rebuilt_snapshot(store_root, tmp_path)
    with open_database(store_root) as database:
        indexes = {
            row[0] for row in database.rows("SELECT index_name FROM duckdb_indexes() WHERE table_name = 'files'")
        }
        assert database.rows("SELECT path, doc_id FROM files ORDER BY path") == doc_ids
        database.run("CHECKPOINT")
        compressions = _text_compressions(database)
    assert indexes == {"files_path", "files_doc_id", "files_active_hash"}
    for column in PLAIN_COLUMNS:
        assert compressions[column] == {"Uncompressed"}, column
    rebuild_index(store_root)
    with open_database(store_root) as database:
        database.run("CHECKPOINT")
        rebuilt = _text_compressions(database)
    for column in PLAIN_COLUMNS:
        assert rebuilt[column] == {"Uncompressed"}, column
    assert rebuilt["memory_type"] != {"Uncompressed"}


def test_an_index_from_before_the_letter_and_digit_split_is_rebuilt_once_and_finds_a_glued_version(
    store_root: Path, tmp_path: Path, shipped: Path
) -> None:
    """Migration 0006 marks the index as never built: its postings lack the terms the tokenizer now cuts
    where letters meet digits, and the next pass rebuilds them from git, embedding nothing again."""
    from memhtml.index.database import database_paths
    from memhtml.operations.indexing import update_index
    from tests.index.test_indexer import rebuilt_snapshot, snapshot
    from tests.index.test_search import commit_files, memory_file

    commit_files(store_root, {"areas/ops/render.html": memory_file("Render box", "The render box runs Python3.11.")})
    for database_file in database_paths(store_root):
        database_file.unlink(missing_ok=True)
    migration = shipped / "index" / "0006_letters_and_digits_split.sql"
    statements = migration.read_text(encoding="utf-8")
    migration.unlink()
    update_index(store_root)
    glued = "SELECT count(*) FROM postings JOIN terms USING (term_id) WHERE term IN ('3.11', 'python', '3')"
    with open_database(store_root) as database:
        assert database.value(glued) == 3
        # The postings as a tokenizer without the split left them.
        database.run(
            "DELETE FROM postings WHERE term_id IN (SELECT term_id FROM terms WHERE term IN ('3.11', 'python', '3'))"
        )
    migration.write_text(statements, encoding="utf-8")
    answer = update_index(store_root)
    assert answer["mode"] == "rebuild"
    assert answer["embeddingsWritten"] == 0
    with open_database(store_root, read_only=True) as database:
        assert database.value(glued) == 3
    assert update_index(store_root)["mode"] == "update"  # once
    assert snapshot(store_root) == rebuilt_snapshot(store_root, tmp_path)
