"""What the index needs to read from git: a small read-only port and the values it returns.

The index never imports the store; `operations` hands it an object with these methods, backed by git
plumbing in `memhtml.store.gitread`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol


class TreeChange(NamedTuple):
    """One entry of `git diff --name-status -M`: A, M, D or R (a copy arrives as A)."""

    status: str
    path: str
    blob_sha: str | None = None  # the new blob (None for D)
    old_path: str | None = None


class DirtyEntry(NamedTuple):
    """A memory path whose working-tree state differs from HEAD."""

    path: str
    deleted: bool


class BlobSource(Protocol):
    """A picklable reader of blob contents that worker processes take along: each process that reads
    through it keeps one git process of its own open for the reads, until `close` (or its exit)."""

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Blob contents by sha; shas that are missing are left out."""

    def committed_blobs(self, entries: Sequence[tuple[str, str]]) -> dict[str, bytes]:
        """Blob contents by sha for `(path, blob sha)` entries of a commit: read from the working-tree
        file at the path where it holds exactly the blob's bytes, the others as `blobs` reads them."""

    def close(self) -> None:
        """End this process's git process, if it opened one."""


class CorpusReader(Protocol):
    def head(self) -> str | None:
        """The commit HEAD points at, or None on an unborn branch."""

    def tree(self, commit: str, paths: Sequence[str] | None = None) -> dict[str, str]:
        """Memory path → blob sha in `commit`, for every memory file or only `paths` (one ls-tree)."""

    def tracked_files_above(self, count: int) -> bool:
        """Whether the repository tracks more than `count` files, as its index says at a glance: a hint of
        a tree's size before it is listed, which may also count files that are not memories."""

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Blob contents by sha (one streamed cat-file --batch)."""

    def committed_blobs(self, entries: Sequence[tuple[str, str]]) -> dict[str, bytes]:
        """`BlobSource.committed_blobs`, read by this process."""

    def blob_source(self) -> BlobSource:
        """What worker processes read blobs through, each with its own git process."""

    def changes(self, old: str, new: str) -> list[TreeChange]:
        """Memory-path changes between two commits, rename-aware."""

    def dirty(self) -> list[DirtyEntry]:
        """Memory paths that differ between the working tree and HEAD (untracked included)."""

    def worktree_blobs(self, paths: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        """(blob sha, bytes) of working-tree files that exist, keyed by path."""

    def worktree_blob_ids(self, paths: Sequence[str]) -> dict[str, str]:
        """The blob sha each working-tree file would have, keyed by path (files that exist; no git process)."""

    def dirty_among(self, paths: Sequence[str]) -> list[DirtyEntry]:
        """What `dirty` would list of `paths` alone (git decides: ignore rules, skip-worktree, filters)."""

    def resolve_commit(self, reference: str) -> tuple[str, str] | None:
        """(full sha, committer instant) of a commit reference, or None if it names no commit."""

    def moved_from(self, path: str, since: str | None = None) -> tuple[str, str | None] | None:
        """(the commit that took `path` out of the tree, where it moved it: None if it deleted it), or None
        if none did: the first such commit after `since`, else the last one, if the path is gone now."""
