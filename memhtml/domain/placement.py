"""Where a new memory goes when the caller names no usable path: the original's placement rules.

The function is total: it always answers a directory inside a PARA bucket.
"""

from __future__ import annotations

from collections.abc import Sequence

from memhtml.contracts.paths import slugify

_TAG_ROUTED_TYPES = frozenset({"semantic", "procedural", "precedent"})


def placement_directory(
    memory_type: str,
    *,
    workspace: str | None,
    entities: Sequence[str],
    tags: Sequence[str],
) -> str:
    """The directory (no trailing slash) of a memory, first matching rule wins."""
    workspace_slug = slugify(workspace) if workspace and workspace.strip() else None
    if memory_type == "arc":
        return "areas/arcs"
    if memory_type == "task":
        return f"projects/{workspace_slug}/tasks" if workspace_slug else "areas/inbox/tasks"
    if memory_type == "semantic" and any(_is_person(entity) for entity in entities):
        return "resources/people"
    if workspace_slug:
        return f"projects/{workspace_slug}"
    first_tag = next((tag for tag in tags if tag.strip()), None)
    if memory_type in _TAG_ROUTED_TYPES and first_tag is not None:
        return f"resources/{slugify(first_tag)}"
    return "areas/inbox"


def _is_person(entity: str) -> bool:
    return entity.startswith("person:") and bool(entity[len("person:") :].strip())
