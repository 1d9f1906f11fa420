"""Load memhtml's modules from their Python source even where a compiled build sits beside them.

`make test` runs the suite once on the installed package, whose file-reading modules are mypyc
extensions when a C compiler was there, and then the tests of those modules again with this
directory on PYTHONPATH: Python imports `sitecustomize` at start-up in every process (the test
runner's workers and every `memhtml` child they start), and the finder below makes each `memhtml.*`
module load from its `.py`, as on a machine without a compiler. `tests/test_pure_python_mode.py`
checks that it did.
"""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType


class SourceOnlyFinder:
    """Finds `memhtml.*` modules among Python sources only, never an extension module."""

    @classmethod
    def find_spec(
        cls, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not name.startswith("memhtml.") or path is None:
            return None
        for entry in path:
            finder = importlib.machinery.FileFinder(
                entry, (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES)
            )
            spec = finder.find_spec(name, target)
            if spec is not None:
                return spec
        return None


sys.meta_path.insert(0, SourceOnlyFinder)
