"""Keeping a store's objects packed: git's automatic maintenance, started after our commits as `git
commit` starts it after its own.

Our commits are made with `commit-tree` and published with `update-ref` (`store.commit`), never with
`git commit`, so for a store written only through memhtml git's automatic maintenance never ran: each
single write leaves five loose object files (its blob, three trees and its commit), and nothing ever
packed them (100k writes: 500k files, gigabytes on disk).

Once a command's commit has landed and the store's write lock is released (`transaction.exclusive`),
`start_maintenance_if_due` makes git's own estimate against git's default thresholds: the loose
objects of one of the 256 fan-out directories (`objects/17`, where git expects 1/256 of them) and the
packs not marked to keep. That costs one read of a small directory. Only when
one of the thresholds may be passed does it run `git maintenance run --auto --quiet`, as `git commit`
itself does since git 2.29 (an older git refuses the command, and nothing else follows). Git decides
with the repository's own configuration (`maintenance.auto`, `gc.auto`, `gc.autoPackLimit`) and, by
default, packs in a process of its own in the background (`gc.autoDetach`). A repository that raised
a threshold pays one short git process per commit until git's own threshold is reached, as every
`git commit` does.

The maintenance inherits no descriptor of ours: a `git gc` holding the store's write lock would lock
every writer out until it ends, and one run in the foreground starts only after the lock is released.
It never fails the command whose commit has landed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from memhtml.store.gitcmd import run_git_unattached

# git's defaults: `gc.auto` loose objects, and `gc.autoPackLimit` packs.
GC_AUTO_DEFAULT: Final[int] = 6700
GC_AUTO_PACK_LIMIT_DEFAULT: Final[int] = 50
# git counts the loose objects of `objects/17` only, and estimates too many past 1/256 of `gc.auto`.
FANOUT_DIRECTORY: Final[str] = "17"
FANOUT_LIMIT: Final[int] = -(-GC_AUTO_DEFAULT // 256)  # 27
MAINTENANCE_COMMAND: Final[tuple[str, ...]] = ("maintenance", "run", "--auto", "--quiet")
_HEX_DIGITS: Final[frozenset[str]] = frozenset("0123456789abcdef")
# The rest of an object id after its fan-out directory: SHA-1 (40 hex digits) or SHA-256 (64).
_LOOSE_NAME_LENGTHS: Final[frozenset[int]] = frozenset({38, 62})


def objects_directory(git_dir: Path) -> Path:
    """The repository's object directory: a linked worktree's git directory names its common one."""
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return git_dir / "objects"
    common_dir = Path(common)
    return (common_dir if common_dir.is_absolute() else git_dir / common_dir) / "objects"


def maintenance_due(objects: Path) -> bool:
    """Whether git's estimate may pass its default thresholds: more than `FANOUT_LIMIT` loose objects
    in `objects/17`, or more than `GC_AUTO_PACK_LIMIT_DEFAULT` packs not marked to keep."""
    return _loose_objects_above(objects / FANOUT_DIRECTORY, FANOUT_LIMIT) or (
        _unkept_packs(objects / "pack") > GC_AUTO_PACK_LIMIT_DEFAULT
    )


def _loose_objects_above(fanout: Path, limit: int) -> bool:
    found = 0
    try:
        with os.scandir(fanout) as entries:
            for entry in entries:
                if len(entry.name) in _LOOSE_NAME_LENGTHS and _HEX_DIGITS.issuperset(entry.name):
                    found += 1
                    if found > limit:
                        return True
    except OSError:
        return False
    return False


def _unkept_packs(pack_directory: Path) -> int:
    try:
        names = os.listdir(pack_directory)
    except OSError:
        return 0
    kept = {name.removesuffix(".keep") for name in names if name.endswith(".keep")}
    return sum(1 for name in names if name.endswith(".pack") and name.removesuffix(".pack") not in kept)


def start_maintenance_if_due(root: Path, git_dir: Path) -> bool:
    """Run git's automatic maintenance when its thresholds may be passed; True when git was asked.

    Git decides and, by default, packs in the background; this waits only for that decision (or for
    the whole maintenance, where `gc.autoDetach` is off, as `git commit` would)."""
    if not maintenance_due(objects_directory(git_dir)):
        return False
    # Nothing to report either way: the commit has landed, and git keeps its own log of a failed gc.
    return run_git_unattached(root, MAINTENANCE_COMMAND)
