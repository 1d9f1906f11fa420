"""The build: metadata lives in pyproject.toml; this declares the packages (the top-level `migrations/`
ships inside the wheel as `memhtml._migrations`, where `index.migrations` looks for them) and compiles the
modules pyproject.toml lists under `[tool.memhtml.compiled]` to C extensions with mypyc (one shared
library, `memhtml__mypyc`).

MEMHTML_PURE_PYTHON=1 builds without compiling (no C compiler needed); the package behaves the same.
"""

import os
import tomllib
from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).parent


def compiled_extensions() -> list[object]:
    if os.environ.get("MEMHTML_PURE_PYTHON") == "1":
        return []
    from mypyc.build import mypycify

    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    modules = settings["tool"]["memhtml"]["compiled"]["modules"]
    return list(mypycify(modules, opt_level="3", group_name="memhtml"))


# Data directories are listed as packages too (setuptools warns of any it must guess).
DATA_PACKAGES = ["memhtml._models", "memhtml._migrations", "memhtml._migrations.index", "memhtml._migrations.state"]

setup(
    packages=[*find_packages(include=["memhtml", "memhtml.*"]), *DATA_PACKAGES],
    package_dir={"memhtml._migrations": "migrations"},
    ext_modules=compiled_extensions(),
)
