"""The memory file writer: a typed head plus article markup rendered to the exact bytes of reference §1.1.

One element per line, metas in META_ORDER, links after them, the article canonically re-serialized,
and a single trailing newline. Rendering is pure; callers stamp `content_hash` (see `finish_article`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from memhtml.contracts.vocabulary import META_ORDER
from memhtml.html.escaping import escape_attribute, escape_text
from memhtml.html.hashing import canonical_text_of, hash_text
from memhtml.html.javascript_semantics import js_to_fixed_2, js_trim
from memhtml.html.prose import prose_article, split_apply_body
from memhtml.html.serialize import canonical_article, canonical_article_tree

__all__ = [
    "MemoryHead",
    "finish_article",
    "format_confidence",
    "link_line",
    "meta_line",
    "prose_article",
    "render_memory_file",
    "split_apply_body",
]


class MemoryHead(NamedTuple):
    """Everything a memory file's `<head>` states. None (or an empty repeatable) means the line is omitted."""

    title: str
    memory_type: str
    status: str = "active"
    created: str | None = None
    updated: str | None = None
    confidence: float | None = None
    importance: int | None = None
    content_hash: str | None = None
    author: str | None = None
    session: str | None = None
    prompt: str | None = None
    turn: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    reprieves: int | None = None
    archived: str | None = None
    superseded_by: str | None = None
    needs_revision: bool | None = None
    task_status: str | None = None
    due: str | None = None
    entities: Sequence[str] = ()
    tags: Sequence[str] = ()
    aliases: Sequence[str] = ()
    links: Sequence[tuple[str, str]] = ()  # (rel token e.g. memhtml-relates-to, href)

    def meta_pairs(self) -> list[tuple[str, str]]:
        """The (name, content) meta lines in META_ORDER, values rendered as the reference writes them."""
        scalars: dict[str, str | None] = {
            "memhtml-type": self.memory_type,
            "memhtml-status": self.status,
            "memhtml-created": self.created,
            "memhtml-updated": self.updated,
            "memhtml-confidence": format_confidence(self.confidence) if self.confidence is not None else None,
            "memhtml-importance": str(self.importance) if self.importance is not None else None,
            "memhtml-content-hash": self.content_hash,
            "memhtml-author": self.author,
            "memhtml-session": self.session,
            "memhtml-prompt": self.prompt,
            "memhtml-turn": self.turn,
            "memhtml-valid-from": self.valid_from,
            "memhtml-valid-until": self.valid_until,
            "memhtml-reprieves": str(self.reprieves) if self.reprieves is not None else None,
            "memhtml-archived": self.archived,
            "memhtml-superseded-by": self.superseded_by,
            "memhtml-needs-revision": _boolean(self.needs_revision),
            "memhtml-task-status": self.task_status,
            "memhtml-due": self.due,
        }
        repeatables = {
            "memhtml-entity": self.entities,
            "memhtml-tag": self.tags,
            "memhtml-alias": self.aliases,
        }
        pairs: list[tuple[str, str]] = []
        for name in META_ORDER:
            if name in repeatables:
                # An empty value reads back as absent, so writing it would only add noise.
                pairs += [(name, value) for value in repeatables[name] if value != ""]
            elif (value := scalars[name]) is not None:
                pairs.append((name, value))
        return pairs


def format_confidence(value: float) -> str:
    """Confidence as the reference stamps it: JS `toFixed(2)` (0.125 -> "0.13", 0.9 -> "0.90")."""
    return js_to_fixed_2(value)


def finish_article(inner_markup: str) -> tuple[str, str]:
    """(canonical article, its content hash): hash what will be on disk, after trimming and fix-ups."""
    article, root = canonical_article_tree(inner_markup)
    return article, hash_text(canonical_text_of(root))


def meta_line(name: str, content: str) -> str:
    return f'<meta name="{escape_attribute(name)}" content="{escape_attribute(content)}">'


def link_line(rel_token: str, href: str) -> str:
    return f'<link rel="{escape_attribute(rel_token)}" href="{escape_attribute(href)}">'


def render_memory_file(head: MemoryHead, article_inner: str, *, canonical: bool = False) -> str:
    """The complete file text; `article_inner` is re-serialized canonically (a no-op on canonical input),
    unless the caller vouches that it is canonical already (and proves it by parsing the result)."""
    lines = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{escape_text(js_trim(head.title))}</title>",
        *(meta_line(name, content) for name, content in head.meta_pairs()),
        *(link_line(rel_token, href) for rel_token, href in head.links),
        "</head>",
        "<body>",
        "<article>",
        article_inner if canonical else canonical_article(article_inner),
        "</article>",
        "</body>",
        "</html>",
    ]
    return "\n".join(lines) + "\n"


def _boolean(value: bool | None) -> str | None:
    if value is None:
        return None
    return "true" if value else "false"
