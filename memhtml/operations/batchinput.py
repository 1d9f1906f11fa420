"""Decoding an `apply` stream: JSONL lines into write requests, before anything is opened.

A line that is not one JSON object, is longer than `MAX_APPLY_LINE_BYTES`, carries an unknown key or a
value of the wrong JSON type makes the whole stream a usage error naming the (1-based, physical) line.
Problems of vocabulary or range (unknown memory type, importance 11, a bad date) and what the safety
notary finds (a secret, invisible characters) are not the stream's fault: they become that op's
refusal, so the report names the op and, with --continue-on-error, the rest still land.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, NamedTuple, TypedDict, cast

from memhtml.contracts.errors import InvalidMemory, MemhtmlError, UsageError
from memhtml.contracts.instants import is_sortable_instant
from memhtml.contracts.limits import MAX_APPLY_LINE_BYTES, MAX_APPLY_LINES, batch_too_large, size_words
from memhtml.contracts.vocabulary import MEMORY_TYPES, TASK_STATUSES
from memhtml.domain.notary import cleaned, secret_findings
from memhtml.html.prose import split_apply_body
from memhtml.operations.screening import Screened, screen_fields
from memhtml.operations.write import WriteRequest

# The original's fields, then ours, in the order the error message lists them.
OP_FIELDS: Final[tuple[str, ...]] = (
    "op",
    "title",
    "type",
    "body",
    "article_html",
    "path",
    "strict_path",
    "workspace",
    "tag",
    "tags",
    "entity",
    "entities",
    "importance",
    "confidence",
    "status",
    "due",
    "session_id",
    "prompt_id",
    "turn_uuid",
    "event_at",
    "redact",
    "strip_invisible",
)
_STRING_FIELDS: Final = frozenset(
    {"body", "article_html", "path", "workspace", "status", "due", "session_id", "prompt_id", "turn_uuid", "event_at"}
)
_LIST_FIELDS: Final = frozenset({"tag", "tags", "entity", "entities"})
_NUMBER_FIELDS: Final = frozenset({"importance", "confidence"})
_BOOLEAN_FIELDS: Final = frozenset({"strict_path", "redact", "strip_invisible"})
_QUOTED_CHARACTERS: Final = 80


class ApplyOpFields(TypedDict, total=False):
    """One `apply` line as `_shape` checked it: nulls dropped, every value of its field's JSON type, and
    the numbers read as floats. `op`, `title` and `type` are always there."""

    op: str
    title: str
    type: str
    body: str
    article_html: str
    path: str
    strict_path: bool
    workspace: str
    tag: str | list[str]
    tags: str | list[str]
    entity: str | list[str]
    entities: str | list[str]
    importance: float
    confidence: float
    status: str
    due: str
    session_id: str
    prompt_id: str
    turn_uuid: str
    event_at: str
    redact: bool
    strip_invisible: bool


class Provenance(NamedTuple):
    """Batch-level session provenance; an op's own value wins."""

    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None


class Cleaning(NamedTuple):
    """What the batch lets the notary clean in every op (an op's own `redact`/`strip_invisible` wins)."""

    redact: bool = False
    strip_invisible: bool = False


@dataclass(frozen=True, slots=True)
class DecodedOp:
    line: int
    request: WriteRequest | None  # None when the op is refused before the store
    refusal: MemhtmlError | None = None
    title: str = ""
    screened: Screened = field(default_factory=Screened)


def decode_ops(text: str, provenance: Provenance | None = None, cleaning: Cleaning | None = None) -> list[DecodedOp]:
    """Every op of the stream, in order; raises UsageError (exit 2) for the first malformed line."""
    # Every door's batch is bounded here (the CLI's stream also as it is read): a batch is planned and
    # committed as a whole, so its length bounds what it may cost.
    if (lines := text.count("\n") + (not text.endswith("\n"))) > MAX_APPLY_LINES:
        raise batch_too_large("apply", f"the batch holds {lines:,} lines")
    provenance = provenance or Provenance()
    cleaning = cleaning or Cleaning()
    ops: list[DecodedOp] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        fields = _shape(number, line)
        ops.append(_decode(number, fields, provenance, cleaning))
    if not ops:
        raise UsageError(
            "ERR_MISSING_ARGUMENT",
            "memhtml apply: no ops: give one JSON object per line on stdin or in --file",
            ['echo \'{"op":"write","title":"…","type":"semantic","body":"…"}\' | memhtml apply'],
            command="apply",
        )
    return ops


