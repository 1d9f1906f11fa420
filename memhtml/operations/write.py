"""The `write` use case: turn one validated request into a stored memory and an honest outcome.

The safety notary (`operations.screening`), rendering and the format check happen before the store
is touched; the store then dedupes, places, writes and commits under its lock. The result always says
whether anything was stored.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple, NotRequired

from memhtml.contracts.errors import InvalidMemory, MemhtmlError
from memhtml.contracts.instants import format_instant
from memhtml.contracts.paths import named_path_problem, normalize_path, printable, slugify
from memhtml.domain.placement import placement_directory
from memhtml.html.document import ParsedMemory
from memhtml.html.identity import Restatement, first_event_time, set_event_time
from memhtml.html.prose import prose_article, prose_markup
from memhtml.html.template import MemoryHead, finish_article, meta_line, render_memory_file
from memhtml.html.validate import inspect_memory
from memhtml.operations.screening import (
    Screened,
    ScreenedFields,
    markup_problems,
    refuse_oversized_file,
    refuse_unscreened,
    refuse_unscreened_article,
    screen_request,
)
from memhtml.operations.write_pipeline import Assists, staging_warning, store_planned
from memhtml.store.batch import OpOutcome, PlacedMemory, PlannedOp
from memhtml.store.commit import commit_message, commit_subject
from memhtml.store.repository import open_store

if TYPE_CHECKING:
    from memhtml.operations.conflicts import ConflictEntry
    from memhtml.operations.indexing import CommandWarning
    from memhtml.operations.nearduplicates import NearDuplicateFinding, NearDuplicateReport


class WriteRequest(NamedTuple):
    """One memory as a caller states it; values are already range-checked by the door."""

    title: str
    memory_type: str
    claim: str | None = None
    bodies: Sequence[str] = ()
    article_html: str | None = None
    path: str | None = None
    strict_path: bool = False
    workspace: str | None = None
    tags: Sequence[str] = ()
    entities: Sequence[str] = ()
    importance: int | None = None
    confidence: float | None = None
    session_id: str | None = None
    prompt_id: str | None = None
    turn_uuid: str | None = None
    event_at: str | None = None  # becomes the article's first <time datetime>
    task_status: str | None = None
    due: str | None = None
    redact: bool = False  # store each secret as [REDACTED:<kind>] instead of refusing the write
    strip_invisible: bool = False  # remove invisible and bidi-control characters instead of refusing

    def restatement(self) -> Restatement:
        """What this write says about the head of a memory that already has its article."""
        return Restatement(
            memory_type=self.memory_type,
            confidence=self.confidence,
            importance=self.importance,
            event_at=self.event_at,
            entities=tuple(self.entities),
            tags=tuple(tag for tag in self.tags if tag.strip()),
        )


class MemoryWritten(ScreenedFields):
    """The `memory.written` data: the original's fields, then `stored` and `outcome`, then the assists."""

    path: str
    created: bool
    deduped: bool
    existingPath: str | None
    commitSha: str | None
    contentHash: str
    stored: bool
    outcome: str
    changed: NotRequired[list[str]]  # `updated` only: the head fields this write changed
    conflicts: NotRequired[list[ConflictEntry]]  # asked for with --detect-conflicts
    nearDuplicates: NotRequired[list[NearDuplicateFinding] | None]  # asked for with --detect-near-duplicates
    nearDuplicatesDegraded: NotRequired[bool]
    index: NotRequired[CommandWarning]  # the commit landed, but the search or the git index lags


