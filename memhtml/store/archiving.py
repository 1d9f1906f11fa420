"""Where a retired memory goes and how it is stamped: `archive/<YYYY>/<path>` (or its first free `-N`
variant when a reused path is retired twice in one year) and the archive metas."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Protocol

from memhtml.contracts.paths import archive_path_for
from memhtml.contracts.vocabulary import rel_token
from memhtml.html.document import parse_memory
from memhtml.html.headedit import add_link, set_meta


class Claimer(Protocol):
    def take(self, candidate: str) -> bool: ...

    def claim(self, directory: str, slug: str, date_prefix: str | None) -> str: ...


def archive_destination(claimer: Claimer, path: str, year: int) -> str:
    """`archive/<year>/<path>`, or the first free `-N` variant when that archive path is taken."""
    destination = archive_path_for(path, year)
    if claimer.take(destination):
        return destination
    pure = PurePosixPath(destination)
    return claimer.claim(str(pure.parent), pure.stem, None)


def archived_text(text: str, instant: str, superseded_by: str | None = None, valid_until: str | None = None) -> str:
    """The archive stamps: status, updated, archived; for a superseded memory also superseded-by and
    valid-until (min-wins: an earlier stated end of validity stays)."""
    text = set_meta(text, "memhtml-status", "archived")
    text = set_meta(text, "memhtml-updated", instant)
    text = set_meta(text, "memhtml-archived", instant)
    if superseded_by is not None:
        text = set_meta(text, "memhtml-superseded-by", "/" + superseded_by)
    if valid_until is not None:
        stated = parse_memory(text).valid_until
        if not stated or valid_until < stated:
            text = set_meta(text, "memhtml-valid-until", valid_until)
    return text


def superseding_text(text: str, archived_path: str, instant: str) -> tuple[str, str]:
    """The winner of a supersession: a `supersedes` link to the loser's archive path and, unless stated,
    `valid-from` (its first `<time>`, else now). Returns the text and that start of validity, which is
    where the loser's validity ends (P15)."""
    parsed = parse_memory(text)
    valid_from = parsed.valid_from or parsed.event_at or instant
    text = add_link(text, rel_token("supersedes"), "/" + archived_path)
    if parsed.valid_from is None:
        text = set_meta(text, "memhtml-valid-from", valid_from)
    return text, valid_from
