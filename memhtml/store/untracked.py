"""The untracked files of a large store's buckets, asking git again only about what may have changed.

`git ls-files --others` reads every directory of the buckets, beside a `git status` that needs the same
cores, so in a large store it is a sizeable share of an `index update`. A directory
gains or loses a name only by changing its own modification time, so a memo beside the index
(`.memhtml/index.duckdb.untracked`, ignored by every store as `.memhtml/index.duckdb.*`) keeps each
directory's stat as it was before the last walk, and what that walk found; the next walk asks git
about the directories whose stat changed and about the suspect paths below, nothing else.

A changed directory whose names are all ones HEAD holds there (or known subdirectories) holds no
untracked file, and git is not asked about it: the first time, HEAD's names there are read and compared
with the directory's listing; afterwards a tally of its names, give or take the names the commits since
added and removed there, is enough (`_answered_by_listing`).

Git decides every other answer. What can change a file's answer without changing its directory is asked
again:
- its place in git's index: a path listed untracked last time, one whose entry `git status` shows
  as differing from HEAD's (added, deleted, intent-to-add or unmerged; at the last walk or now), or
  one a commit since the last walk's HEAD removed (deleted, or the source of a rename);
- the ignore rules: a `.gitignore` of any directory, `.git/info/exclude`, the configuration files, the
  global ignore file, and the variables that point git elsewhere; any change walks everything.

A directory whose modification or change time falls within `RACY_NANOSECONDS` of the walk is walked
again the next time too (a second change in the same clock tick would leave its time as it was). Whether a
changed directory gained or lost subdirectories is told by its link count where the file system counts
them (ext4, xfs, tmpfs), else by reading it.

A directory holding a `.git` is followed like any other: git enters it or lists it as one entry
depending on git's index and on whether the `.git` is a repository, which can change while the
directory does not, so a path asked about is asked with each such directory above it, and a path that
left git's index is asked about while such a directory lies above it, even once the file is gone from the
disk (with no entry of the index below it, git lists that directory as one entry). A bucket that
is not a directory is always asked about. A sparse checkout, whose `.gitignore` files git may read
from its index, walks everything each time.

Not followed: a configuration file pulled in by `include.path`, or a system configuration file other
than `/etc/gitconfig`; a change there to `core.excludesFile` is seen once the directory of a file it
un-ignores changes. Nor a `.gitignore` that is marked skip-worktree outside a sparse checkout.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple

from memhtml.contracts.errors import GitFailure
from memhtml.store.gitcmd import run_git, variables_git_sees

MEMO_NAME: Final[str] = "index.duckdb.untracked"
_MEMO_VERSION: Final[int] = 3
RACY_NANOSECONDS: Final[int] = 2_000_000_000
# Past this many paths to ask about one by one, or this many bytes of them, one walk of everything
# costs less (and a command line has room for them: Linux allows 2 MiB of arguments).
SUSPECTS_LIMIT: Final[int] = 2_000
PATHSPEC_BYTES_LIMIT: Final[int] = 256 * 1024

# inode, modification time, change time, link count, and whether the times are old enough to trust.
DirectoryStat = tuple[int, int, int, int, bool]
# A file's identity as the ignore rules depend on it: inode, size, times; () when it does not exist;
# None when it changed too recently to trust (never equal to what the next walk finds).
FileStat = tuple[int, ...] | None


class _Memo(NamedTuple):
    head: str | None
    config_variables: dict[str, str]
    excludes_file: str | None
    ignore_sources: dict[str, FileStat]
    directories: dict[str, DirectoryStat]
    untracked: list[str]
    index_only: list[str]  # paths whose place in git's index `git status` showed as differing from HEAD
    # The directories whose every name was, at the walk, one HEAD holds there or a known subdirectory,
    # with the tally of their names (`_answered_by_listing`).
    clean_tallies: dict[str, list[int]]


class _Plan:
    """The directories as they are now, and what git is asked: everything, or the changed directories
    and the suspect paths outside them."""

    def __init__(self, *, everything: bool, started: int, config_variables: dict[str, str] | None = None) -> None:
        self.everything = everything
        self.started = started
        self.config_variables: dict[str, str] = config_variables or {}
        self.excludes_file: str | None = None
        self.ignore_sources: dict[str, FileStat] = {}
        self.directories: dict[str, DirectoryStat] = {}
        self.changed: list[str] = []
        self._changed: frozenset[str] = frozenset()
        self._changed_from: list[str] | None = None
        self.suspects: set[str] = set()
        # Changed directories told by their listing to hold no untracked file (`_answered_by_listing`).
        self.listed: set[str] = set()
        self.clean_tallies: dict[str, list[int]] = {}

    def covers(self, path: str) -> bool:
        """Whether git's walk of this plan answers for `path`."""
        if self.everything or path in self.suspects:
            return True
        if self._changed_from is not self.changed:  # `changed` is replaced, never edited, once planned
            self._changed, self._changed_from = frozenset(self.changed), self.changed
        return any(directory in self._changed for directory in _ancestors(path))

    def pathspecs(self, root: Path) -> list[str]:
        """What git is asked: the changed directories and the suspects, each with every directory above it
        that holds a `.git` (git may list that directory in its place, and asked below it alone, answers
        as if it were no repository: it did not list an untracked file in a changed directory there)."""
        asked: set[str] = set()
        holds_git = _Listable(root).git_inside
        for path in [*(f"{directory}/" for directory in self.changed), *self.suspects]:
            asked.add(path)
            asked.update(f"{directory}/" for directory in _ancestors(path) if holds_git(directory))
        return sorted(asked)


