"""The safety notary at the write doors: every text a write would store is screened before it is
rendered, hashed, embedded or committed.

A door calls `screen_request` (an `apply` op, `screen_fields`) first: it applies what the caller
allowed (`redact`: each secret becomes `[REDACTED:<kind>]`; `strip_invisible`: invisible characters
are removed) and refuses everything else. `render_checked`, the one render path every write door
shares, calls `refuse_unscreened`, which refuses whatever is still there, so a door that skipped the
first call stores nothing unscreened. Refusals never echo a secret.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Final, NamedTuple, TypedDict, cast

from memhtml.contracts.errors import InvalidMemory, InvisibleCharacters, SecretDetected
from memhtml.contracts.limits import MAX_MEMORY_BYTES, size_words
from memhtml.domain.notary import (
    Finding,
    cleaned_fully,
    control_findings,
    invisible_findings,
    markup_violations,
    plainly_clear,
    secret_findings,
    shown,
)
from memhtml.html.parser import parse_fragment
from memhtml.html.tree import Element, iter_elements

if TYPE_CHECKING:
    from memhtml.operations.batchinput import ApplyOpFields
    from memhtml.operations.write import WriteRequest

_LISTED: Final = 6  # findings a message names before it says how many more there are
REDACT_HINT: Final = (
    "--redact (an apply op's `redact: true`, or `apply --redact`) stores the memory with each secret "
    "replaced by [REDACTED:<kind>]"
)
STRIP_HINT: Final = (
    "--strip-invisible (an apply op's `strip_invisible: true`, or `apply --strip-invisible`) stores the "
    "text without them"
)


class RedactedSecret(TypedDict):
    """A secret the notary replaced with `[REDACTED:<kind>]`, and the field it was in."""

    kind: str
    field: str


class StrippedCharacter(TypedDict):
    """An invisible character the notary removed (its code point, `U+200B`), and the field it was in."""

    character: str
    field: str


class ScreenedFields(TypedDict, total=False):
    """The answer's account of what screening cleaned; each key only when something was."""

    redacted: list[RedactedSecret]
    stripped: list[StrippedCharacter]


class Screened(NamedTuple):
    """What screening changed, for the answer: (secret kind, field) redacted, (code point, field) removed."""

    redacted: tuple[tuple[str, str], ...] = ()
    stripped: tuple[tuple[str, str], ...] = ()

    def report(self) -> ScreenedFields:
        """`redacted: [{kind, field}]` and `stripped: [{character, field}]`, each only when not empty."""
        data: ScreenedFields = {}
        self.add_to(data)
        return data

    def add_to(self, answer: ScreenedFields) -> None:
        """Put `report()`'s keys into an answer that carries them (a write's, an op's)."""
        if self.redacted:
            answer["redacted"] = [{"kind": kind, "field": field} for kind, field in self.redacted]
        if self.stripped:
            answer["stripped"] = [{"character": character, "field": field} for character, field in self.stripped]


class _Located(NamedTuple):
    finding: Finding
    place: str  # `claim`, `body 2`, …

    def words(self) -> str:
        return f"{self.finding.kind} in {self.place} at offset {self.finding.start}"


