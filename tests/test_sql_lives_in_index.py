"""Every SQL statement of the package lives in `memhtml/index/`, the one place that knows a table or a
column. A string literal that reads as SQL anywhere else fails this test.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "memhtml"

# A statement, or a fragment of one (a subquery, a clause joined into one), as this code base writes SQL:
# upper-case keywords.
STATEMENT = re.compile(
    r"\b(SELECT\b.*\bFROM\b|INSERT\s+INTO\s|UPDATE\s+[\w.]+\s+SET\s|DELETE\s+FROM\s|"
    r"CREATE\s+(TABLE|INDEX|VIEW|TEMP|OR)\s|ALTER\s+TABLE\s|DROP\s+(TABLE|INDEX|VIEW)\s)",
    re.DOTALL,
)


def _literal_texts(tree: ast.AST) -> list[str]:
    """Each string literal, an f-string read as its literal parts joined (`{…}` left out)."""
    texts: list[str] = []
    inside_fstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [part.value for part in node.values if isinstance(part, ast.Constant)]
            inside_fstrings.update(id(part) for part in node.values)
            texts.append("".join(str(part) for part in parts))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inside_fstrings:
            texts.append(node.value)
    return texts


def statements_outside_index() -> Counter[str]:
    found: Counter[str] = Counter()
    for module in sorted(PACKAGE.rglob("*.py")):
        relative = module.relative_to(PACKAGE).as_posix()
        if relative.startswith("index/"):
            continue
        tree = ast.parse(module.read_text(encoding="utf-8"))
        found[relative] += sum(1 for text in _literal_texts(tree) if STATEMENT.search(text))
    return +found


def test_no_sql_outside_index() -> None:
    assert statements_outside_index() == {}, "SQL belongs in memhtml/index/: give the statement a function there"


def test_the_pattern_finds_what_the_code_writes() -> None:
    # The index's own modules are where the statements went: the pattern must find them there.
    index_texts = [
        text
        for module in (PACKAGE / "index").rglob("*.py")
        for text in _literal_texts(ast.parse(module.read_text(encoding="utf-8")))
    ]
    assert sum(1 for text in index_texts if STATEMENT.search(text)) > 50
    assert STATEMENT.search("SELECT path FROM files WHERE path = $path")
    assert STATEMENT.search("UPDATE index_state SET head_sha = $head WHERE id = 1")
    assert not STATEMENT.search("Select a memory to archive")