class UntrackedWalk:
    """The untracked files under `buckets` (what `git ls-files --others --exclude-standard` lists), found
    on a thread of its own from the moment it is made; `finish` completes them with the `git status
    --untracked-files=no` the caller ran meanwhile against `head`, and keeps the memo for the next walk."""

    def __init__(
        self,
        root: Path,
        buckets: Sequence[str],
        head: str | None,
        moved_between: Callable[[str, str], tuple[list[str], list[str]]],
    ) -> None:
        self._root = root
        self._buckets = tuple(buckets)
        self._head = head
        # The paths under the buckets one commit holds and a later one does not, and the reverse;
        # GitFailure when git cannot tell (a commit that is gone).
        self._moved_between = moved_between
        self._memo_file = root / ".memhtml" / MEMO_NAME
        # Without the store's directory, or with a `.git` that is not a directory, nothing is kept.
        self._keeps_memo = self._memo_file.parent.is_dir() and (root / ".git").is_dir()
        self._plan: _Plan | None = None
        self._found: list[str] = []
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._walk, name="memhtml-git-untracked", daemon=True)
        self._thread.start()

    def _walk(self) -> None:
        try:
            memo = _read_memo(self._memo_file) if self._keeps_memo else None
            plan = self._planned(memo)
            if not plan.everything and memo is not None:
                # The commits' changes first: the indexer waits for the same diff.
                moved = self._moved(memo.head) if memo.head not in (None, self._head) else ([], [])
                if moved is None:
                    plan.everything = True
                else:
                    self._narrowed(plan, memo, *moved)
            too_many = len(plan.suspects) + len(plan.changed) > SUSPECTS_LIMIT
            pathspecs = [] if plan.everything or too_many else plan.pathspecs(self._root)
            if too_many or _too_many(pathspecs):
                plan.everything = True
            self._plan = plan
            if plan.everything:
                self._found = _others(self._root, self._buckets)
            elif pathspecs:
                self._found = _others(self._root, pathspecs)
        except BaseException as error:  # raised again by `finish`, in the caller's thread
            self._failure = error

    def _narrowed(self, plan: _Plan, memo: _Memo, deleted: list[str], added: list[str]) -> None:
        """Leave to git's walk only the changed directories their listing cannot answer for, and ask
        about the suspects outside them: the memo's untracked and index-only paths, and the paths the
        commits since removed that git could list."""
        plan.listed = _answered_by_listing(self._root, self._head, memo, plan, deleted=deleted, added=added)
        plan.changed = _outermost(d for d in plan.changed if d not in plan.listed)
        plan.suspects.update(p for p in {*memo.untracked, *memo.index_only} if not plan.covers(p))
        listable = _Listable(self._root)
        plan.suspects.update(p for p in deleted if not plan.covers(p) and listable(p))

    def _moved(self, since: str) -> tuple[list[str], list[str]] | None:
        """The paths commits removed and added from `since` to the walk's HEAD; None when git cannot tell."""
        if self._head is None:
            return None
        try:
            return self._moved_between(since, self._head)
        except GitFailure:
            return None

    def _planned(self, memo: _Memo | None) -> _Plan:
        started = time.time_ns()
        if not self._keeps_memo or _sparse(self._root):
            return _Plan(everything=True, started=started)
        config_variables = _config_variables()
        if (
            memo is not None
            and memo.config_variables == config_variables
            and (memo.head is not None or self._head is None)
        ):
            sources = _ignore_sources(self._root, memo.directories, memo.excludes_file, started)
            if sources == memo.ignore_sources and None not in sources.values():
                plan = _Plan(everything=False, started=started, config_variables=config_variables)
                plan.excludes_file = memo.excludes_file
                _follow_directories(self._root, self._buckets, memo, plan)
                # A bucket that is a file or a link: git lists it, and no directory stat follows it.
                plan.suspects.update(b for b in self._buckets if _exists(self._root, b) and b not in plan.directories)
                # Stat'ed again for the directories as they are now; still before git reads any of them.
                plan.ignore_sources = _ignore_sources(self._root, plan.directories, plan.excludes_file, started)
                return plan
        plan = _Plan(everything=True, started=started, config_variables=config_variables)
        plan.excludes_file = _excludes_file(self._root)
        _discover_from_head(self._root, self._buckets, self._head, plan)
        plan.ignore_sources = _ignore_sources(self._root, plan.directories, plan.excludes_file, started)
        return plan

    def finish(self, tracked_status: bytes | None) -> list[str]:
        """The untracked paths, sorted; `tracked_status` is the output of the caller's `git status`
        (None when it failed: the walk is waited for and nothing is kept)."""
        self._thread.join()
        if self._failure is not None:
            raise self._failure
        plan = self._plan
        if tracked_status is None or plan is None:
            return []
        index_only = _index_only(tracked_status)
        found = set(self._found)
        # A path taken out of git's index (`git rm --cached`) in a directory that did not change.
        unstaged = _Plan(everything=False, started=plan.started)
        listable = _Listable(self._root)
        unstaged.suspects = {p for p in index_only if not plan.covers(p) and p not in found and listable(p)}
        # A listed directory where git's status shows a path of HEAD's missing is walked after all: a file
        # that became a directory, or the reverse, keeps its name, and shows as deleted.
        deleted = _deleted(tracked_status)
        if plan.listed:
            unstaged.changed = _outermost(_missing_in(plan.listed, deleted))
        if len(unstaged.suspects) + len(unstaged.changed) > SUSPECTS_LIMIT:
            found.update(_others(self._root, self._buckets))
        elif unstaged.suspects or unstaged.changed:
            pathspecs = unstaged.pathspecs(self._root)
            found.update(_others(self._root, self._buckets if _too_many(pathspecs) else pathspecs))
        untracked = sorted(found)
        if self._keeps_memo:
            _write_memo(
                self._memo_file,
                _Memo(
                    head=self._head,
                    config_variables=plan.config_variables,
                    excludes_file=plan.excludes_file,
                    ignore_sources=plan.ignore_sources,
                    directories=plan.directories,
                    untracked=untracked,
                    index_only=index_only,
                    clean_tallies=plan.clean_tallies,
                ),
            )
        return untracked


