"""Docstrings and comments say what code owns and why it is shaped so; measured timings go stale with the
next change, so they live in docs/performance.md, never in the sources. This walks every module's
module, class and function docstrings and its comments and fails on anything that reads as a measured
time (a number with ms, µs or s as its unit) or a measured speed ratio ("1.5x faster")."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "memhtml"


# Exact phrases that match the pattern but state behaviour, not a measurement. Each is removed from a
# line before the line is checked.
ALLOWED_PHRASES = (
    # The reinforcement window: a use of a memory is counted at most once in it (a design constant).
    "once per 900 s",
    "in the last 900 s",
    # Quoted example claims that the conflict rules parse ("the timeout is 30s"): values, not timings.
    '"is set to 30s"',
    '"is 30s"',
    '"changed to 30s"',
    '"is not 30s"',
    '"is 60s"',
)

_NUMBER = r"(?<![\w.])(?<![A-Za-z]-)\d[\d,.]*"  # not the "32" of "CRC-32s", nor a digit inside a word
FIGURE = re.compile(
    rf"{_NUMBER}\s?(?:ms|µs|us|ns|s)\b"  # a time: "5 ms", "0.13 s", "≈90 µs", "1.3s"
    rf"|{_NUMBER}\s?[x×]\s+(?:faster|slower|cheaper|quicker|costlier)\b"  # a ratio: "1.5x faster"
    rf"|{_NUMBER}\s?%\s+(?:faster|slower|cheaper|quicker)\b"  # "12% faster"
)


def _docstrings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Each line of every module, class and function docstring, with its line number in the file."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        text = ast.get_docstring(node, clean=False)
        if text is None:
            continue
        first = node.body[0].lineno  # the docstring's own expression
        for offset, line in enumerate(text.splitlines()):
            yield first + offset, line


def _comments(source: str) -> Iterator[tuple[int, str]]:
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def _figures(line: str) -> bool:
    for phrase in ALLOWED_PHRASES:
        line = line.replace(phrase, "")
    return FIGURE.search(line) is not None


def figures_in_sources() -> list[str]:
    found = []
    for module in sorted(PACKAGE.rglob("*.py")):
        relative = module.relative_to(ROOT).as_posix()
        source = module.read_text(encoding="utf-8")
        lines = [*_docstrings(ast.parse(source)), *_comments(source)]
        found.extend(f"{relative}:{number}: {text.strip()}" for number, text in sorted(lines) if _figures(text))
    return found


def test_the_pattern_tells_figures_from_design_numbers() -> None:
    for figure in ("≈5 ms", "0.13 s vs 0.03 s", "164 against 171 ms", "≈1.5x faster", "≈90 µs", "≈25× faster"):
        assert _figures(figure), figure
    for design in ("8 tries", "100,000 lines", "256 MiB", "1024 dims", "CRC-32s", "version 3.11", "≈4 updates"):
        assert not _figures(design), design
    assert not _figures("at most once per 900 s per memory")


def test_no_measured_figures_in_docstrings_or_comments() -> None:
    found = figures_in_sources()
    assert found == [], f"{len(found)} measured figures (move them to docs/performance.md):\n" + "\n".join(found)
