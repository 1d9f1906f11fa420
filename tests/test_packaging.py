"""The wheel ships what the package reads at run time: every module, the migrations (as
`memhtml/_migrations`, where `index.database` looks for them) and the static model."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent


def tracked(*patterns: str) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--", *patterns], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    return [line for line in listed.stdout.splitlines() if line]


@pytest.mark.parametrize(
    "build_environment",
    [
        pytest.param({"MEMHTML_PURE_PYTHON": "1"}, id="pure-python-asked-for"),
        # A machine without a C compiler: a plain install still works, as the pure package.
        pytest.param({"CC": "/nonexistent/bin/cc"}, id="no-c-compiler"),
    ],
)
def test_the_wheel_holds_every_module_the_migrations_and_the_model(
    tmp_path: Path, build_environment: dict[str, str]
) -> None:
    # A pure Python wheel (no mypyc) builds in seconds from the backend the dev extras install; a compiled
    # wheel holds the same files plus the extensions. Built from a copy of the tracked files, so neither
    # an earlier build's leftovers nor untracked files can stand in for what a clean clone holds.
    source = tmp_path / "source"
    for name in tracked():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT / name, source / name)
    environment = {key: value for key, value in os.environ.items() if key != "MEMHTML_PURE_PYTHON"}
    environment.update(build_environment)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "wheel"),
        ],
        env=environment,
        capture_output=True,
        check=True,
    )
    [wheel] = (tmp_path / "wheel").glob("memhtml-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(archive.read(name).decode() for name in names if name.endswith("entry_points.txt"))
    assert [name for name in names if name.endswith((".so", ".pyd", ".c"))] == []
    missing_modules = [path for path in tracked("memhtml/*.py") if path not in names]
    assert missing_modules == []
    migrations = tracked("migrations/*.sql", "migrations/*.md")
    assert migrations, "the project has migrations"
    assert [path for path in migrations if f"memhtml/_{path}" not in names] == []
    model = tracked("memhtml/_models/*")
    assert model, "the project ships a model"
    assert [path for path in model if path not in names] == []
    assert "memhtml = memhtml.launch:main" in entry_points
    assert "memhtml-mcp = memhtml.mcp.server:main" in entry_points