def _follow_directories(root: Path, buckets: Sequence[str], memo: _Memo, plan: _Plan) -> None:
    """Stat every directory the memo knows and every bucket; a changed one is walked, and its new
    subdirectories are found (by link count when it can tell, else by reading the directory)."""
    children: dict[str, list[str]] = {}
    for directory in memo.directories:
        parent, _, _ = directory.rpartition("/")
        if parent:
            children.setdefault(parent, []).append(directory)
    now: dict[str, os.stat_result | None] = {}
    for directory in [*memo.directories, *(b for b in buckets if b not in memo.directories)]:
        now[directory] = _directory_stat(root / directory)
    vanished: set[str] = set()
    for directory, found in now.items():
        if found is None:
            vanished.add(directory)
            continue
        before = memo.directories.get(directory)
        plan.directories[directory] = _directory_signature(found, plan.started)
        if before is not None and before[4] and before[:3] == (found.st_ino, found.st_mtime_ns, found.st_ctime_ns):
            continue
        plan.changed.append(directory)
        known = children.get(directory, [])
        if (
            before is not None
            and before[3] == found.st_nlink == len(known) + 2
            and all(now.get(child) is not None for child in known)
        ):
            continue  # the same subdirectories, each stat'ed above
        present = set(_subdirectories(root, directory))
        for child in present - set(known):
            _discover(root, child, plan)
            plan.changed.append(child)  # walked whole: the listing of its parent cannot answer for it
        vanished.update(child for child in known if child not in present)
    for directory in vanished:
        for gone in [directory, *_below(directory, memo.directories)]:
            plan.directories.pop(gone, None)
    plan.changed = sorted(d for d in plan.changed if d in plan.directories)


