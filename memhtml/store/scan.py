"""Reading the working tree without the index: dirty paths, and the fallback dedupe lookup a write uses
when the index cannot be opened (`git grep` for the stated hash, confirmed by recomputing it)."""

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
    """Paths whose working-tree state differs from HEAD (staged, modified or untracked), sorted; an
    untracked directory is one `dir/` entry, as `git status` shows it."""
    output = run_git(store.root, ["status", "--porcelain=v1", "-z", "--untracked-files=normal", "--no-renames"]).stdout
    paths = {record[3:].decode("utf-8", "surrogateescape") for record in output.split(b"\0") if record}
    return sorted(paths)
