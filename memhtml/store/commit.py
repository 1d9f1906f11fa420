"""Committing exactly our own paths, without touching the user's staging area.

The tree is built in a private index seeded from HEAD, committed with `commit-tree`, and published
with `update-ref HEAD <new> <old>` as a compare-and-swap. Only afterwards are the real index entries
of our paths brought in line. Paths and objects travel on stdin, never as arguments, so a batch of
any size fits.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memhtml.contracts.errors import GitFailure
from memhtml.html.jscompat import js_flattened, js_trim, utf16_length, utf16_prefix
from memhtml.store.gitcmd import git_text, run_git

ZERO_SHA: Final[str] = "0" * 40
SUBJECT_LIMIT: Final[int] = 72


@dataclass(frozen=True)
class Staged:
    """One path of a commit: `present=True` takes the working-tree file's bytes, False removes the path."""

    path: str
    present: bool = True


def commit_subject(op: str, text: str) -> str:
    """`memhtml(<op>): <text>`: whitespace flattened, capped at 72 UTF-16 units with `…`, never empty."""
    flattened = js_flattened(text)
    if not flattened:
        flattened = "(untitled)"
    if utf16_length(flattened) > SUBJECT_LIMIT:
        flattened = js_trim(utf16_prefix(flattened, SUBJECT_LIMIT - 1)) + "…"
    return f"memhtml({op}): {flattened}"


def commit_message(subject: str, trailers: Sequence[tuple[str, str | None]] = ()) -> str:
    """The message bytes `git commit -m <subject> --trailer ...` would produce; empty values are omitted."""
    flat = [(key, js_flattened(value)) for key, value in trailers if value]
    lines = [f"{key}: {value}" for key, value in flat if value]
    if not lines:
        return subject + "\n"
    return subject + "\n\n" + "\n".join(lines) + "\n"


def head_sha(root: Path) -> str | None:
    """The commit HEAD points at, or None on an unborn branch."""
    completed = run_git(root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"], ok_statuses=(0, 1))
    sha = completed.stdout.decode().strip()
    return sha or None


def path_in_head(root: Path, path: str) -> bool:
    """Whether HEAD's tree holds `path` (used to tell a landed commit from one that never happened)."""
    completed = run_git(root, ["cat-file", "-e", f"HEAD:{path}"], ok_statuses=(0, 1, 128))
    return completed.returncode == 0


def commit_paths(root: Path, git_dir: Path, staged: Sequence[Staged], message: str) -> str:
    """Commit `staged` on top of HEAD as one commit and return its sha; every failure precedes the CAS.

    The caller then runs `sync_real_index`, outside its rollback scope: once the branch moved, the
    working-tree files belong to history and must never be removed.
    """
    parent = head_sha(root)
    private_index = git_dir / f"memhtml-index-{os.getpid()}-{secrets.token_hex(4)}"
    env = {"GIT_INDEX_FILE": str(private_index)}
    try:
        if parent is None:
            run_git(root, ["read-tree", "--empty"], env=env)
        else:
            run_git(root, ["read-tree", parent], env=env)
        run_git(root, ["update-index", "-z", "--index-info"], stdin=_index_info(root, staged), env=env)
        tree = git_text(root, ["write-tree"], env=env)
        parents = ["-p", parent] if parent else []
        commit = git_text(root, ["commit-tree", tree, *parents, "-F", "-"], stdin=message.encode("utf-8"))
        subject = message.split("\n", 1)[0]
        run_git(root, ["update-ref", "-m", subject, "HEAD", commit, parent or ZERO_SHA])
    finally:
        private_index.unlink(missing_ok=True)
    return commit


def sync_real_index(root: Path, paths: Sequence[str]) -> bool:
    """Make the user's index agree with the working tree for `paths` only; False if git refused."""
    listing = b"".join(path.encode("utf-8") + b"\0" for path in paths)
    try:
        run_git(root, ["update-index", "--add", "--remove", "-z", "--stdin"], stdin=listing)
    except GitFailure:
        return False
    return True


def _index_info(root: Path, staged: Sequence[Staged]) -> bytes:
    """`update-index --index-info` records: blobs hashed from the working tree in one streamed call."""
    present = [entry.path for entry in staged if entry.present]
    shas: list[str] = []
    if present:
        listing = "".join(path + "\n" for path in present).encode("utf-8")
        output = git_text(root, ["hash-object", "-w", "--no-filters", "--stdin-paths"], stdin=listing)
        shas = output.split("\n")
    blob_for = dict(zip(present, shas, strict=True))
    records = []
    for entry in staged:
        if entry.present:
            records.append(f"100644 {blob_for[entry.path]}\t{entry.path}")
        else:
            records.append(f"0 {ZERO_SHA}\t{entry.path}")
    return "".join(record + "\0" for record in records).encode("utf-8")