def _outermost(directories: Iterable[str]) -> list[str]:
    """`directories` without those inside another of them (a changed directory inside another is walked
    with it), sorted."""
    kept: set[str] = set()
    for directory in sorted(directories):
        if not any(ancestor in kept for ancestor in _ancestors(directory)):
            kept.add(directory)
    return sorted(kept)


def _answered_by_listing(
    root: Path, head: str | None, memo: _Memo, plan: _Plan, *, deleted: Sequence[str], added: Sequence[str]
) -> set[str]:
    """The changed directories that hold no untracked file of their own, told without git's walk, and
    `plan.clean_tallies` for the next walk.

    A directory is clean when every name in it is one HEAD's tree holds there or a subdirectory the memo
    knows (stat'ed on its own) with no `.git` in it; its names are tallied then (`_tally`: how many, and
    the sum of their CRC-32s). A directory the memo tallied clean is clean again when its names tally as
    then, give or take the names the commits since added and removed there, and no subdirectory it had
    vanished: a name that came or went otherwise (an untracked, ignored or staged file, a subdirectory, a
    file git's status does not look at) changes the tally. A name that changed kind keeps it: of HEAD's
    (a file that became a directory, or the reverse), `git status` shows a deleted path, and `finish`
    then walks the directory; a subdirectory that became a file or a link has vanished; a new
    subdirectory is walked whole. Otherwise HEAD's names there are read (`ls-tree`) and compared with
    the listing. A directory that held an untracked file at the last walk (it likely still does), or
    holds a name neither way explains, is left to git's walk. A name HEAD drops while it stays on disk
    keeps its tally: it is untracked then, asked about as a removed path and kept in the memo, which sends
    its directory to git's walk, or ignored, which the walk never lists.

    At 100k files, after a commit into a directory of 30k: git's walk read the whole git index and the
    directory (CPU taken from beside the update's `git status`); a tally lists the directory only."""
    moved_into: dict[str, list[int]] = {}
    for paths, sign in ((added, 1), (deleted, -1)):
        for path in paths:
            parent, _, name = path.rpartition("/")
            tally = moved_into.setdefault(parent, [0, 0])
            tally[0] += sign
            tally[1] += sign * zlib.crc32(os.fsencode(name))
    changed = set(plan.changed)
    # The tallies of the directories that did not change carry over.
    plan.clean_tallies = {
        directory: tally
        for directory, tally in memo.clean_tallies.items()
        if directory in plan.directories and directory not in changed
    }
    if head is None or not plan.changed:
        return set()
    holding_untracked = {_parent(path) for path in memo.untracked}
    known: dict[str, set[str]] = {}
    for subdirectory in memo.directories:
        known.setdefault(_parent(subdirectory), set()).add(subdirectory)
    answered: set[str] = set()
    to_compare: dict[str, list[bytes]] = {}
    for directory in plan.changed:
        if directory not in memo.directories or directory in holding_untracked:
            continue
        try:
            present = os.listdir(os.fsencode(root / directory))
        except OSError:
            continue
        now = _tally(present)
        before = memo.clean_tallies.get(directory)
        moved = moved_into.get(directory, [0, 0])
        # A subdirectory that vanished may have left its name to a file or a link: the tally cannot tell.
        if (
            before is not None
            and now == [before[0] + moved[0], before[1] + moved[1]]
            and all(child in plan.directories for child in known.get(directory, ()))
            and b".git" not in present
        ):
            answered.add(directory)
            plan.clean_tallies[directory] = now
        else:
            to_compare[directory] = present
    if not to_compare:
        return answered
    for directory in _named_in_head(root, head, to_compare, known):
        answered.add(directory)
        plan.clean_tallies[directory] = _tally(to_compare[directory])
    return answered


