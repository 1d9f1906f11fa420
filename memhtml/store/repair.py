"""Repairing dangling links: every `<link>` whose target is gone is pointed at the target's archived copy
when there is one, or removed, with `memhtml-updated` stamped, all in one commit.

A link is matched by what the index made of its href (leading slashes, query and fragment dropped), so a
hand-written `href="//areas/x.html#top"` is repaired like `/areas/x.html`. A source file with uncommitted
changes is left alone and reported: repairing it would overwrite someone's work.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from memhtml.contracts.errors import DirtyTree
from memhtml.contracts.vocabulary import rel_token
from memhtml.html.headedit import scan_head, set_meta
from memhtml.html.template import link_line
from memhtml.store.repository import Store
from memhtml.store.transaction import (
    Committed,
    FileChange,
    ModificationGuard,
    commit_changes,
    exclusive,
    read_committed,
)


@dataclass(frozen=True, slots=True)
class DanglingLink:
    source: str
    rel: str
    destination: str
    rewrite_to: str | None  # the destination's archived copy, when the index knows one


@dataclass(frozen=True, slots=True)
class LinkRepair:
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
            edited, counts = _repaired_text(text, links)
            if edited == text:
                continue
            rewritten += counts[0]
            dropped += counts[1]
            changes.append(FileChange(source, set_meta(edited, "memhtml-updated", instant), rewrite=True))
        committed = commit_changes(store, changes, message) if changes else None
    return LinkRepair(committed, rewritten, dropped, failed)


def _repaired_text(text: str, links: Sequence[DanglingLink]) -> tuple[str, tuple[int, int]]:
    """Splice from the end backwards so earlier spans keep their offsets."""
    wanted = {(rel_token(link.rel), link.destination): link for link in links}
    tags = scan_head(text).links()
    present = {(tag.key, tag.value) for tag in tags}
    rewritten = dropped = 0
    for tag in sorted(tags, key=lambda item: item.start, reverse=True):
        link = wanted.get((tag.key, href_target(tag.value)))
        if link is None:
            continue
        replacement = ""
        if link.rewrite_to is not None and (tag.key, "/" + link.rewrite_to) not in present:
            replacement = link_line(tag.key, "/" + link.rewrite_to)
            present.add((tag.key, "/" + link.rewrite_to))
            rewritten += 1
        else:
            dropped += 1
        start, end = tag.start, tag.end
        if not replacement:
            # Take the whole line with it, as `remove_link` does, so no blank line is left in the head.
            line_start = text.rfind("\n", 0, start) + 1
            if not text[line_start:start].strip() and text[end : end + 1] == "\n":
                start, end = line_start, end + 1
        text = text[:start] + replacement + text[end:]
    return text, (rewritten, dropped)
