"""Whether DuckDB can keep a store's index where the store is: the one place that knows which
characters of a path DuckDB does not take literally.

DuckDB reads a `?` in a file's path as the start of a query string (its write-ahead log goes to
`dir/a.wal?b/...`, which does not exist) and turns every `\\` into `/`. It resolves links and relative
names to the real path before it does, so no other name for the same directory helps. A store under
such a directory could be initialized by git but never indexed: `init` refuses it before writing
anything, and an open of an index there (a store moved after its `init`) fails with this same reason
instead of DuckDB's.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Final

from memhtml.contracts.errors import StorageFailure, UsageError

# Every other printable character, a newline and a tab, was tried in a directory name and kept.
_NOT_LITERAL: Final[str] = "?\\"


def characters_duckdb_misreads(root: Path) -> list[str]:
    """The characters of `root`'s absolute path that DuckDB would not read literally, in order."""
    text = str(root.absolute())
    return [character for character in _NOT_LITERAL if character in text]


def _reason(root: Path, misread: list[str]) -> str:
    shown = " or ".join(repr(character) for character in misread)
    return f"the index cannot be kept under {root}: DuckDB does not read {shown} in a path literally"


def refuse_for_init(root: Path) -> None:
    """Refuse (exit 2, nothing written) a store path no index could be kept under."""
    misread = characters_duckdb_misreads(root)
    if misread:
        raise UsageError(
            "ERR_INVALID_FLAG",
            _reason(root, misread) + "; choose a directory whose path holds neither",
            ["memhtml init --repo <a path without '?' or '\\'>"],
            command="init",
        )


def refuse_to_open(root: Path) -> None:
    """Refuse to open the index of a store under such a path (moved there after its `init`)."""
    misread = characters_duckdb_misreads(root)
    if misread:
        raise StorageFailure(
            _reason(root, misread) + "; its memories in git are untouched",
            [f"mv {shlex.quote(str(root))} <a path without '?' or '\\'>"],
            retryable=False,
        )