class WriteReport(NamedTuple):
    """The answer to a write: `stored` and `outcome` first, then the original's `memory.written` fields."""

    stored: bool
    outcome: str
    path: str
    content_hash: str
    commit_sha: str | None
    existing_path: str | None
    index_synced: bool
    index_warning: CommandWarning | None = None
    changed: tuple[str, ...] = ()
    conflicts: list[ConflictEntry] | None = None  # None: not asked for (or the index was unreadable)
    near_duplicates: NearDuplicateReport | None = None  # None: not asked for
    screened: Screened = Screened()

    def as_data(self) -> MemoryWritten:
        data: MemoryWritten = {
            "path": self.path,
            "created": self.outcome == "written",
            "deduped": self.outcome in ("unchanged", "updated"),
            "existingPath": self.existing_path,
            "commitSha": self.commit_sha,
            "contentHash": self.content_hash,
            "stored": self.stored,
            "outcome": self.outcome,
        }
        if self.outcome == "updated":
            data["changed"] = list(self.changed)
        if self.conflicts is not None:
            data["conflicts"] = self.conflicts
        if self.near_duplicates is not None:
            data["nearDuplicates"] = self.near_duplicates.findings[0]
            data["nearDuplicatesDegraded"] = self.near_duplicates.degraded
        self.screened.add_to(data)
        if self.index_warning is not None:
            data["index"] = self.index_warning
        elif not self.index_synced:
            data["index"] = staging_warning([self.path])
        return data


def place_memory(request: WriteRequest, now: dt.datetime) -> PlacedMemory:
    """Render and check the memory file, and derive the placement rules; no I/O."""
    return render_checked(request, now)[0]


def render_checked(
    request: WriteRequest, now: dt.datetime, *, single_parse: bool = True
) -> tuple[PlacedMemory, ParsedMemory]:
    """The placed memory and the parse its format check was run on (so a batch can index it unparsed).

    Prose is rendered as generated and parsed once: that parse checks the file, gives the content
    hash, and proves the markup canonical (else the file is rendered the canonical way, parsed twice).
    Every write door renders here, so the safety notary runs here first: whatever a door did not
    screen (`screen_request`) is refused, and so is executable markup in an article given as HTML.
    """
    refuse_unscreened(request)
    instant = format_instant(now)
    if single_parse and request.article_html is None:
        markup = prose_markup(request.claim or "", request.bodies)
        if request.event_at is not None:
            markup = _with_event_time(markup, request.event_at)
        text = render_memory_file(_head(request, instant, _PENDING_HASH), markup, canonical=True)
        refuse_oversized_file(text)
        parsed, check = inspect_memory(text)
        if parsed.article_inner_html == markup:
            _refuse_violations(check.violations)
            digest = parsed.content_hash
            text = text.replace(_PENDING_HASH_LINE, meta_line("memhtml-content-hash", digest), 1)
            metas = [(name, digest if name == "memhtml-content-hash" else value) for name, value in parsed.metas]
            parsed = parsed._replace(stated_content_hash=digest, metas=metas)
            return _placed(request, now, text, digest), parsed
    markup = (
        request.article_html if request.article_html is not None else prose_article(request.claim or "", request.bodies)
    )
    article, digest = finish_article(markup)
    if request.event_at is not None:
        article = _with_event_time(article, request.event_at)
    file_text = render_memory_file(_head(request, instant, digest), article)
    refuse_oversized_file(file_text)
    parsed, check = inspect_memory(file_text)
    if request.article_html is None:
        _refuse_violations(check.violations)
    else:
        _refuse_violations([*check.violations, *markup_problems(parsed.article_inner_html)])
        refuse_unscreened_article(parsed.article_inner_html)
    return _placed(request, now, file_text, digest), parsed


# Stands in for the content hash until the one parse of the rendered file has computed it.
_PENDING_HASH: Final[str] = "sha256:" + "0" * 64
_PENDING_HASH_LINE: Final[str] = meta_line("memhtml-content-hash", _PENDING_HASH)


def _refuse_violations(violations: Sequence[str]) -> None:
    if violations:
        raise InvalidMemory("invalid memory: " + "; ".join(violations), ["memhtml manifest"])


def _head(request: WriteRequest, instant: str, digest: str) -> MemoryHead:
    return MemoryHead(
        title=request.title,
        memory_type=request.memory_type,
        status="active",
        created=instant,
        updated=instant,
        confidence=request.confidence,
        importance=request.importance,
        content_hash=digest,
        session=_blank_to_none(request.session_id),
        prompt=_blank_to_none(request.prompt_id),
        turn=_blank_to_none(request.turn_uuid),
        entities=list(request.entities),
        tags=[tag for tag in request.tags if tag.strip()],
        task_status=(request.task_status or "todo") if request.memory_type == "task" else None,
        due=request.due if request.memory_type == "task" else None,
    )


