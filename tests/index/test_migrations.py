"""The migration ledgers: a read-only open notices any shipped migration either plane lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from memhtml.index.database import open_database, pending_migrations


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
