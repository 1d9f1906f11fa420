"""The failure envelope every door answers: the CLI prints it, the MCP server returns it as a tool
error. One definition, so a caller sees the same code, reason, suggestions and retryability whichever
door it used; a write's envelope also says it stored nothing, and how."""

from __future__ import annotations

import math
from typing import Any, Final

from memhtml.contracts.errors import MemhtmlError, envelope_code

# The envelope's version: every answer of either door carries it as `apiVersion`.
API_VERSION: Final[str] = "1"


def failure_envelope(error: MemhtmlError, *, write: bool, unexpected: bool = False) -> dict[str, Any]:
    """`{apiVersion, error, code, suggestions, retryable}`; a write adds `stored: false` and `outcome`
    (`failed` when retrying can succeed or the failure was a defect, `refused` otherwise); an error
    that carries results (an aborted batch's per-op report) adds `data`."""
    envelope: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "error": error.message,
        "code": envelope_code(error),
        "suggestions": list(error.suggestions),
        "retryable": error.retryable,
    }
    if write:
        envelope["stored"] = False
        envelope["outcome"] = "failed" if error.retryable or unexpected else "refused"
    if error.data is not None:
        envelope["data"] = error.data
    return envelope


def unexpected_error(error: BaseException) -> MemhtmlError:
    """An unmapped defect as a typed failure (ERR_UNKNOWN) naming only the exception's class: its text
    can carry paths, SQL or memory bodies."""
    return MemhtmlError(f"unexpected failure ({type(error).__name__})", ["memhtml status"])


def javascript_numbers(value: Any) -> Any:
    """Integral floats as integers (`1`, not `1.0`), as JavaScript's JSON writes them: both doors'
    answers carry numbers the way the original's did."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: javascript_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [javascript_numbers(item) for item in value]
    return value
