"""Fixtures shared by the index tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memhtml.index import migrations as migrations_module


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped migrations that the test may add to, used in their place."""
    root = tmp_path / "migrations"
    shutil.copytree(migrations_module.migrations_root(), root)
    monkeypatch.setattr(migrations_module, "migrations_root", lambda: root)
    return root
