"""Our stricter flag-value checks: closed vocabularies, integer and number ranges, and value formats.

The command table declares them (`FlagSpec.values`, `minimum`, `maximum`, `value_format`); this
module says why a value is refused and which example values to suggest. The original checks only
closed vocabularies and `--as-of`, and clamps or defaults everything else silently (cli-contract §8
#9). Standard library only: it runs on every command line.
"""

from __future__ import annotations

import json
import math
import re
from typing import Final

from memhtml.contracts.instants import is_sortable_instant
from memhtml.surface.commands import FlagSpec

# ASCII digits only, matched in full: `\d` and int() also read `١٠` and `２` (other scripts' digits),
# and `$` admits a trailing newline; a caller reading the command line sees neither as a number.
_INTEGER: Final = re.compile(r"[+-]?[0-9]+")
# Plain decimal notation only: `nan`, `inf` and `1_0` parse in Python but are not numbers to a caller.
_DECIMAL: Final = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
# A full or abbreviated commit sha: git abbreviates to no fewer than 4 hex digits, in either case.
_COMMIT_SHA: Final = re.compile(r"^[0-9a-fA-F]{4,40}$")
_INSTANT_GRAMMAR: Final = "an ISO date or datetime (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)"
# The original's reason, which holds for us too: the index compares instants as strings.
_INSTANT_REASON: Final = (
    "the point-in-time window compares it as a string, so a value outside that grammar selects a "
    "different window rather than failing"
)
_INSTANT_EXAMPLES: Final = ["2026-08-24", "2026-08-24T13:00:00Z"]

Problem = tuple[str, list[str]]


def value_problem(spec: FlagSpec, value: str) -> Problem | None:
    """Why `value` is refused for `spec` (with example values to suggest), or None when it is admitted.

    Checked in this order: the instant grammars, the closed vocabulary, integers, then the other
    value formats (numbers and their range, `type:name`, `name=value`, non-blank text).
    """
    name, shown = f"--{spec.name}", json.dumps(value, ensure_ascii=False)
    if spec.value_format == "instant" and not is_sortable_instant(value):
        return f"{name} must be {_INSTANT_GRAMMAR}, not {shown}", list(_INSTANT_EXAMPLES)
    if spec.value_format == "instant-or-commit" and not (is_sortable_instant(value) or _COMMIT_SHA.match(value)):
        return (
            f"{name} must be {_INSTANT_GRAMMAR} or a commit sha (4 to 40 hex digits), not {shown}: {_INSTANT_REASON}",
            [*_INSTANT_EXAMPLES, "<commit-sha>"],
        )
    if spec.values is not None and value not in spec.values:
        return f"{name} must be one of: {', '.join(spec.values)}", []
    if spec.type == "int" and not _in_range(spec, _as_int(value)):
        return f"{name} must be {_range_words(spec, 'an integer')}, not {shown}", [_range_hint(spec)]
    return _format_problem(spec, value)


def _format_problem(spec: FlagSpec, value: str) -> Problem | None:
    name, shown = f"--{spec.name}", json.dumps(value, ensure_ascii=False)
    if spec.value_format == "number" and not (
        _DECIMAL.fullmatch(value) and math.isfinite(float(value)) and _in_range(spec, float(value))
    ):
        return f"{name} must be {_range_words(spec, 'a number')}, not {shown}", [_range_hint(spec)]
    if spec.value_format == "entity" and not _is_entity(value):
        return (
            f"{name} must be a `type:name` entity reference (a non-empty type, a colon, a non-empty name), not {shown}",
            ["<type>:<name>"],
        )
    if spec.value_format == "facet" and not _is_facet(value):
        return (
            f"{name} must be a `name=value` facet (a non-empty name, an `=`, then the value, which may "
            f"itself contain `=`), not {shown}",
            ["<name>=<value>"],
        )
    if spec.value_format == "nonblank" and not value.strip():
        return f"{name} must not be blank, not {shown}", [f"<{spec.name}>"]
    return None


def _as_int(value: str) -> int | None:
    """The integer `value` spells in plain decimal, or None (Python refuses over 4300 digits)."""
    if not _INTEGER.fullmatch(value):
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _is_entity(value: str) -> bool:
    entity_type, colon, entity_name = value.partition(":")
    return bool(colon) and bool(entity_type.strip()) and bool(entity_name.strip())


def _is_facet(value: str) -> bool:
    # The name stops at the first `=`; the value after it may be empty or contain more `=`.
    facet_name, equals, _ = value.partition("=")
    return bool(equals) and bool(facet_name.strip())


def _in_range(spec: FlagSpec, number: float | None) -> bool:
    if number is None:
        return False
    if spec.minimum is not None and number < spec.minimum:
        return False
    return spec.maximum is None or number <= spec.maximum


def _range_words(spec: FlagSpec, kind: str) -> str:
    if spec.minimum is not None and spec.maximum is not None:
        return f"{kind} from {spec.minimum} to {spec.maximum}"
    if spec.minimum is not None:
        return f"{kind} of at least {spec.minimum}"
    if spec.maximum is not None:
        return f"{kind} of at most {spec.maximum}"
    return kind


def _range_hint(spec: FlagSpec) -> str:
    if spec.minimum is not None and spec.maximum is not None:
        return f"<{spec.minimum}-{spec.maximum}>"
    return "<number>" if spec.value_format == "number" else "<int>"
