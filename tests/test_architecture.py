"""Architecture rules that a review would otherwise have to remember: start-up imports, purity of the
inner layers, every dependency confined to its module, the single reader of the environment, module size
and docstrings."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memhtml"
HEAVY = ("duckdb", "_duckdb", "git", "typer", "rich", "click", "selectolax", "lxml")


def imported_modules(*args: str) -> set[str]:
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memhtml", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    names = set()
    for line in completed.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "memhtml.cli.entry" in names  # the probe itself works
    return names


@pytest.mark.parametrize("args", [("manifest",), ("--help",), ("help", "write"), ()])
def test_describing_commands_import_no_heavy_dependency(args: tuple[str, ...]) -> None:
    loaded = imported_modules(*args)
    heavy = sorted(name for name in loaded if name.split(".")[0] in HEAVY)
    assert heavy == []


def python_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def third_party_imports(module: Path) -> list[str]:
    """The top-level names of what `module` imports from outside the package and the standard library."""
    found = []
    for node in ast.walk(ast.parse(module.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        found += [
            top for name in names if (top := name.split(".")[0]) != "memhtml" and top not in sys.stdlib_module_names
        ]
    return found


def test_inner_layers_import_only_the_standard_library() -> None:
    offenders = [
        f"{module.name}: {name}"
        for layer in ("contracts", "domain")
        for module in (PACKAGE / layer).rglob("*.py")
        for name in third_party_imports(module)
    ]
    assert offenders == []


def test_every_dependency_the_package_imports_is_confined_by_an_import_contract() -> None:
    """A new dependency is denied everywhere until a contract of pyproject.toml forbids it to the whole
    package and names the one module allowed to import it (`lint-imports` then holds it there)."""
    settings = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    confined = {
        name
        for contract in settings["tool"]["importlinter"]["contracts"]
        if contract["type"] == "forbidden" and contract["source_modules"] == ["memhtml"]
        for name in contract["forbidden_modules"]
    }
    imported = {name for module in python_modules() for name in third_party_imports(module)}
    assert imported, "the scan found no import at all"
    assert sorted(imported - confined) == []


def test_only_the_configuration_module_reads_the_environment() -> None:
    # gitcmd forwards the environment to git children (scrubbed) and never interprets it.
    allowed = {PACKAGE / "operations" / "config.py", PACKAGE / "store" / "gitcmd.py"}
    readers = [
        str(module.relative_to(PACKAGE))
        for module in python_modules()
        if module not in allowed and ("environ" in module.read_text() or "getenv" in module.read_text())
    ]
    assert readers == []


def test_modules_are_small_documented_and_never_a_grab_bag() -> None:
    for module in python_modules():
        assert module.name not in ("utils.py", "helpers.py", "misc.py"), module
        source = module.read_text()
        assert len(source.splitlines()) <= 800, module
        assert ast.get_docstring(ast.parse(source)), f"{module} has no module docstring"


def _frozen_dataclasses_without_fields() -> list[str]:
    found = []
    for module in python_modules():
        for node in ast.walk(ast.parse(module.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            frozen = any(
                ast.unparse(decorator).startswith("dataclass(frozen=True") for decorator in node.decorator_list
            )
            uses_field = any(
                isinstance(statement, ast.AnnAssign) and "field(" in ast.unparse(statement) for statement in node.body
            )
            if frozen and not uses_field:
                found.append(f"{module.relative_to(PACKAGE)}: {node.name}")
    return found


def test_immutable_records_are_named_tuples() -> None:
    # A frozen dataclass compiles six generated methods from source when its module is imported
    # (≈0.8 ms each on Python 3.11); a NamedTuple is defined ten times faster. A write defined 55 of
    # them before doing any work. A dataclass stays for mutable state, or when a field needs `field()`.
    assert _frozen_dataclasses_without_fields() == []


def test_the_everyday_commands_never_import_dataclasses(store_root: Path) -> None:
    # `dataclasses` imports inspect, ast, dis and tokenize (≈8 ms) before defining anything.
    store = str(store_root)
    write = ("write", "--repo", store, "--title", "Pool", "--type", "semantic", "--claim", "The pool holds 64.")
    for command in (write, ("search", "pool", "--repo", store), ("index", "update", "--repo", store)):
        loaded = imported_modules(*command)
        assert "dataclasses" not in loaded, command


def test_a_search_loads_neither_the_commit_machinery_nor_the_recall_fold(store_root: Path) -> None:
    store = str(store_root)
    imported_modules("search", "anything", "--repo", store)  # the first builds the index
    loaded = imported_modules("search", "anything", "--repo", store)
    assert "memhtml.operations.retrieval" in loaded
    # Opening a store must not need what committing needs (init has its own module for that).
    assert {"memhtml.store.commit", "memhtml.store.initialize", "memhtml.domain.recall_fold"} & loaded == set()
    # Nor the HTML parser and the projection (≈40 ms): a search reads the index, never a file; only a look
    # into a past commit projects the memories the index does not hold.
    assert {"selectolax", "memhtml.html.parser", "memhtml.index.projection", "memhtml.index.asof"} & loaded == set()
    # Nor the memory file's reader and the semantic head that only a write's dedupe compares.
    assert {"memhtml.html.document", "memhtml.html.identity"} & loaded == set()


def compiled_sources() -> list[Path]:
    """The modules pyproject.toml has mypyc compile (`[tool.memhtml.compiled]`)."""
    import tomllib

    settings = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    return [PACKAGE.parent / name for name in settings["tool"]["memhtml"]["compiled"]["modules"]]


def test_the_compiled_modules_run_compiled_and_from_their_current_source() -> None:
    # A compiled module shadows its source: an edit made after the build would not run, and the tests would
    # pass or fail on code that is not there. `make` reinstalls when a listed source changes.
    import importlib
    import os

    pure = os.environ.get("MEMHTML_PURE_PYTHON") == "1"
    stale, uncompiled = [], []
    for source in compiled_sources():
        assert source.is_file(), source
        dotted = ".".join(source.relative_to(PACKAGE.parent).with_suffix("").parts)
        loaded = Path(str(importlib.import_module(dotted).__file__))
        if pure:
            assert loaded.suffix == ".py", loaded
        elif loaded.suffix != ".so":
            uncompiled.append(dotted)
        elif loaded.stat().st_mtime < source.stat().st_mtime:
            stale.append(dotted)
    assert uncompiled == [], "built without mypyc: reinstall (make venv), or set MEMHTML_PURE_PYTHON=1"
    assert stale == [], "edited after the build: reinstall (make venv) to compile them again"
