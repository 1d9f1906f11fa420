"""Every function of `memhtml/operations/` returns a typed value: a NamedTuple, a TypedDict, a plain
value, never an untyped `dict[str, Any]` (or `dict[str, object]`) whose keys a reader has to find in
the function's body. A return annotation that holds one, anywhere in it (`list[dict[str, Any]]`,
`dict[str, Any] | None`), fails this test.
"""

from __future__ import annotations

import ast
from pathlib import Path

OPERATIONS = Path(__file__).resolve().parents[1] / "memhtml" / "operations"
UNTYPED_VALUES = ("Any", "object")


def _untyped_mappings(annotation: ast.expr) -> list[str]:
    """Each `dict[str, Any]`-like subscript inside the annotation, as source text."""
    found = []
    for node in ast.walk(annotation):
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
            continue
        if node.value.id not in ("dict", "Dict", "Mapping", "MutableMapping"):
            continue
        arguments = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        value = arguments[-1]
        if isinstance(value, ast.Name) and value.id in UNTYPED_VALUES:
            found.append(ast.unparse(node))
    return found


def _untyped_returns(source: str) -> list[tuple[int, str, str]]:
    tree = ast.parse(source)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            problems.extend((node.lineno, node.name, found) for found in _untyped_mappings(node.returns))
    return problems


def test_no_operation_returns_an_untyped_dict() -> None:
    problems = [
        f"{path.relative_to(OPERATIONS.parent.parent)}:{line} {name} -> {found}"
        for path in sorted(OPERATIONS.glob("*.py"))
        for line, name, found in _untyped_returns(path.read_text(encoding="utf-8"))
    ]
    assert problems == []


def test_the_check_sees_an_untyped_dict_wherever_the_annotation_holds_it() -> None:
    source = (
        "def a() -> dict[str, Any]: ...\n"
        "def b() -> list[dict[str, object]]: ...\n"
        "def c() -> dict[str, Any] | None: ...\n"
        "def d() -> tuple[Mapping[str, Any], int]: ...\n"
        "def typed() -> Report: ...\n"
        "def counts() -> dict[str, int]: ...\n"
    )
    assert [name for _, name, _ in _untyped_returns(source)] == ["a", "b", "c", "d"]