class _Screen:
    """Screens texts one by one, cleaning what it may, collecting what it must refuse."""

    def __init__(self, *, redact: bool, strip_invisible: bool) -> None:
        self.redact = redact
        self.strip_invisible = strip_invisible
        self.invalid: list[_Located] = []
        self.secrets: list[_Located] = []
        self.invisible: list[_Located] = []
        self.redacted: list[tuple[str, str]] = []
        self.stripped: list[tuple[str, str]] = []

    def text(self, field: str, value: str, place: str | None = None) -> str:
        place = place or field
        self.invalid += [_Located(item, place) for item in control_findings(value)]
        secrets = secret_findings(value)
        invisible = invisible_findings(value)
        if secrets and not self.redact:
            self.secrets += [_Located(item, place) for item in secrets]
        if invisible and not self.strip_invisible:
            self.invisible += [_Located(item, place) for item in invisible]
        if not ((secrets and self.redact) or (invisible and self.strip_invisible)):
            return value
        clean, redactions, removals = cleaned_fully(value, redact=self.redact, strip_invisible=self.strip_invisible)
        self.redacted += [(item.kind, field) for item in redactions]
        self.stripped += [(item.kind.split(" ", 1)[0], field) for item in removals]
        return clean

    def optional(self, field: str, value: str | None) -> str | None:
        return None if value is None else self.text(field, value)

    def texts(self, field: str, values: Iterable[str]) -> list[str]:
        return [self.text(field, value, f"{field} {number}") for number, value in enumerate(values, start=1)]

    def finish(self) -> Screened:
        """What was cleaned; raises the refusal of what was found and not allowed to be cleaned."""
        if self.invalid:
            raise InvalidMemory(
                f"invalid memory: {_listed(self.invalid)}; nothing was written. Text must be valid UTF-8 "
                "without NUL or other control characters (tab, newline and carriage return are kept)",
                ["remove the control characters (and any bytes that are not UTF-8) and write again"],
            )
        if self.secrets:
            described = [_Located(_described(item.finding), item.place) for item in self.secrets]
            also = " Invisible characters were found too." if self.invisible else ""
            raise SecretDetected(
                f"secret detected: {_listed(described)}; nothing was written. A secret that reaches a commit "
                f"stays in git history and in every vector embedded from it.{also}",
                ["remove the secret and write again", REDACT_HINT] + ([STRIP_HINT] if self.invisible else []),
            )
        if self.invisible:
            raise InvisibleCharacters(
                f"invisible characters: {_listed(self.invisible)}; nothing was written. They can hide or "
                "reorder what a reader sees",
                ["remove them and write again", STRIP_HINT],
            )
        return Screened(tuple(self.redacted), tuple(self.stripped))


def _described(finding: Finding) -> Finding:
    """A secret's finding as a message names it: kind, at most a public prefix, and length."""
    return finding._replace(kind=f"{finding.kind} ({shown(finding)})")


def _listed(found: list[_Located]) -> str:
    words = ", ".join(item.words() for item in found[:_LISTED])
    return words + (f" and {len(found) - _LISTED} more" if len(found) > _LISTED else "")


def screen_request(request: WriteRequest) -> tuple[WriteRequest, Screened]:
    """`request` with what its flags allow cleaned, and what was cleaned; raises InvalidMemory,
    SecretDetected or InvisibleCharacters for what they do not allow."""
    refuse_oversized_request(request)
    if plainly_clear("\n".join(_texts_of(request))):
        return request, Screened()
    screen = _Screen(redact=request.redact, strip_invisible=request.strip_invisible)
    screened = _screened_request(screen, request)
    return screened, screen.finish()


def refuse_unscreened(request: WriteRequest) -> None:
    """Refuse anything screening would find in `request`, whatever its flags (the render path's check)."""
    refuse_oversized_request(request)
    if plainly_clear("\n".join(_texts_of(request))):
        return
    screen = _Screen(redact=False, strip_invisible=False)
    _screened_request(screen, request)
    screen.finish()


def _texts_of(request: WriteRequest) -> Iterator[str]:
    """Every text `_screened_request` screens."""
    yield request.title
    yield from (text for text in (request.claim, request.article_html, request.path, request.workspace) if text)
    yield from request.bodies
    yield from request.tags
    yield from request.entities
    yield from (text for text in (request.session_id, request.prompt_id, request.turn_uuid) if text)


def _screened_request(screen: _Screen, request: WriteRequest) -> WriteRequest:
    return request._replace(
        title=screen.text("title", request.title),
        claim=screen.optional("claim", request.claim),
        bodies=screen.texts("body", request.bodies),
        article_html=screen.optional("article_html", request.article_html),
        path=screen.optional("path", request.path),
        workspace=screen.optional("workspace", request.workspace),
        tags=screen.texts("tag", request.tags),
        entities=screen.texts("entity", request.entities),
        session_id=screen.optional("session_id", request.session_id),
        prompt_id=screen.optional("prompt_id", request.prompt_id),
        turn_uuid=screen.optional("turn_uuid", request.turn_uuid),
    )


