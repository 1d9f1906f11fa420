"""Nearest-name suggestions for mistyped commands and flags.

Owns the edit distance and the original's suggestion rule: a candidate qualifies when its
Levenshtein distance is at most max(2, ceil(len(word) / 2)); at most three are returned, closest
first, ties kept in the candidates' own order. Also the rules for suggesting command names.
"""

from __future__ import annotations

from collections.abc import Iterable

SUGGESTION_LIMIT = 3


def levenshtein(left: str, right: str) -> int:
    """The number of single-character insertions, deletions and substitutions turning `left` into `right`."""
    if len(left) < len(right):
        left, right = right, left
    previous = list(range(len(right) + 1))
    for row, left_char in enumerate(left, start=1):
        current = [row]
        for column, right_char in enumerate(right, start=1):
            current.append(
                min(
                    previous[column] + 1,
                    current[column - 1] + 1,
                    previous[column - 1] + (left_char != right_char),
                )
            )
        previous = current
    return previous[-1]


def distance_budget(word: str) -> int:
    """How far a candidate may be from `word` and still be suggested: max(2, ceil(len / 2))."""
    return max(2, -(-len(word) // 2))


def nearest(word: str, candidates: Iterable[str], limit: int = SUGGESTION_LIMIT) -> list[str]:
    """The candidates within the distance budget of `word`, closest first, at most `limit`.

    Equal distances keep the order of `candidates` (the stable sort guarantees it), so a table's
    own order decides between equally close names.
    """
    budget = distance_budget(word)
    scored: list[tuple[int, str]] = []
    seen: set[str] = set()
    for candidate in candidates:
        if candidate in seen:
            continue
        seen.add(candidate)
        distance = levenshtein(word, candidate)
        if distance <= budget:
            scored.append((distance, candidate))
    scored.sort(key=lambda pair: pair[0])
    return [candidate for _, candidate in scored[:limit]]


def nearest_command_names(words: list[str], names: list[str]) -> list[str]:
    """Suggestions for unknown command words: the typed two-word phrase is compared first, so a typo
    in a two-word command finds it, and the first word alone fills the remaining places."""
    suggestions = nearest(" ".join(words[:2]), names) if len(words) >= 2 else []
    for name in nearest(words[0], names):
        if name not in suggestions:
            suggestions.append(name)
    return suggestions[:SUGGESTION_LIMIT]


def family_members(noun: str, names: list[str]) -> list[str]:
    """The two-word commands under `noun` (`index` -> `index rebuild`, ...), in table order."""
    return [name for name in names if name.partition(" ")[0] == noun and " " in name]
