"""`.memhtml`, the directory beside the buckets that holds the index, the state database and the
committed sidecars: whether it is a directory, and the one repair when it is not.

Nothing of the store works without it (every open creates files in it), so a file or anything else in
its place is refused by every command with the repair to run; `doctor --fix` renames the thing aside,
never deleting it, and checks out again what HEAD holds under `.memhtml` (the sidecars, the `.gitkeep`
files); the databases are created anew by the next open and the index rebuilt from git.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Final

from memhtml.contracts.errors import DamagedFile
from memhtml.store.gitcmd import run_git

SUPPORT_DIRECTORY: Final[str] = ".memhtml"
# What a damaged `.memhtml` is renamed to (under the ignore patterns `ensure_excluded` writes).
SET_ASIDE_PREFIX: Final[str] = ".memhtml.damaged-"


def support_directory_damaged(root: Path) -> bool:
    """Whether something other than a directory (or a link to one) stands where `.memhtml` belongs."""
    support = root / SUPPORT_DIRECTORY
    return os.path.lexists(support) and not support.is_dir()


def refuse_damaged_support_directory(root: Path) -> None:
    if support_directory_damaged(root):
        raise DamagedFile(
            f"{SUPPORT_DIRECTORY} in {root} is not a directory: the index, the state database and their "
            "sidecars are kept there; the memories themselves are safe in git",
            [f"memhtml doctor --fix --repo {shlex.quote(str(root))}"],
        )


def repair_support_directory(root: Path, instant: str) -> str | None:
    """Rename a damaged `.memhtml` aside and check out what HEAD holds under it; the new name, relative
    to `root`, or None when there was nothing to repair."""
    if not support_directory_damaged(root):
        return None
    stamp = instant.replace("-", "").replace(":", "")
    aside = root / f"{SET_ASIDE_PREFIX}{stamp}-{os.getpid()}"
    os.replace(root / SUPPORT_DIRECTORY, aside)
    (root / SUPPORT_DIRECTORY).mkdir()
    tracked = run_git(root, ["ls-tree", "-r", "-z", "--name-only", "HEAD", "--", SUPPORT_DIRECTORY]).stdout
    if tracked:
        # Only the working tree: the git index's entries for these paths are HEAD's already.
        run_git(root, ["restore", "--source=HEAD", "--worktree", "--", SUPPORT_DIRECTORY])
    return aside.name