def _placed(request: WriteRequest, now: dt.datetime, file_text: str, digest: str) -> PlacedMemory:
    return PlacedMemory(
        file_text=file_text,
        content_hash=digest,
        memory_type=request.memory_type,
        directory=placement_directory(
            request.memory_type, workspace=request.workspace, entities=request.entities, tags=request.tags
        ),
        slug=slugify(request.title),
        date_prefix=now.astimezone(dt.UTC).strftime("%Y%m%d") if request.memory_type == "episodic" else None,
        explicit_path=_explicit_path(request),
    )


def plan_write(request: WriteRequest, now: dt.datetime) -> PlannedOp:
    """The op the store receives for `request`: rendered and checked, or carrying its refusal."""
    try:
        placed = place_memory(request, now)
    except MemhtmlError as refusal:
        return PlannedOp(None, refusal=refusal)
    return PlannedOp(placed, None if request.memory_type == "task" else request.restatement())


def write(
    root: Path,
    request: WriteRequest,
    now: dt.datetime | None = None,
    *,
    detect_conflicts: bool = False,
    detect_near_duplicates: bool = False,
) -> WriteReport:
    """Store one memory as one commit, or report the active memory that already says it (applying a
    changed semantic head to it: `updated`). Screened first: nothing below sees an unscreened text."""
    moment = now or dt.datetime.now(dt.UTC)
    request, screened = screen_request(request)
    planned = plan_write(request, moment)
    if planned.refusal is not None:
        raise planned.refusal
    assert planned.placed is not None
    store = open_store(root)
    message = commit_message(
        commit_subject("write", request.title),
        [("Memhtml-Session", request.session_id), ("Memhtml-Prompt", request.prompt_id)],
    )
    run = store_planned(
        store,
        [request],
        [planned],
        instant=format_instant(moment),
        message_for=lambda *_: message,
        assists=Assists(detect_conflicts=detect_conflicts, detect_near_duplicates=detect_near_duplicates),
    )
    outcome: OpOutcome = run.stored.outcomes[0]
    if outcome.error is not None:
        raise outcome.error
    assert outcome.path is not None
    findings = None
    if run.candidates is not None:
        from memhtml.operations.conflicts import batch_findings

        findings = batch_findings(run.claims, run.candidates, [outcome.path])[0]
    committed = run.stored.committed
    return WriteReport(
        stored=outcome.stored,
        outcome=outcome.outcome,
        path=outcome.path,
        content_hash=planned.placed.content_hash,
        commit_sha=committed.landed.sha if committed is not None else None,
        existing_path=None if outcome.outcome == "written" else outcome.path,
        index_synced=committed.index_synced if committed is not None else True,
        index_warning=run.index_warning,
        changed=outcome.changed,
        conflicts=findings,
        near_duplicates=run.near_duplicates,
        screened=screened,
    )


def _with_event_time(article: str, event_at: str) -> str:
    """The article with `event_at` as its first `<time datetime>`; markup that already states a
    different event time is refused rather than silently overridden."""
    stated = first_event_time(article)
    if stated is not None and stated != event_at:
        raise InvalidMemory(
            f"invalid memory: the article's first <time> says {stated} but the event time given is {event_at}",
            ["give one event time: drop event_at, or change the article's first <time datetime>"],
        )
    return set_event_time(article, event_at)


def _explicit_path(request: WriteRequest) -> str | None:
    """The caller's path when usable; an unusable one is refused under --strict-path, else ignored."""
    if request.path is None:
        return None
    normalized = normalize_path(request.path)
    problem = named_path_problem(request.path)
    if problem is None and normalized.startswith("archive/"):
        problem = "archive/ holds archived memories only (use `memhtml archive` to retire one)"
    if problem is None:
        return normalized
    if request.strict_path:
        raise InvalidMemory(
            f"invalid memory: path `{printable(request.path)}` is not a usable memory path: {problem}. "
            "Nothing was written",
            ["memhtml write --title <title> --claim <sentence> --type <type> (no --path: placement decides)"],
        )
    return None


def _blank_to_none(value: str | None) -> str | None:
    return value if value and value.strip() else None