def _visible(value: str) -> str:
    """A caller's value as a refusal quotes it: secrets redacted (a refusal never echoes one, and these
    values are quoted before or without screening), at most `_QUOTED_CHARACTERS` characters."""
    shown = cleaned(value, secret_findings(value), [])
    return shown if len(shown) <= _QUOTED_CHARACTERS else shown[:_QUOTED_CHARACTERS] + "…"


def _line_error(number: int, code: str, problem: str) -> UsageError:
    return UsageError(code, f"memhtml apply: line {number}: {problem}", [], command="apply")


def _shape(number: int, line: str) -> ApplyOpFields:
    """The line's fields with nulls dropped, or a usage error naming what is wrong with its shape."""
    if len(line) > MAX_APPLY_LINE_BYTES // 4 and (size := len(line.encode("utf-8", "surrogatepass"))) > (
        MAX_APPLY_LINE_BYTES
    ):
        raise _line_error(
            number,
            "ERR_INVALID_FLAG",
            f"{size} bytes: a line holds at most {MAX_APPLY_LINE_BYTES} bytes ({size_words(MAX_APPLY_LINE_BYTES)}); "
            "one memory per line, one fact per memory",
        )
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise _line_error(
            number, "ERR_INVALID_FLAG", f"not valid JSON ({error.msg}); one complete JSON object per line"
        ) from None
    except ValueError:
        # Valid JSON Python refuses to read: an integer of more digits than int() converts.
        raise _line_error(number, "ERR_INVALID_FLAG", "holds a number with too many digits to read") from None
    except RecursionError:
        raise _line_error(
            number, "ERR_INVALID_FLAG", "nests arrays or objects too deeply to read; an op's values are flat"
        ) from None
    if not isinstance(value, dict):
        raise _line_error(number, "ERR_INVALID_FLAG", "each line must be one JSON object, not an array or a scalar")
    fields = {key: item for key, item in value.items() if item is not None}
    for key in fields:
        if key not in OP_FIELDS:
            raise _line_error(
                number, "ERR_INVALID_FLAG", f"unknown field `{_visible(key)}`. Fields: {', '.join(OP_FIELDS)}"
            )
    for required in ("op", "title", "type"):
        if required not in fields:
            raise _line_error(number, "ERR_MISSING_ARGUMENT", f"`{required}` is required")
    if fields["op"] != "write":
        raise _line_error(number, "ERR_INVALID_FLAG", "`op` must be one of: write")
    for key in ("title", "type"):
        if not isinstance(fields[key], str) or not fields[key].strip():
            raise _line_error(number, "ERR_INVALID_FLAG", f"`{key}` must be a non-empty string")
    for key, item in fields.items():
        if key in _STRING_FIELDS and not isinstance(item, str):
            raise _line_error(number, "ERR_INVALID_FLAG", f"`{key}` must be a string")
        if key in _LIST_FIELDS and not (
            isinstance(item, str) or (isinstance(item, list) and all(isinstance(entry, str) for entry in item))
        ):
            raise _line_error(number, "ERR_INVALID_FLAG", f"`{key}` must be a string or an array of strings")
        if key in _BOOLEAN_FIELDS and not isinstance(item, bool):
            raise _line_error(number, "ERR_INVALID_FLAG", f"`{key}` must be a JSON boolean (true or false)")
        if key in _NUMBER_FIELDS:
            fields[key] = _number(number, key, item)
    # Each key is one of OP_FIELDS and each value was checked against its field's JSON type above.
    return cast("ApplyOpFields", fields)


def _number(number: int, key: str, item: object) -> float:
    if isinstance(item, bool) or not isinstance(item, int | float | str):
        raise _line_error(number, "ERR_INVALID_FLAG", f"`{key}` must be a number")
    try:
        parsed = float(item)
    except ValueError:
        raise _line_error(
            number, "ERR_INVALID_FLAG", f"`{key}` must be a number, not {_visible(str(item))!r}"
        ) from None
    except OverflowError:  # an integer beyond the largest double
        raise _line_error(number, "ERR_INVALID_FLAG", f"`{key}` is too large a number") from None
    if not math.isfinite(parsed):
        raise _line_error(number, "ERR_INVALID_FLAG", f"`{key}` must be a finite number")
    return parsed


