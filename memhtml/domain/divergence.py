"""The divergence veto: two texts that an embedder rates nearly identical but that say different things.

Every embedder rates a fact and its negation, a changed number or a qualified variant as very similar
(0.94-0.98 cosine), so similarity alone would call "the limit is 10" and "the limit is 20" duplicates.
Two texts diverge when their negation markers, their sets of numbers, or their variant qualifiers
differ; such a pair is never a near-duplicate. The discrimination fixtures derive their wrong twins
with exactly these three flips.
"""

from __future__ import annotations

import re
from typing import Final

NEGATION_MARKERS: Final[frozenset[str]] = frozenset(
    {
        "not",
        "no",
        "never",
        "none",
        "cannot",
        "without",
        "neither",
        "nor",
        "avoid",
        "disallow",
        "disallowed",
        "forbidden",
        "unsafe",
        "invalid",
        "false",
        "fail",
        "fails",
        "failed",
        "deny",
        "denied",
        "reject",
        "rejected",
    }
)
VARIANT_QUALIFIERS: Final[frozenset[str]] = frozenset(
    {"pro", "max", "beta", "alpha", "rc", "preview", "legacy", "deprecated", "experimental"}
)
_CONTRACTIONS: Final[tuple[tuple[str, str], ...]] = (
    ("cannot", "can not"),
    ("can't", "can not"),
    ("won't", "will not"),
    ("shan't", "shall not"),
    ("n't", " not"),
)
_WORD: Final = re.compile(r"[a-z]+")
_NUMBER: Final = re.compile(r"\d+(?:[.,]\d+)*")


def _expanded(text: str) -> str:
    lowered = text.lower().replace("\u2019", "'")
    for contraction, expansion in _CONTRACTIONS:
        lowered = lowered.replace(contraction, expansion)
    return lowered


def negations(text: str) -> tuple[str, ...]:
    """The negation markers of `text`, in order (contractions expanded first: "isn't" counts as "not")."""
    return tuple(word for word in _WORD.findall(_expanded(text)) if word in NEGATION_MARKERS)


def numbers(text: str) -> frozenset[str]:
    """The set of numeric tokens of `text` ("3.5", "2024", "10,000")."""
    return frozenset(_NUMBER.findall(text))


def qualifiers(text: str) -> frozenset[str]:
    """The variant qualifiers `text` names ("pro", "beta", "legacy", ...)."""
    return frozenset(word for word in _WORD.findall(text.lower()) if word in VARIANT_QUALIFIERS)


def diverges(left: str, right: str) -> bool:
    """Whether the two texts differ in negation, numbers or variant qualifiers (never near-duplicates)."""
    return (
        sorted(negations(left)) != sorted(negations(right))
        or numbers(left) != numbers(right)
        or qualifiers(left) != qualifiers(right)
    )
