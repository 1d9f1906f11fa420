"""A batch past its limits (lines, bytes) is refused at exit 2 with ERR_INPUT_TOO_LARGE before anything
is written, from a file, from stdin and through the MCP batch tool alike."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memhtml.cli import streams
from memhtml.contracts.errors import UsageError
from memhtml.contracts.limits import MAX_APPLY_LINES
from memhtml.mcp.server import call_tool
from memhtml.operations import batchinput
from tests.conftest import commit_count, git, memory_files

OP = {"op": "write", "title": "Many", "type": "semantic", "body": "One of very many."}


def _apply_from_stdin(root: Path, stream: bytes) -> tuple[int, dict[str, object]]:
    completed = subprocess.run(
        [sys.executable, "-m", "memhtml", "apply", "--repo", str(root)], input=stream, capture_output=True, check=False
    )
    return completed.returncode, json.loads(completed.stdout)


def test_a_stream_of_one_line_too_many_is_refused_and_writes_nothing(store_root: Path) -> None:
    before = commit_count(store_root)
    lines = [json.dumps({**OP, "title": f"Many {number}"}) for number in range(MAX_APPLY_LINES + 1)]
    status, envelope = _apply_from_stdin(store_root, ("\n".join(lines) + "\n").encode())
    assert status == 2, envelope
    assert envelope["code"] == "ERR_INPUT_TOO_LARGE"
    assert f"{MAX_APPLY_LINES:,} lines" in str(envelope["error"])
    assert commit_count(store_root) == before and memory_files(store_root) == []
    assert git(store_root, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_stream_at_the_line_limit_is_not_refused_for_its_length(store_root: Path, tmp_path: Path) -> None:
    stream = tmp_path / "ops.jsonl"
    stream.write_text((json.dumps(OP) + "\n") * MAX_APPLY_LINES, encoding="utf-8")
    text = streams.read_ops_stream("apply", str(stream), None)
    assert len(batchinput.decode_ops(text)) == MAX_APPLY_LINES


def test_a_file_past_the_byte_limit_is_refused_by_its_size_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "MAX_APPLY_BYTES", 4 << 20)
    source = tmp_path / "ops.jsonl"
    source.write_bytes((json.dumps(OP).encode() + b"\n") * ((5 << 20) // 80))  # past the 4 MiB limit
    with source.open("rb") as handle, pytest.raises(UsageError) as refused:
        streams._bounded_text("apply", handle, "--file ops.jsonl")
    assert refused.value.envelope_code == "ERR_INPUT_TOO_LARGE"
    with pytest.raises(UsageError):
        streams.read_ops_stream("apply", str(source), None)


def test_a_pipe_past_the_byte_limit_is_refused_once_read_that_far(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streams, "MAX_APPLY_BYTES", 4 << 20)
    reading, writing = os.pipe()
    written = [0]
    block = (json.dumps(OP) + "\n").encode() * 1_000

    def write_forever() -> None:
        with contextlib.suppress(BrokenPipeError), os.fdopen(writing, "wb") as sink:
            while written[0] < 64 << 20:  # far past the limit, unless the reader stops taking it
                sink.write(block)
                written[0] += len(block)

    writer = threading.Thread(target=write_forever)
    writer.start()
    with os.fdopen(reading, "rb") as source, pytest.raises(UsageError) as refused:
        streams._bounded_text("apply", source, "stdin")
    writer.join()
    assert refused.value.envelope_code == "ERR_INPUT_TOO_LARGE"
    assert written[0] < 8 << 20  # the reader stopped just past the limit, not at the end of the stream


def test_the_mcp_batch_tool_refuses_a_batch_past_the_line_limit(
    store_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batchinput, "MAX_APPLY_LINES", 3)
    before = commit_count(store_root)
    ops = [{"title": f"Many {number}", "memory_type": "semantic", "body": f"Fact {number}."} for number in range(4)]
    result = call_tool(store_root, "memory_write_batch", {"ops": ops})
    assert result.is_error
    assert isinstance(result.structured_content, dict)
    assert result.structured_content["code"] == "ERR_INPUT_TOO_LARGE"
    assert commit_count(store_root) == before and memory_files(store_root) == []
    stored = call_tool(store_root, "memory_write_batch", {"ops": ops[:3]})
    assert not stored.is_error, stored.structured_content
    assert len(memory_files(store_root)) == 3