def _tally(names: list[bytes]) -> list[int]:
    """How many `names`, and the sum of their CRC-32s: a name that came and one that went change it unless
    their checksums are equal (one chance in 2**32)."""
    return [len(names), sum(map(zlib.crc32, names))]


def _named_in_head(root: Path, head: str, listings: dict[str, list[bytes]], known: dict[str, set[str]]) -> set[str]:
    """Those of the listed directories each of whose names HEAD holds there, or is a subdirectory among
    `known` with no `.git` in it."""
    prefixes = {directory: os.fsencode(f"{directory}/") for directory in listings}
    try:
        listed = run_git(
            root,
            ["--literal-pathspecs", "ls-tree", "-z", "--name-only", "--full-tree", head, "--"]
            + [f"{directory}/" for directory in listings],
        ).stdout
    except GitFailure:
        return set()
    names = [name for name in listed.split(b"\0") if name]
    in_head: dict[bytes, set[bytes]]
    if len(prefixes) == 1:  # every name starts with the one prefix: cut it, no search for the last slash
        (prefix,) = prefixes.values()
        in_head = {prefix: {name[len(prefix) :] for name in names}}
    else:
        in_head = {}
        for name in names:
            parent, _, leaf = name.rpartition(b"/")
            in_head.setdefault(parent + b"/", set()).add(leaf)
    return {
        directory
        for directory, present in listings.items()
        if _holds_only(
            root, prefixes[directory], present, in_head.get(prefixes[directory], set()), known.get(directory, set())
        )
    }


def _holds_only(root: Path, prefix: bytes, present: list[bytes], names: set[bytes], subdirectories: set[str]) -> bool:
    """Whether `present`, the names in the directory `prefix` (with its slash), are among `names`, or
    subdirectories among `subdirectories` with no `.git` in them."""
    base = os.fsencode(root) + b"/"
    for name in present:
        if name == b".git":
            return False
        if name in names:
            continue
        path = prefix + name
        if os.fsdecode(path) not in subdirectories:
            return False
        try:
            if not stat.S_ISDIR(os.lstat(base + path).st_mode):
                return False
        except OSError:
            return False
        if os.path.lexists(base + path + b"/.git"):
            return False
    return True


def _missing_in(directories: set[str], deleted: Iterable[str]) -> set[str]:
    """Those of `directories` with a deleted path in them or below them."""
    return {ancestor for path in deleted for ancestor in _ancestors(path) if ancestor in directories}


def _deleted(tracked_status: bytes) -> list[str]:
    """The paths a `git status --porcelain=v1 -z --no-renames` shows as deleted, on either side."""
    return [
        record[3:].decode("utf-8", "surrogateescape")
        for record in tracked_status.split(b"\0")
        if len(record) >= 4 and b"D" in record[:2]
    ]


def _parent(path: str) -> str:
    """The directory holding `path` (a trailing slash ignored); "" at the top."""
    return path.rstrip("/").rpartition("/")[0]


