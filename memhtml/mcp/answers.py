"""How the MCP door answers: an operation's data, or the CLI's own failure envelope, as a tool result.

Success is the operation's data as compact JSON text plus the same value as `structuredContent`, the
original's keys spelled in snake_case as its MCP server spells them (`existing_path`, `commit_sha`;
our single-word keys such as `stored` and `outcome` read the same on both doors). A failure is the
envelope the CLI prints for the same error (`apiVersion`, `error`, `code`, `suggestions`,
`retryable`; for writes `stored: false` and the `outcome`; `data` where the error carries it) with
`isError: true`. Wherever the CLI exits non-zero, the tool result is an error: a partial batch too.
The envelope is built here from the same typed error because this door sits below the CLI; tests
compare it with the CLI's, field for field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

import mcp_types as types
from mcp.shared.exceptions import MCPError

from memhtml.contracts.envelopes import failure_envelope, javascript_numbers, unexpected_error
from memhtml.contracts.errors import MemhtmlError, PathNotFound, envelope_code

# JSON-RPC codes of a failed resource read: "not found" as the MCP specification names it, invalid
# params for a URI or argument the caller must change, internal error for everything else (the typed
# envelope still travels in the message and `data`, so nothing is reduced to a generic failure).
RESOURCE_NOT_FOUND: Final[int] = -32002
INVALID_PARAMS: Final[int] = -32602
INTERNAL_ERROR: Final[int] = -32603

_CAMEL_KEY: Final = re.compile(r"^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$")
_HUMP: Final = re.compile(r"(?<=[a-z0-9])([A-Z])")


def answered(data: Mapping[str, Any], *, partial: bool = False) -> types.CallToolResult:
    """A result; `partial` (some ops stored, some refused: CLI exit 3) still answers as an error."""
    return _result(snake_keys(data), is_error=partial)


def refused(error: MemhtmlError, *, write_tool: bool) -> types.CallToolResult:
    """A typed failure, answered with the envelope the CLI prints for it."""
    return _result(failure(error, write_tool=write_tool), is_error=True)


def crashed(error: BaseException, *, write_tool: bool) -> types.CallToolResult:
    """A defect: still one typed envelope (ERR_UNKNOWN naming only the exception class), as the CLI."""
    return _result(failure(unexpected_error(error), write_tool=write_tool, unexpected=True), is_error=True)


def failure(error: MemhtmlError, *, write_tool: bool, unexpected: bool = False) -> dict[str, Any]:
    """The failure envelope the CLI prints for the same error (one definition for both doors)."""
    return failure_envelope(error, write=write_tool, unexpected=unexpected)


def resource_error(error: MemhtmlError) -> MCPError:
    """A failed resource read is a JSON-RPC error: `CODE: reason`, the envelope itself under `data`."""
    envelope = _json_value(failure(error, write_tool=False))
    if isinstance(error, PathNotFound):
        code = RESOURCE_NOT_FOUND
    elif error.usage:
        code = INVALID_PARAMS
    else:
        code = INTERNAL_ERROR
    return MCPError(code=code, message=f"{envelope_code(error)}: {error.message}", data=envelope)


def resource_crash(error: BaseException) -> MCPError:
    """A defect during a resource read: ERR_UNKNOWN naming only the exception class, never its text."""
    envelope = _json_value(failure(unexpected_error(error), write_tool=False, unexpected=True))
    return MCPError(code=INTERNAL_ERROR, message=f"{envelope['code']}: {envelope['error']}", data=envelope)


def snake_keys(value: Any) -> Any:
    """The value with every camelCase key spelled in snake_case (`existingPath` -> `existing_path`).
    Single-word and already snake_case keys are unchanged, so the transformation is idempotent."""
    if isinstance(value, dict):
        return {_snake(key) if isinstance(key, str) else key: snake_keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [snake_keys(item) for item in value]
    return value


def _snake(key: str) -> str:
    return _HUMP.sub(lambda hump: "_" + hump.group(1).lower(), key) if _CAMEL_KEY.match(key) else key


def _result(payload: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    value = _json_value(payload)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=value, is_error=is_error)


def _json_value(payload: dict[str, Any]) -> Any:
    """The payload as a plain JSON value (what a client reads back), integral floats written as
    integers as the CLI's envelope and JavaScript's JSON write them."""
    return json.loads(json.dumps(javascript_numbers(payload), ensure_ascii=False))
