"""Fuzz properties of the `apply` stream decoder: every line is decoded into a request, refused as that
op, or the stream is refused with a usage error naming its first malformed line; nothing else escapes.

Decoded requests go on through the pure render path (`render_checked`), which must answer with a file
that validates and carries its own hash, or with a typed refusal.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any, Final

import pytest
from hypothesis import given

from memhtml.contracts.errors import USAGE_ERROR_CODES, MemhtmlError, UsageError, envelope_code
from memhtml.contracts.vocabulary import MEMORY_TYPES, TASK_STATUSES
from memhtml.domain.notary import secret_findings
from memhtml.html.validate import inspect_memory
from memhtml.operations.batchinput import DecodedOp, decode_ops
from memhtml.operations.write import WriteRequest, render_checked
from tests.fuzz.input_strategies import apply_streams, op_lines
from tests.fuzz.strategies import corpus, corpus_value, fuzz, note_outcome

NOW: Final = dt.datetime(2026, 11, 30, 5, 53, 51, tzinfo=dt.UTC)
_LINE_ERROR: Final = re.compile(r"memhtml apply: line (\d+): ")


def assert_stream_decodes_or_names_its_line(stream: str) -> list[DecodedOp] | UsageError:
    lines = stream.split("\n")
    try:
        ops = decode_ops(stream)
    except UsageError as refusal:
        assert_quotes_no_secret(refusal.message)
        assert refusal.command == "apply"
        assert envelope_code(refusal) in USAGE_ERROR_CODES
        named = _LINE_ERROR.match(refusal.message)
        if named is None:
            assert refusal.message.startswith("memhtml apply: no ops"), refusal.message
            assert all(not line.strip() for line in lines)
            note_outcome("stream refused: no ops")
            return refusal
        number = int(named.group(1))
        assert 1 <= number <= len(lines) and lines[number - 1].strip(), "the named line is a real, non-blank line"
        # The same line alone is refused the same way: the message is about that line, not its neighbours.
        with pytest.raises(UsageError) as alone:
            decode_ops(lines[number - 1])
        assert alone.value.message == refusal.message.replace(f"line {number}:", "line 1:", 1)
        note_outcome("stream refused at a named line")
        return refusal
    assert [op.line for op in ops] == [number for number, line in enumerate(lines, start=1) if line.strip()]
    for op in ops:
        assert (op.request is None) != (op.refusal is None)
        if op.refusal is not None:
            assert isinstance(op.refusal, MemhtmlError) and not op.refusal.usage
            assert_quotes_no_secret(op.refusal.message)
            note_outcome(f"op refused: {envelope_code(op.refusal)}")
        else:
            assert op.request is not None
            assert_request_is_in_range(op.request)
            assert_renders_or_refuses(op.request)
    return ops


def assert_quotes_no_secret(message: str) -> None:
    """A refusal may quote what it refuses, but never a secret in it (the notary's promise). Quoted
    values are redacted, and what the notary's own scan then finds around a marker is its known defect."""
    echoed = secret_findings(message)
    assert echoed == [], f"the refusal echoes a secret: {message!r}"


def assert_request_is_in_range(request: WriteRequest) -> None:
    assert isinstance(request.title, str) and request.title.strip()
    assert request.memory_type in MEMORY_TYPES
    assert request.importance is None or (isinstance(request.importance, int) and 1 <= request.importance <= 10)
    assert request.confidence is None or (math.isfinite(request.confidence) and 0 <= request.confidence <= 1)
    assert all(isinstance(value, str) for value in [*request.tags, *request.entities, *request.bodies])
    assert request.task_status is None or request.task_status in TASK_STATUSES
    assert (request.claim is None) != (request.article_html is None)


def assert_renders_or_refuses(request: WriteRequest) -> None:
    try:
        placed, parsed = render_checked(request, NOW)
    except MemhtmlError as refusal:
        assert not refusal.usage
        assert_quotes_no_secret(refusal.message)
        note_outcome(f"render refused: {envelope_code(refusal)}")
        return
    reparsed, check = inspect_memory(placed.file_text)
    assert check.violations == []
    assert reparsed.content_hash == placed.content_hash == reparsed.stated_content_hash
    assert parsed.content_hash == placed.content_hash
    note_outcome("decoded and rendered")


@fuzz(ci_examples=400)
@given(apply_streams())
def test_any_stream_is_decoded_or_refused_at_a_named_line(stream: str) -> None:
    assert_stream_decodes_or_names_its_line(stream)


@fuzz(ci_examples=300)
@given(op_lines)
def test_any_single_line_is_decoded_or_refused(line: str) -> None:
    assert_stream_decodes_or_names_its_line(line)


@pytest.mark.parametrize("entry", corpus("batchinput"))
def test_batchinput_corpus_replays(entry: dict[str, Any]) -> None:
    outcome = assert_stream_decodes_or_names_its_line(corpus_value(entry))
    expected = entry.get("expect")
    if expected is None:
        return
    if expected == "decoded":
        assert isinstance(outcome, list) and all(op.request is not None for op in outcome)
    elif expected == "op refused":
        assert isinstance(outcome, list) and any(op.refusal is not None for op in outcome)
    else:
        assert isinstance(outcome, UsageError) and outcome.message.startswith(expected), outcome