def _discover_from_head(root: Path, buckets: Sequence[str], head: str | None, plan: _Plan) -> None:
    """Stat every directory of the buckets: those HEAD holds are listed by git (reading every directory
    instead costs a large store dearly); a directory whose link count says it has others is read."""
    candidates = set(buckets)
    if head is not None:
        with contextlib.suppress(GitFailure):
            listed = run_git(root, ["ls-tree", "-r", "-d", "-z", "--name-only", head, "--", *buckets]).stdout
            candidates.update(name.decode("utf-8", "surrogateescape") for name in listed.split(b"\0") if name)
    found = {directory: _directory_stat(root / directory) for directory in candidates}
    children: dict[str, list[str]] = {}
    for directory in candidates:
        parent, _, _ = directory.rpartition("/")
        if parent and found[directory] is not None:
            children.setdefault(parent, []).append(directory)
    followed = {bucket for bucket in buckets if found[bucket] is not None}
    for directory in sorted(followed | candidates, key=lambda name: (name.count("/"), name)):
        stat_now = found[directory]
        if directory not in followed or stat_now is None:
            continue
        plan.directories[directory] = _directory_signature(stat_now, plan.started)
        known = children.get(directory, [])
        if stat_now.st_nlink == len(known) + 2:
            followed.update(known)
            continue
        for child in _subdirectories(root, directory):
            if child in known:
                followed.add(child)
            else:
                _discover(root, child, plan)


def _discover(root: Path, top: str, plan: _Plan) -> None:
    """Stat `top` and every directory below it, each before it is read, as new ones."""
    pending = [top]
    while pending:
        directory = pending.pop()
        found = _directory_stat(root / directory)
        if found is None:
            continue
        plan.directories[directory] = _directory_signature(found, plan.started)
        pending.extend(_subdirectories(root, directory))


