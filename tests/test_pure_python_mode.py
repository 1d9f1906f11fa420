"""Under `tests/pure_python` (the second pass of `make test`), every memhtml module, those mypyc
compiles included, runs from its Python source; in the ordinary pass the compiled build is used
where it was built. Either way the same tests pass: that is how the two builds are held equal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PURE_DIRECTORY = Path(__file__).resolve().parent / "pure_python"
PROBE = (
    "import memhtml.html.parser, memhtml.index.projection, memhtml.domain.tokens;"
    "print(memhtml.html.parser.__file__, memhtml.index.projection.__file__, memhtml.domain.tokens.__file__)"
)


def _loaded_files(pythonpath: str | None) -> list[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    result = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return result.stdout.split()


def test_the_pure_python_directory_loads_every_module_from_its_source() -> None:
    files = _loaded_files(str(PURE_DIRECTORY))
    assert len(files) == 3 and all(file.endswith(".py") for file in files), files


def test_this_process_runs_the_build_its_pass_asked_for() -> None:
    import memhtml.html.parser

    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    pure_pass = any(entry and Path(entry).resolve() == PURE_DIRECTORY for entry in entries)
    if pure_pass:
        assert memhtml.html.parser.__file__.endswith(".py")
    elif not _compiled_build_present():
        pytest.skip("no compiled build here (installed without a C compiler)")
    else:
        assert not memhtml.html.parser.__file__.endswith(".py"), "the compiled build is present but unused"


def _compiled_build_present() -> bool:
    import memhtml

    package = Path(memhtml.__file__).parent
    return any(package.glob("html/parser.*.so")) or any(package.glob("html/parser.*.pyd"))
