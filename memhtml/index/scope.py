"""The scope of a retrieval: one filter built once and applied identically by every arm.

Defaults leave out archived memories and tasks; `as_of` replaces the archived filter with a
validity window (event time) or with the set of paths live at a commit (transaction time).
An entity reference matches ignoring surrounding whitespace and the case of ASCII letters; an empty
tag and a facet with an empty value are no filter.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple

# The command's contract folds ASCII letters only: `É` and `é` stay distinct, as do `ß` and `SS`.
_ASCII_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


class AsOfValidity(NamedTuple):
    """Event-time as-of: memories whose validity window contains `instant` (string comparison)."""

    instant: str


class AsOfCommit(NamedTuple):
    """Transaction-time as-of: memories live in the tree of commit `sha`, committed at `instant`;
    `live_blobs` maps each live memory path of that tree to its blob id."""

    sha: str
    instant: str
    live_blobs: Mapping[str, str]

    @property
    def live_paths(self) -> list[str]:
        return list(self.live_blobs)


class Scope(NamedTuple):
    memory_types: Sequence[str] = ()
    workspace: str | None = None
    tags: Sequence[str] = ()
    entity: str | None = None
    facets: Sequence[tuple[str, str]] = ()
    include_archived: bool = False
    as_of: AsOfValidity | AsOfCommit | None = None
    only_archived: bool = False
    # No type named: every type (tasks too) rather than every type but tasks.
    any_type: bool = False

    @property
    def narrowing(self) -> bool:
        """Whether the caller narrowed the search (an empty result then says `scopeEmpty`)."""
        return bool(
            self.memory_types or self.workspace or self.queried_tags or self.entity or self.queried_facets or self.as_of
        )

    @property
    def queried_tags(self) -> list[str]:
        """The tags that filter: an empty one names no tag (a blank one stays, and matches none)."""
        return [tag for tag in self.tags if tag]

    @property
    def queried_facets(self) -> list[tuple[str, str]]:
        """The facets that filter: `name=` with nothing after it asks for no value, so it is no filter."""
        return [(name, value) for name, value in self.facets if value.strip()]


def fold_entity(reference: str) -> str:
    """`reference` as the entity scope compares it: trimmed, ASCII letters lowercased."""
    return reference.strip().translate(_ASCII_LOWER)


def scope_filter(scope: Scope, alias: str = "f") -> tuple[str, dict[str, Any]]:
    """(SQL predicate over files alias `alias`, its named parameters)."""
    clauses: list[str] = []
    parameters: dict[str, Any] = {}
    if scope.memory_types:
        clauses.append(f"{alias}.memory_type IN (SELECT unnest($scope_types))")
        parameters["scope_types"] = list(scope.memory_types)
    elif not scope.any_type:
        clauses.append(f"{alias}.memory_type <> 'task'")
    if scope.only_archived:
        clauses.append(f"{alias}.archived")
    elif isinstance(scope.as_of, AsOfValidity):
        clauses.append(
            f"coalesce({alias}.valid_from, {alias}.event_at, {alias}.created_at) <= $scope_as_of"
            f" AND ({alias}.valid_until IS NULL OR {alias}.valid_until > $scope_as_of)"
        )
        parameters["scope_as_of"] = scope.as_of.instant
    elif isinstance(scope.as_of, AsOfCommit):
        clauses.append(
            f"((NOT {alias}.archived AND {alias}.path IN (SELECT unnest($scope_live)))"
            f" OR ({alias}.archived AND {alias}.origin_path IN (SELECT unnest($scope_live))"
            f" AND coalesce({alias}.archived_at, '9999') > $scope_committed))"
        )
        parameters["scope_live"] = list(scope.as_of.live_paths)
        parameters["scope_committed"] = scope.as_of.instant
    elif not scope.include_archived:
        clauses.append(f"NOT {alias}.archived")
    if scope.workspace:
        clauses.append(f"{alias}.workspace = $scope_workspace")
        parameters["scope_workspace"] = scope.workspace
    if scope.queried_tags:
        clauses.append(
            f"EXISTS (SELECT 1 FROM file_tags t WHERE t.path = {alias}.path AND t.tag IN (SELECT unnest($scope_tags)))"
        )
        parameters["scope_tags"] = scope.queried_tags
    if scope.entity:
        # DuckDB's lower() folds all of Unicode; translate() folds exactly what fold_entity folds.
        clauses.append(
            f"EXISTS (SELECT 1 FROM file_entities e WHERE e.path = {alias}.path"
            f" AND translate(e.entity_type || ':' || e.entity_name, $scope_upper, $scope_lower) = $scope_entity)"
        )
        parameters["scope_entity"] = fold_entity(scope.entity)
        parameters["scope_upper"] = string.ascii_uppercase
        parameters["scope_lower"] = string.ascii_lowercase
    by_name: dict[str, list[str]] = {}
    for name, value in scope.queried_facets:
        by_name.setdefault(name, []).append(value)
    for number, (name, values) in enumerate(sorted(by_name.items())):
        # Values of one facet name are alternatives; different names must all hold.
        clauses.append(
            f"EXISTS (SELECT 1 FROM file_facets x WHERE x.path = {alias}.path AND x.name = $facet_name_{number}"
            f" AND x.value IN (SELECT unnest($facet_values_{number})))"
        )
        parameters[f"facet_name_{number}"] = name
        parameters[f"facet_values_{number}"] = values
    return " AND ".join(clauses) or "true", parameters
