"""Every SQL statement of the package lives in `memhtml/index/`, the one place that knows a table or a
column. A string literal that reads as SQL anywhere else fails this test.

The modules below still hold statements from before that rule; each count may only go down, and a
module leaves the list when its last statement moves into `index/`. A new statement outside `index/`
(in a listed module or any other) fails at once.
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

# module (relative to memhtml/) -> statements it still holds; only ever lowered.
PENDING: dict[str, int] = {
    "operations/browse.py": 11,
    "operations/conflicts.py": 2,
    "operations/indexing.py": 6,
    "operations/lifecycle.py": 1,
}


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


def test_sql_outside_index_is_only_what_is_still_to_move() -> None:
    found = statements_outside_index()
    grown = {module: count for module, count in found.items() if count > PENDING.get(module, 0)}
    assert grown == {}, "SQL belongs in memhtml/index/: give the statement a function there"
    shrunk = {
        module: (PENDING[module], found.get(module, 0)) for module in PENDING if found.get(module, 0) < PENDING[module]
    }
    assert shrunk == {}, "statements moved into index/: lower their counts in PENDING (remove a module at 0)"


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
