"""An argument whose bytes are not UTF-8 is refused at exit 2 before any I/O, whichever value carries it:
a query, a filter, a path. It never reaches the tokenizer or DuckDB, where it failed at exit 1 with a
retryable storage error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import commit_count

ARGUMENT_LISTS = [
    [b"search", b"pool\xff"],
    [b"recall", b"pool \xfe\xff ceiling"],
    [b"list", b"--tag", b"\xff"],
    [b"search", b"pool", b"--entity", b"service:\xff"],
    [b"search", b"pool", b"--workspace", b"pay\xc3"],
    [b"read", b"areas/inbox/x\xff.html"],
    [b"list", b"--limit", b"\xff"],
    [b"write", b"--title", b"T", b"--type", b"semantic", b"--claim", b"The pool is \xff."],
]


@pytest.mark.parametrize("arguments", ARGUMENT_LISTS, ids=lambda arguments: arguments[0].decode())
def test_an_argument_that_is_not_utf8_is_refused_at_exit_2(store_root: Path, arguments: list[bytes]) -> None:
    commits = commit_count(store_root)
    completed = subprocess.run(
        [sys.executable, "-m", "memhtml", *arguments, b"--repo", bytes(store_root)], capture_output=True, check=False
    )
    assert completed.returncode == 2, completed.stdout
    envelope = json.loads(completed.stdout.decode("utf-8"))  # the answer itself is UTF-8
    assert envelope["code"] == "ERR_INVALID_FLAG"
    assert envelope["retryable"] is False
    assert "is not valid UTF-8 text" in envelope["error"]
    bad_byte = next(byte for argument in arguments for byte in argument if byte >= 0x80)
    assert f"\\x{bad_byte:02x}" in envelope["error"]  # the byte named, as an escape
    assert b"Traceback" not in completed.stderr
    assert commit_count(store_root) == commits
