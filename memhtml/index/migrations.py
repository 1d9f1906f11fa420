"""The schema migrations of both planes: numbered SQL files shipped in the wheel, each applied in one
transaction with its ledger row, and the check that tells a file needing them from an up-to-date one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Final

from memhtml.contracts.errors import StorageFailure

if TYPE_CHECKING:
    from memhtml.index.database import Database

_MIGRATION_NAME: Final = re.compile(r"^\d{4}_[a-z0-9_]+\.sql$")


def migrations_root() -> Path:
    """The shipped migrations: inside the wheel (`memhtml/_migrations`), else the source checkout."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "_migrations"
    return shipped if shipped.is_dir() else package.parent / "migrations"


def apply_migrations(database: Database, schema: str, directory: Path) -> list[str]:
    """Apply, in filename order, each migration not in this plane's ledger: one transaction per file."""
    catalog = database.main_catalog if schema == "main" else schema
    ledger = f'"{catalog}".schema_migrations'
    database.run(f"CREATE TABLE IF NOT EXISTS {ledger} (name VARCHAR PRIMARY KEY, applied_at VARCHAR NOT NULL)")
    applied = {row[0] for row in database.rows(f"SELECT name FROM {ledger}")}
    done = []
    for migration in sorted(directory.glob("*.sql")):
        if migration.name in applied or not _MIGRATION_NAME.match(migration.name):
            continue
        statements = migration.read_text(encoding="utf-8")
        database.run(f'USE "{catalog}"')
        try:
            with database.transaction():
                database.execute_script(statements)
                database.run(
                    f"INSERT INTO {ledger} VALUES ($name, strftime(now(), '%Y-%m-%dT%H:%M:%SZ'))",
                    {"name": migration.name},
                )
        finally:
            database.run(f'USE "{database.main_catalog}"')
        done.append(migration.name)
    return done


def pending_migrations(database: Database) -> bool:
    """Whether shipped migrations are missing from either ledger (the file then needs a read-write open)."""
    shipped = {
        (folder, path.name)
        for folder in ("index", "state")
        for path in (migrations_root() / folder).glob("*.sql")
        if _MIGRATION_NAME.match(path.name)
    }
    try:
        applied = database.rows(
            f"""SELECT 'index', name FROM "{database.main_catalog}".schema_migrations
                UNION ALL SELECT 'state', name FROM "state".schema_migrations"""
        )
    except StorageFailure:
        return True  # a ledger is missing
    return bool(shipped - {(str(folder), str(name)) for folder, name in applied})
