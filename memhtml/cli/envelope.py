"""The one JSON envelope on stdout, and the one total mapping from failures to codes and exit statuses.

Success is `{apiVersion, type, data}`; failure is `{apiVersion, error, code, suggestions, retryable}`
plus, for write commands, `stored: false` and the `outcome`. Exit 0 success, 2 usage, 1 failure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from memhtml.contracts.envelopes import API_VERSION, failure_envelope, javascript_numbers, unexpected_error
from memhtml.contracts.errors import MemhtmlError

EXIT_OK: Final[int] = 0
EXIT_FAILURE: Final[int] = 1
EXIT_USAGE: Final[int] = 2
EXIT_PARTIAL: Final[int] = 3


def success(response_type: str, data: Mapping[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "type": response_type, "data": data}


def failure(error: MemhtmlError, *, write_command: bool, unexpected: bool = False) -> dict[str, Any]:
    return failure_envelope(error, write=write_command, unexpected=unexpected)


def unexpected_failure(error: BaseException, *, write_command: bool) -> dict[str, Any]:
    """An unmapped defect still answers one envelope (ERR_UNKNOWN), naming only the exception class."""
    return failure_envelope(unexpected_error(error), write=write_command, unexpected=True)


def exit_status(error: MemhtmlError) -> int:
    return EXIT_USAGE if error.usage else EXIT_FAILURE


def encode(envelope: dict[str, Any], *, dense: bool) -> str:
    """Pretty JSON with a 2-space indent (minified and null-free with --dense), one trailing newline."""
    value = javascript_numbers(envelope)
    if dense:
        value = _drop_nulls(value)
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _drop_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_drop_nulls(item) for item in value if item is not None]
    return value
