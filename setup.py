"""The build: metadata lives in pyproject.toml; this declares the packages (the top-level `migrations/`
ships inside the wheel as `memhtml._migrations`, where `index.migrations` looks for them) and compiles the
modules pyproject.toml lists under `[tool.memhtml.compiled]` to C extensions with mypyc (one shared
library, `memhtml__mypyc`).

The compiled modules are an accelerator, never a requirement: without a C compiler or Python's headers
the build ships the pure package (which behaves the same) and says so, and a compile that fails falls
back the same way, leaving no half of the extensions behind (a module's shim without the shared library
would not import). MEMHTML_PURE_PYTHON=1 asks for the pure package outright.
"""

import os
import shlex
import shutil
import sys
import sysconfig
import tomllib
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, ExecError, LinkError, PlatformError

ROOT = Path(__file__).parent


def compiler_missing() -> str | None:
    """Why no extension can be built here, or None when a compiler and Python's headers are present."""
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or ""
    program = shlex.split(compiler)[0] if compiler.strip() else ""
    if not program or shutil.which(program) is None:
        return f"no C compiler ({program or 'none configured'})"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return "no Python headers (Python.h)"
    return None


class OptionalBuildExt(build_ext):
    """Build every extension, or none: on a compile failure remove what was built and go on pure."""

    def run(self) -> None:
        try:
            super().run()
        except (CCompilerError, CompileError, ExecError, LinkError, PlatformError, OSError) as error:
            for extension in self.extensions:
                Path(self.get_ext_fullpath(extension.name)).unlink(missing_ok=True)
            print(f"memhtml: compiling failed ({error}); installing the pure Python package", file=sys.stderr)


def compiled_extensions() -> list[object]:
    if os.environ.get("MEMHTML_PURE_PYTHON") == "1":
        return []
    missing = compiler_missing()
    if missing is not None:
        print(f"memhtml: {missing}; installing the pure Python package", file=sys.stderr)
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
    cmdclass={"build_ext": OptionalBuildExt},
)
