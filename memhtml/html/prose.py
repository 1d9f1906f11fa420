"""The prose authoring mode: a claim plus body paragraphs (or an `apply` body) turned into article markup.

The first body paragraph joins the claim's `<p>`, later ones get their own, and a paragraph that is
entirely a backtick fence becomes `<figure><pre><code>` (reference §1.5). Fence-awareness keeps a blank
line inside a code block from splitting it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, NamedTuple

from memhtml.html.escaping import escape_attribute, escape_text
from memhtml.html.javascript_semantics import JS_WHITESPACE, js_trim
from memhtml.html.metavalues import is_language_token
from memhtml.html.serialize import canonical_article

_JS_SPACE: Final = f"[{re.escape(JS_WHITESPACE)}]"
# A whole fence: a run of 3+ backticks, an info string without backticks, the code, and a closing
# run at least as long as the opening one.
_WHOLE_FENCE: Final = re.compile(r"(`{3,})([^`\n]*)\n(?:(.*?)\n)?[ \t]*\1`*[ \t]*", re.DOTALL)
# A line that opens a fence while splitting paragraphs: a backtick run and an info string without backticks.
_FENCE_OPENER: Final = re.compile(r"(`{3,})[^`]*")
# The claim of an `apply` body: everything up to the first . ! or ? that ends the text or precedes whitespace.
_FIRST_SENTENCE: Final = re.compile(rf"(.*?[.!?])(?:{_JS_SPACE}|\Z)", re.DOTALL)


class Fence(NamedTuple):
    code: str
    lang: str | None  # the info string's first token, lowercased, when it is a language token


def parse_fence(paragraph: str) -> Fence | None:
    """The fence a (trimmed) paragraph consists of entirely, or None when it is not exactly one fence."""
    match = _WHOLE_FENCE.fullmatch(paragraph)
    if match is None:
        return None
    token = re.split(f"{_JS_SPACE}+", js_trim(match.group(2)))[0]
    lang = token.lower() if token and is_language_token(token) else None
    return Fence(code=match.group(3) or "", lang=lang)


def prose_article(claim: str, bodies: Sequence[str]) -> str:
    """Canonical article inner HTML for a claim and its body paragraphs (blank ones dropped)."""
    return canonical_article(prose_markup(claim, bodies))


def prose_markup(claim: str, bodies: Sequence[str]) -> str:
    """The article markup for a claim and its paragraphs, as generated: usually canonical already, but
    only a parse can prove it (a CR or NUL in the text, for one, is rewritten by the parser)."""
    items = [text for body in bodies if (text := js_trim(body))]
    claim_markup = f"<mark>{escape_text(js_trim(claim))}</mark>"
    paragraphs: list[str] = []
    if items and parse_fence(items[0]) is None:
        paragraphs.append(f"<p>{claim_markup} {escape_text(items[0])}</p>")
        items = items[1:]
    else:
        paragraphs.append(f"<p>{claim_markup}</p>")
    paragraphs += [_paragraph_markup(item) for item in items]
    return "\n".join(paragraphs)


def split_apply_body(body: str) -> tuple[str, list[str]]:
    """An `apply` body as (claim, paragraphs): the first sentence, then the rest split on blank lines."""
    match = _FIRST_SENTENCE.match(body)
    if match is None:
        return js_trim(body), []
    return js_trim(match.group(1)), split_paragraphs(body[match.end() :])


def split_paragraphs(text: str) -> list[str]:
    """Split on blank lines, except inside a backtick fence; paragraphs are trimmed and blanks dropped."""
    paragraphs: list[str] = []
    current: list[str] = []
    open_fence = 0  # length of the backtick run that opened the current fence, 0 outside a fence
    for line in text.split("\n"):
        stripped = js_trim(line)
        if open_fence:
            current.append(line)
            if re.fullmatch(f"`{{{open_fence},}}", stripped):
                open_fence = 0
            continue
        if not stripped:
            paragraphs.append("\n".join(current))
            current = []
            continue
        opener = _FENCE_OPENER.fullmatch(stripped)
        if opener:
            open_fence = len(opener.group(1))
        current.append(line)
    paragraphs.append("\n".join(current))
    return [text for paragraph in paragraphs if (text := js_trim(paragraph))]


def _paragraph_markup(item: str) -> str:
    fence = parse_fence(item)
    if fence is None:
        return f"<p>{escape_text(item)}</p>"
    lang = f' data-lang="{escape_attribute(fence.lang)}"' if fence.lang else ""
    return f"<figure><pre><code{lang}>{escape_text(fence.code)}</code></pre></figure>"