def _strings(fields: ApplyOpFields, *keys: str) -> list[str]:
    by_key: Mapping[str, object] = fields
    values: list[str] = []
    for key in keys:
        item = by_key.get(key)
        if isinstance(item, str):
            values.append(item)
        elif isinstance(item, list):
            values += [entry for entry in item if isinstance(entry, str)]
    return [value for value in values if value != ""]


def _decode(number: int, fields: ApplyOpFields, provenance: Provenance, cleaning: Cleaning) -> DecodedOp:
    """The op's request, screened by the safety notary before anything else reads its texts."""
    redact = bool(fields.get("redact", cleaning.redact))
    strip_invisible = bool(fields.get("strip_invisible", cleaning.strip_invisible))
    try:
        fields, screened = screen_fields(fields, redact=redact, strip_invisible=strip_invisible)
        request = _request(fields, provenance)
    except MemhtmlError as refusal:
        return DecodedOp(number, None, refusal)
    return DecodedOp(number, request, None, request.title, screened)


def _refuse(message: str, suggestion: str) -> InvalidMemory:
    return InvalidMemory(f"invalid memory: {message}", [suggestion])


def _request(fields: ApplyOpFields, provenance: Provenance) -> WriteRequest:
    """The op as a write request, or the refusal of a value outside its vocabulary or range."""
    memory_type = str(fields["type"])
    if memory_type not in MEMORY_TYPES:
        raise _refuse(
            f"unknown memory type: {_visible(memory_type)}. One of: {', '.join(MEMORY_TYPES)}", '"type":"semantic"'
        )
    body, article = fields.get("body"), fields.get("article_html")
    has_body, has_article = bool(body and body.strip()), bool(article and article.strip())
    if has_body == has_article:
        raise _refuse(
            "exactly one of `body` or `article_html` must carry the memory's text",
            '{"op":"write","title":"…","type":"semantic","body":"One sentence claim. More detail."}',
        )
    importance, confidence = fields.get("importance"), fields.get("confidence")
    if importance is not None and (not float(importance).is_integer() or not 1 <= importance <= 10):
        raise _refuse(f"importance must be an integer from 1 to 10, not {importance:g}", '"importance":7')
    if confidence is not None and not 0 <= confidence <= 1:
        raise _refuse(f"confidence must be a number from 0 to 1, not {confidence:g}", '"confidence":0.9')
    entities = _strings(fields, "entity", "entities")
    for entity in entities:
        entity_type, colon, name = entity.partition(":")
        if not (colon and entity_type.strip() and name.strip()):
            raise _refuse(
                f"entity {_visible(entity)!r} is not a `type:name` reference", '"entity":"service:checkout-api"'
            )
    event_at = fields.get("event_at")
    if event_at is not None and not is_sortable_instant(event_at):
        raise _refuse(
            f"event_at {_visible(event_at)!r} is not YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ", '"event_at":"2026-07-01"'
        )
    status, due = fields.get("status"), fields.get("due")
    if memory_type == "task":
        if status is not None and status not in TASK_STATUSES:
            raise _refuse(
                f"unknown task status: {_visible(status)}. One of: {', '.join(TASK_STATUSES)}", '"status":"todo"'
            )
        if status == "done":
            raise _refuse("a task is born open: `done` tasks live in the archive", "memhtml task status <path> done")
        if due is not None and not is_sortable_instant(due):
            raise _refuse(f"due {_visible(due)!r} is not YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ", '"due":"2026-12-01"')
    elif status is not None or due is not None:
        raise _refuse("`status` and `due` belong to tasks only", '"type":"task"')
    claim, bodies = split_apply_body(str(body)) if has_body else (None, [])
    return WriteRequest(
        title=str(fields["title"]),
        memory_type=memory_type,
        claim=claim,
        bodies=bodies,
        article_html=article if has_article else None,
        path=fields.get("path"),
        strict_path=bool(fields.get("strict_path", False)),
        workspace=fields.get("workspace"),
        tags=_strings(fields, "tag", "tags"),
        entities=entities,
        importance=int(importance) if importance is not None else None,
        confidence=confidence,
        session_id=fields.get("session_id", provenance.session_id),
        prompt_id=fields.get("prompt_id", provenance.prompt_id),
        turn_uuid=fields.get("turn_uuid", provenance.turn_uuid),
        event_at=event_at,
        task_status=status,
        due=due,
        redact=bool(fields.get("redact", False)),
        strip_invisible=bool(fields.get("strip_invisible", False)),
    )
