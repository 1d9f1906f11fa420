"""Reading the corpus straight from the working tree: memory listings, dirty paths and the interim
dedupe lookup (`git grep` for the stated hash, confirmed by recomputing it).

The DuckDB index replaces the dedupe lookup; it keeps the `ActiveHashLookup` signature.
"""

from __future__ import annotations

from memhtml.contracts.paths import is_archived_path, is_memory_path
from memhtml.html.document import parse_memory
from memhtml.store.gitcmd import run_git
from memhtml.store.repository import Store

_ACTIVE_BUCKETS = ("projects", "areas", "resources")


def find_active_by_hash(store: Store, content_hash: str) -> str | None:
    """The active, non-task memory whose recomputed article hash is `content_hash`, if any."""
    completed = run_git(
        store.root,
        ["grep", "-l", "-z", "-F", "--untracked", "--no-color", "-e", content_hash, "--", *_ACTIVE_BUCKETS],
        ok_statuses=(0, 1),
    )
    candidates = sorted(name.decode("utf-8") for name in completed.stdout.split(b"\0") if name)
    for candidate in candidates:
        if not is_memory_path(candidate) or is_archived_path(candidate):
            continue
        try:
            text = (store.root / candidate).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        parsed = parse_memory(text)
        if parsed.memory_type != "task" and parsed.content_hash == content_hash:
            return candidate
    return None


def dirty_paths(store: Store) -> list[str]:
    """Paths whose working-tree state differs from HEAD (staged, modified or untracked), sorted."""
    output = run_git(
        store.root, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]
    ).stdout
    paths = {record[3:].decode("utf-8", "surrogateescape") for record in output.split(b"\0") if record}
    return sorted(paths)


def tracked_memory_paths(store: Store) -> list[str]:
    """Every memory path in HEAD, in path order."""
    output = run_git(
        store.root,
        ["ls-tree", "-r", "-z", "--name-only", "HEAD", "--", "projects", "areas", "resources", "archive"],
        ok_statuses=(0, 128),
    ).stdout
    return sorted(
        name
        for name in (raw.decode("utf-8", "surrogateescape") for raw in output.split(b"\0"))
        if is_memory_path(name)
    )
