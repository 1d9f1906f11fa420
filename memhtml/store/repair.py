"""Repairing dangling links: every `<link>` whose target is gone is removed and, when the target has an
archived copy, a link to that copy added; `memhtml-updated` is stamped; all in one commit.

A link is matched by what the index made of its href (leading slashes, query and fragment dropped), so a
hand-written `href="//areas/x.html#top"` is repaired like `/areas/x.html`. A source file with uncommitted
changes is left alone and reported: repairing it would overwrite someone's work.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from memhtml.contracts.errors import DirtyTree, MemhtmlError
from memhtml.contracts.vocabulary import rel_token
from memhtml.html.document import head_links
from memhtml.html.headedit import add_link, remove_link, set_meta
from memhtml.html.parser import parse_document
from memhtml.store.repository import Store
from memhtml.store.transaction import (
    Committed,
    FileChange,
    ModificationGuard,
    commit_changes,
    exclusive,
    read_committed,
)


class DanglingLink(NamedTuple):
    source: str
    rel: str
    destination: str
    rewrite_to: str | None  # the destination's archived copy, when the index knows one


class LinkRepair(NamedTuple):
    committed: Committed | None
    rewritten: int
    dropped: int
    failed: list[dict[str, str]]  # {path, reason} of sources left as they were


def href_target(href: str) -> str:
    """The repo path an href names, as the index projects it."""
    return href.split("#", 1)[0].split("?", 1)[0].lstrip("/")


def repair_dangling_links(store: Store, dangling: Sequence[DanglingLink], instant: str, message: str) -> LinkRepair:
    """Rewrite or drop every dangling link in one commit; sources that cannot be edited are reported."""
    by_source: dict[str, list[DanglingLink]] = defaultdict(list)
    for link in dangling:
        by_source[link.source].append(link)
    rewritten = dropped = 0
    failed: list[dict[str, str]] = []
    changes: list[FileChange] = []
    with exclusive(store):
        texts = read_committed(store, by_source)
        guard = ModificationGuard(store)
        for source, links in sorted(by_source.items()):
            text = texts.get(source)
            if text is None:
                failed.append({"path": source, "reason": "not committed at HEAD"})
                continue
            try:
                guard.check(source, text)
            except DirtyTree as refusal:
                failed.append({"path": source, "reason": refusal.message})
                continue
            try:
                edited, counts = _repaired_text(text, links)
                if edited == text:
                    continue
                edited = set_meta(edited, "memhtml-updated", instant)
            except MemhtmlError as refusal:  # a hand-written head the edits cannot splice safely
                failed.append({"path": source, "reason": refusal.message})
                continue
            rewritten += counts[0]
            dropped += counts[1]
            changes.append(FileChange(source, edited, rewrite=True))
        committed = commit_changes(store, changes, message) if changes else None
    return LinkRepair(committed, rewritten, dropped, failed)


def _repaired_text(text: str, links: Sequence[DanglingLink]) -> tuple[str, tuple[int, int]]:
    """Unlink each dangling href (every spelling of it the parser reads), then link the archived copy.
    The head edits refuse a head they cannot splice exactly as the parser reads it."""
    rewritten = dropped = 0
    for link in links:
        token = rel_token(link.rel)
        spellings = {href for rel, href in head_links(parse_document(text)) if rel == token}
        doomed = sorted(href for href in spellings if href_target(href) == link.destination)
        if not doomed:
            continue
        for href in doomed:
            text = remove_link(text, token, href)
        if link.rewrite_to is not None:
            text = add_link(text, token, "/" + link.rewrite_to)
            rewritten += 1
        else:
            dropped += 1
    return text, (rewritten, dropped)