def _subdirectories(root: Path, directory: str) -> list[str]:
    try:
        with os.scandir(root / directory) as entries:
            return [
                f"{directory}/{entry.name}"
                for entry in entries
                if entry.name != ".git" and entry.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []


def _ancestors(path: str) -> Iterator[str]:
    """The directories above `path`, nearest first (`a/b/c` gives `a/b`, then `a`)."""
    parent = _parent(path)
    while parent:
        yield parent
        parent = _parent(parent)


def _too_many(pathspecs: Sequence[str]) -> bool:
    """Whether asking about `pathspecs` one by one costs more than a walk of everything, or would not
    fit on a command line."""
    return len(pathspecs) > SUSPECTS_LIMIT or sum(len(spec) + 1 for spec in pathspecs) > PATHSPEC_BYTES_LIMIT


def _sparse(root: Path) -> bool:
    return (root / ".git" / "info" / "sparse-checkout").exists()


def _below(directory: str, directories: Iterable[str]) -> list[str]:
    prefix = directory + "/"
    return [d for d in directories if d.startswith(prefix)]


def _directory_stat(path: Path) -> os.stat_result | None:
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return found if stat.S_ISDIR(found.st_mode) else None


def _directory_signature(found: os.stat_result, started: int) -> DirectoryStat:
    trusted = max(found.st_mtime_ns, found.st_ctime_ns) < started - RACY_NANOSECONDS
    return (found.st_ino, found.st_mtime_ns, found.st_ctime_ns, found.st_nlink, trusted)


def _file_signature(path: Path, started: int) -> FileStat:
    try:
        found = os.stat(path)
    except OSError:
        return ()
    if max(found.st_mtime_ns, found.st_ctime_ns) >= started - RACY_NANOSECONDS:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def _ignore_sources(
    root: Path, directories: Iterable[str], excludes_file: str | None, started: int
) -> dict[str, FileStat]:
    """The stat of every file the ignore rules and the configuration are read from: each of
    `directories`' `.gitignore`, then the store-wide ones."""
    seen = variables_git_sees()
    home = Path(seen.get("HOME", "/"))
    config_home = Path(seen.get("XDG_CONFIG_HOME") or home / ".config")
    files = [root / directory / ".gitignore" for directory in directories]
    files += [
        root / ".gitignore",
        root / ".git" / "info" / "exclude",
        root / ".git" / "config",
        root / ".git" / "config.worktree",
        Path(seen.get("GIT_CONFIG_GLOBAL") or home / ".gitconfig"),
        config_home / "git" / "config",
        config_home / "git" / "ignore",
        Path(seen.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"),
    ]
    if excludes_file:
        files.append(Path(excludes_file))
    return {str(path): _file_signature(path, started) for path in files}


def _config_variables() -> dict[str, str]:
    """The variables that change which configuration and ignore files git reads."""
    return {
        name: value
        for name, value in variables_git_sees().items()
        if name.startswith("GIT_CONFIG") or name in ("HOME", "XDG_CONFIG_HOME")
    }


def _excludes_file(root: Path) -> str | None:
    completed = run_git(root, ["config", "--path", "--get", "core.excludesFile"], ok_statuses=(0, 1))
    value = completed.stdout.decode("utf-8", "surrogateescape").strip()
    return str(root / value) if value and not os.path.isabs(value) else (value or None)


def _others(root: Path, pathspecs: Sequence[str]) -> list[str]:
    """What `git ls-files --others --exclude-standard` lists under `pathspecs`, taken literally."""
    output = run_git(
        root, ["--literal-pathspecs", "ls-files", "--others", "--exclude-standard", "-z", "--", *pathspecs]
    ).stdout
    return [name.decode("utf-8", "surrogateescape") for name in output.split(b"\0") if name]


def _index_only(tracked_status: bytes) -> list[str]:
    """The paths whose place in git's index a `git status --porcelain=v1 -z --no-renames` shows as
    differing from HEAD's: added or deleted in its first column, intent-to-add (` A`), or unmerged."""
    return sorted(
        record[3:].decode("utf-8", "surrogateescape")
        for record in tracked_status.split(b"\0")
        if len(record) >= 4 and (record[:1] in (b"A", b"D", b"U") or record[1:2] in (b"A", b"U"))
    )


def _exists(root: Path, path: str) -> bool:
    return os.path.lexists(root / path)


class _Listable:
    """Whether git could list a path that left its index (or HEAD) as untracked: the file is still on
    disk, or a directory above it holds a `.git`, which git lists as one entry once no entry of its index
    lies below it (a removed file that is gone from the disk can still make its directory untracked)."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._holds_git: dict[str, bool] = {}

    def __call__(self, path: str) -> bool:
        return _exists(self._root, path) or any(self.git_inside(directory) for directory in _ancestors(path))

    def git_inside(self, directory: str) -> bool:
        found = self._holds_git.get(directory)
        if found is None:
            found = self._holds_git[directory] = os.path.lexists(self._root / directory / ".git")
        return found


def _read_memo(file: Path) -> _Memo | None:
    """The memo of the last walk; None when there is none or it cannot be read as one."""
    try:
        raw: Any = json.loads(file.read_bytes())
        if raw.get("version") != _MEMO_VERSION:
            return None
        return _Memo(
            head=raw["head"],
            config_variables=dict(raw["config_variables"]),
            excludes_file=raw["excludes_file"],
            ignore_sources={k: (tuple(v) if v is not None else None) for k, v in raw["ignore_sources"].items()},
            directories={k: (v[0], v[1], v[2], v[3], bool(v[4])) for k, v in raw["directories"].items()},
            untracked=list(raw["untracked"]),
            index_only=list(raw["index_only"]),
            clean_tallies={str(k): [int(v[0]), int(v[1])] for k, v in raw["clean_tallies"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _write_memo(file: Path, memo: _Memo) -> None:
    """Replace the memo whole; one that cannot be written is left out (the next walk walks everything)."""
    data = {"version": _MEMO_VERSION, **memo._asdict()}
    private = file.with_name(f"{file.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
    try:
        private.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        os.replace(private, file)
    except OSError:
        private.unlink(missing_ok=True)