# The text fields of an `apply` op (with both spellings of the repeatable ones).
OP_TEXT_FIELDS: Final[tuple[str, ...]] = (
    "title",
    "body",
    "article_html",
    "path",
    "workspace",
    "tag",
    "tags",
    "entity",
    "entities",
    "session_id",
    "prompt_id",
    "turn_uuid",
)


def screen_fields(fields: ApplyOpFields, *, redact: bool, strip_invisible: bool) -> tuple[ApplyOpFields, Screened]:
    """An `apply` op's fields (already of the right JSON types) screened as `screen_request` screens a
    request, before its body is split into claim and paragraphs; places are the op's own keys."""
    by_key: Mapping[str, object] = fields
    texts = [value for key in OP_TEXT_FIELDS for value in _listed_texts(by_key.get(key))]
    if plainly_clear("\n".join(texts)):
        return fields, Screened()
    screen = _Screen(redact=redact, strip_invisible=strip_invisible)
    result = dict(by_key)
    for key in OP_TEXT_FIELDS:
        value = by_key.get(key)
        if isinstance(value, str):
            result[key] = screen.text(key, value)
        elif isinstance(value, list):
            result[key] = screen.texts(key, value)
    # Screening keeps each value's JSON type (a string stays a string, a list of strings one), so the
    # result holds the fields' shape as it was checked.
    return cast("ApplyOpFields", result), screen.finish()


def _listed_texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def screen_text(
    field: str, value: str | None, *, redact: bool = False, strip_invisible: bool = False
) -> tuple[str | None, Screened]:
    """One free text a write commits outside the memory file (a correction's or an archive's reason)."""
    screen = _Screen(redact=redact, strip_invisible=strip_invisible)
    result = screen.optional(field, value)
    return result, screen.finish()


def merged(first: Screened, second: Screened) -> Screened:
    return Screened(first.redacted + second.redacted, first.stripped + second.stripped)


# ---------------------------------------------------------------- what only the rendered file shows


def refuse_unscreened_article(article_inner_html: str) -> None:
    """The stored article as serialized, screened again: character references (`ghp&#95;…`,
    `&#x200B;`) become plain characters on disk, so what they spell is refused like typed text."""
    screen = _Screen(redact=False, strip_invisible=False)
    screen.text("article_html", article_inner_html)
    screen.finish()


def markup_problems(article_inner_html: str) -> list[str]:
    """Executable or embedding markup the format check does not already refuse, in document order."""
    return markup_violations((element.tag, element.attrs) for element in _elements(article_inner_html))


def _elements(markup: str) -> Iterator[Element]:
    pending = list(parse_fragment(markup, "article"))
    for element in iter_elements(pending):
        yield element
        if element.template_content:  # inert for a browser, live again wherever it is copied out
            yield from iter_elements(element.template_content)


# ---------------------------------------------------------------- sizes


def refuse_oversized_request(request: WriteRequest) -> None:
    """Refuse, before rendering, a request whose text alone exceeds a memory file's size."""
    texts = [request.title, request.claim, *request.bodies, request.article_html, *request.tags, *request.entities]
    characters = sum(len(text) for text in texts if text)
    if characters > MAX_MEMORY_BYTES:
        raise _oversized(f"its text is {characters} characters")


def refuse_oversized_file(file_text: str) -> None:
    """Refuse a rendered memory file larger than `MAX_MEMORY_BYTES` of UTF-8."""
    if len(file_text) * 4 <= MAX_MEMORY_BYTES:
        return
    size = len(file_text.encode("utf-8", "surrogatepass"))
    if size > MAX_MEMORY_BYTES:
        raise _oversized(f"its file would be {size} bytes")


def _oversized(what: str) -> InvalidMemory:
    return InvalidMemory(
        f"invalid memory: too large: {what}, and a memory file holds at most {MAX_MEMORY_BYTES} bytes "
        f"({size_words(MAX_MEMORY_BYTES)}); nothing was written. A memory is one fact",
        ["split it into several memories (one fact each)"],
    )
