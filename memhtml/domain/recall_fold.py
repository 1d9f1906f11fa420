"""The recall fold: which ranked candidates are quoted in full under a character budget and which are listed.

Candidates are taken strictly in rank order. One is quoted if its disclosure text fits what is
left of the budget and none of its entity names already has MAX_PER_ENTITY quotes; otherwise it
becomes an index line and the fold goes on, so shorter candidates further down can still be quoted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final, NamedTuple

MEMORY_BODY_BUDGET: Final = 16_000
ARC_BODY_BUDGET: Final = 9_000
MAX_PER_ENTITY: Final = 2


def utf16_length(text: str) -> int:
    """How long `text` is for the budget: JavaScript's `length`, so astral characters count twice.

    The original measures its budget and `spentChars` this way; counting alike keeps our packs
    and numbers the same as its on the same corpus.
    """
    return len(text) + sum(1 for char in text if char > "\uffff")


class DisclosureCandidate(NamedTuple):
    """A hydrated recall candidate: what an index line shows, what a quote shows, and its entity names."""

    path: str
    title: str
    gist: str
    memory_type: str
    disclosure_text: str
    entity_names: tuple[str, ...] = ()


class IndexLine(NamedTuple):
    """A candidate that was not quoted: enough to find it and read it with `read`."""

    path: str
    title: str
    gist: str
    memory_type: str


class Fold(NamedTuple):
    """One fold's outcome, both lists in rank order; `truncated` is True when any index line was emitted."""

    disclosed: tuple[DisclosureCandidate, ...]
    index_lines: tuple[IndexLine, ...]
    spent_chars: int

    @property
    def truncated(self) -> bool:
        return bool(self.index_lines)


def _index_line(candidate: DisclosureCandidate) -> IndexLine:
    return IndexLine(
        path=candidate.path,
        title=candidate.title,
        gist=candidate.gist,
        memory_type=candidate.memory_type,
    )


def fold_disclosure(
    candidates: Iterable[DisclosureCandidate],
    budget_chars: int,
    max_per_entity: int = MAX_PER_ENTITY,
) -> Fold:
    """Fold ranked candidates into full quotes and index lines under `budget_chars`.

    A candidate is quoted when its disclosure text is no longer than the budget left and none of
    its entity names (each counted once per candidate) has reached `max_per_entity` quotes. A
    budget of zero or less quotes nothing: every candidate becomes an index line.
    """
    disclosed: list[DisclosureCandidate] = []
    index_lines: list[IndexLine] = []
    quotes_per_entity: Counter[str] = Counter()
    spent = 0
    for candidate in candidates:
        names = set(candidate.entity_names)
        cost = utf16_length(candidate.disclosure_text)
        capped = any(quotes_per_entity[name] >= max_per_entity for name in names)
        if budget_chars > 0 and spent + cost <= budget_chars and not capped:
            disclosed.append(candidate)
            spent += cost
            quotes_per_entity.update(names)
        else:
            index_lines.append(_index_line(candidate))
    return Fold(disclosed=tuple(disclosed), index_lines=tuple(index_lines), spent_chars=spent)
