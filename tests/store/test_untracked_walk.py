"""The memo'd untracked walk answers exactly what `git ls-files --others --exclude-standard` does, after
any sequence of changes to files, directories, git's index, HEAD and the ignore rules, while asking git
only about what changed."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memhtml.store import untracked
from memhtml.store.gitcmd import head_sha
from memhtml.store.gitread import TreeDiffs
from memhtml.store.untracked import MEMO_NAME, UntrackedWalk
from tests.conftest import git

BUCKETS = ("projects", "areas", "resources", "archive")
# Longer than one tick of the kernel's file clock, so two steps never leave one directory time.
TICK = 0.02


def make_repository(root: Path) -> None:
    root.mkdir()
    git(root, "init", "-q")
    (root / ".memhtml").mkdir()
    (root / ".gitignore").write_text(".memhtml/\n", encoding="utf-8")
    for directory in ("projects/alpha", "projects/alpha/deep", "areas/inbox", "resources"):
        (root / directory).mkdir(parents=True)
        (root / directory / "kept.html").write_text(f"{directory}\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")


def truth(root: Path) -> list[str]:
    output = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z", "--", *BUCKETS],
        capture_output=True,
        check=True,
    ).stdout
    return sorted(name.decode() for name in output.split(b"\0") if name)


def walked(root: Path) -> tuple[list[str], bool]:
    """The walk's answer, and whether it asked git about everything."""
    walk = UntrackedWalk(root, BUCKETS, head_sha(root), TreeDiffs(root).paths_moved)
    status = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=no",
            "--no-renames",
            "--",
            *BUCKETS,
        ],
        capture_output=True,
        check=True,
    ).stdout
    answer = walk.finish(status)
    assert walk._plan is not None
    return answer, walk._plan.everything


def questions_to_git(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The pathspecs of every `git ls-files --others` the walk runs from now on, in order."""
    calls: list[list[str]] = []
    real = untracked._others

    def counted(where: Path, pathspecs: list[str]) -> list[str]:
        calls.append(list(pathspecs))
        return real(where, pathspecs)

    monkeypatch.setattr(untracked, "_others", counted)
    return calls


def files_on_disk(root: Path) -> list[str]:
    return sorted(
        str(path.relative_to(root))
        for bucket in BUCKETS
        if (root / bucket).is_dir()
        for path in (root / bucket).rglob("*")
        if path.is_file()
    )


def directories_on_disk(root: Path) -> list[str]:
    return sorted(
        str(path.relative_to(root))
        for bucket in BUCKETS
        if (root / bucket).is_dir()
        for path in [root / bucket, *(root / bucket).rglob("*")]
        if path.is_dir() and ".git" not in path.parts[len(root.parts) :]
    )


def attempt(root: Path, *args: str) -> None:
    """A git command that may be refused (staging a repository with no commit, for one)."""
    subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)


def tracked(root: Path) -> list[str]:
    return [line for line in git(root, "ls-files", "--", *BUCKETS).splitlines() if line]


def steps(root: Path, chance: random.Random) -> list[Callable[[], object]]:
    def new_file() -> None:
        directory = chance.choice(directories_on_disk(root) or ["areas"])
        (root / directory).mkdir(parents=True, exist_ok=True)
        (root / directory / f"f{chance.randrange(10**6)}.{chance.choice(['html', 'txt'])}").write_text("new\n")

    def new_directory() -> None:
        parent = chance.choice(directories_on_disk(root) or ["areas"])
        made = root / parent / f"d{chance.randrange(10**6)}" / chance.choice(["", "inner"])
        made.mkdir(parents=True, exist_ok=True)
        (made / "fresh.html").write_text("fresh\n")

    def stage_one() -> None:
        candidates = truth(root)
        if candidates:
            attempt(root, "add", "--", chance.choice(candidates))

    def commit() -> None:
        git(root, "commit", "-qm", "step", "--allow-empty")

    def stage_and_commit_all() -> None:
        attempt(root, "add", "-A", "--", *[b for b in BUCKETS if (root / b).exists()])
        git(root, "commit", "-qm", "all", "--allow-empty")

    def unstage_one() -> None:
        candidates = tracked(root)
        if candidates:
            git(root, "rm", "-q", "-f", "--cached", "--", chance.choice(candidates))

    def unstage_and_commit() -> None:
        unstage_one()
        commit()

    def delete_file() -> None:
        candidates = files_on_disk(root)
        if candidates:
            (root / chance.choice(candidates)).unlink()

    def move_directory() -> None:
        candidates = [d for d in directories_on_disk(root) if "/" in d]
        if candidates:
            source = root / chance.choice(candidates)
            source.rename(source.with_name(f"m{chance.randrange(10**6)}"))

    def remove_directory() -> None:
        candidates = [d for d in directories_on_disk(root) if "/" in d]
        if candidates:
            shutil.rmtree(root / chance.choice(candidates))

    def ignore_something() -> None:
        directory = chance.choice(["", *directories_on_disk(root)])
        rules = root / directory / ".gitignore"
        with rules.open("a", encoding="utf-8") as handle:
            handle.write(chance.choice(["*.txt\n", "f*\n", "inner/\n", "!f*.html\n"]))

    def unignore_everything() -> None:
        for rules in [root / ".gitignore", *(root / d / ".gitignore" for d in directories_on_disk(root))]:
            if rules.exists():
                rules.write_text(".memhtml/\n" if rules.parent == root else "", encoding="utf-8")

    def exclude_locally() -> None:
        with (root / ".git" / "info" / "exclude").open("a", encoding="utf-8") as handle:
            handle.write(chance.choice(["*.html\n", "deep/\n", "# nothing\n"]))

    def undo_last_commit() -> None:
        if int(git(root, "rev-list", "--count", "HEAD")) > 1:
            git(root, "reset", "-q", "--soft", "HEAD~1")

    def hard_reset() -> None:
        git(root, "reset", "-q", "--hard")

    def make_repository_inside() -> None:
        candidates = [d for d in directories_on_disk(root) if "/" in d]
        if candidates:
            git(root / chance.choice(candidates), "init", "-q")

    def remove_inner_repository() -> None:
        inner = sorted(root.glob("*/**/.git"))
        if inner:
            shutil.rmtree(chance.choice(inner))

    def intend_to_add() -> None:
        candidates = truth(root)
        if candidates and not candidates[0].endswith("/"):
            attempt(root, "add", "-N", "--", candidates[0])

    return [
        new_file,
        new_file,
        new_directory,
        stage_one,
        commit,
        stage_and_commit_all,
        unstage_one,
        unstage_and_commit,
        delete_file,
        move_directory,
        remove_directory,
        ignore_something,
        unignore_everything,
        exclude_locally,
        undo_last_commit,
        hard_reset,
        make_repository_inside,
        remove_inner_repository,
        intend_to_add,
    ]


@pytest.mark.parametrize("seed", range(6))
def test_any_sequence_of_changes_is_answered_as_git_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    # Every directory stat is trusted at once; the steps are a clock tick apart instead.
    monkeypatch.setattr(untracked, "RACY_NANOSECONDS", 0)
    root = tmp_path / "store"
    make_repository(root)
    chance = random.Random(seed)
    actions = steps(root, chance)
    partial = 0
    for number in range(40):
        action = chance.choice(actions)
        action()
        time.sleep(TICK)
        answer, everything = walked(root)
        assert answer == truth(root), f"step {number}: {action.__name__}"
        partial += not everything
        time.sleep(TICK)
    # The memo was used: most walks asked git about part of the tree only.
    assert partial >= 15


def test_a_walk_with_no_change_asks_git_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(untracked, "RACY_NANOSECONDS", 0)
    root = tmp_path / "store"
    make_repository(root)
    (root / "areas" / "inbox" / "loose.html").write_text("loose\n")
    time.sleep(TICK)
    assert walked(root) == (["areas/inbox/loose.html"], True)
    calls = questions_to_git(monkeypatch)
    # The untracked file is asked about again (it could have been staged); nothing else is walked.
    assert walked(root) == (["areas/inbox/loose.html"], False)
    assert calls == [["areas/inbox/loose.html"]]
    (root / "areas" / "inbox" / "loose.html").unlink()
    time.sleep(TICK)
    calls.clear()
    assert walked(root) == ([], False)
    assert calls == [["areas/inbox/"]]
    time.sleep(TICK)
    calls.clear()
    assert walked(root) == ([], False)
    assert calls == []


def names_read_from_head(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The directories whose names the walk reads from HEAD's tree (`ls-tree`) from now on, in order."""
    calls: list[list[str]] = []
    real = untracked._named_in_head

    def counted(root: Path, head: str, listings: dict[str, list[bytes]], known: dict[str, set[str]]) -> set[str]:
        calls.append(sorted(listings))
        return real(root, head, listings, known)

    monkeypatch.setattr(untracked, "_named_in_head", counted)
    return calls


def commit_new(root: Path, path: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(f"{path}\n", encoding="utf-8")
    git(root, "add", "--", path)
    git(root, "commit", "-qm", f"add {path}")


def tallied_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *paths: str) -> Path:
    """A store where each of `paths` was committed and walked in turn: after two commits into a directory,
    it was compared with HEAD's names and then tallied clean."""
    root = fresh_repository(tmp_path, monkeypatch)
    for path in paths:
        commit_new(root, path)
        assert settled(root)[0] == truth(root)
    return root


def test_a_commit_into_a_clean_directory_is_answered_by_its_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fresh_repository(tmp_path, monkeypatch)
    walks = questions_to_git(monkeypatch)
    reads = names_read_from_head(monkeypatch)
    # The first time, HEAD's names are read and compared with the directory's; git walks nothing.
    commit_new(root, "areas/inbox/first.html")
    assert settled(root) == (truth(root), False) == ([], False)
    assert (walks, reads) == ([], [["areas/inbox"]])
    # Then the directory is known clean: its tally, give or take the commits' names, is enough.
    reads.clear()
    commit_new(root, "areas/inbox/second.html")
    git(root, "mv", "areas/inbox/first.html", "areas/inbox/renamed.html")
    git(root, "commit", "-qm", "rename")
    assert settled(root) == (truth(root), False) == ([], False)
    assert (walks, reads) == ([], [])
    # A name the commits do not explain sends the directory to git's walk.
    commit_new(root, "areas/inbox/third.html")
    (root / "areas" / "inbox" / "loose.html").write_text("loose\n")
    assert settled(root) == (truth(root), False) == (["areas/inbox/loose.html"], False)
    assert walks == [["areas/inbox/"]]


@pytest.mark.parametrize("flip", ["file becomes a directory", "directory becomes a file"])
def test_a_name_that_changed_kind_in_a_clean_directory_is_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flip: str
) -> None:
    root = tallied_clean(tmp_path, monkeypatch, "projects/alpha/first.html", "projects/alpha/second.html")
    if flip == "file becomes a directory":
        (root / "projects" / "alpha" / "second.html").unlink()
        (root / "projects" / "alpha" / "second.html").mkdir()
        (root / "projects" / "alpha" / "second.html" / "inside.html").write_text("inside\n")
        expected = ["projects/alpha/second.html/inside.html"]
    else:
        shutil.rmtree(root / "projects" / "alpha" / "deep")
        (root / "projects" / "alpha" / "deep").write_text("a file now\n")
        expected = ["projects/alpha/deep"]
    commit_new(root, "areas/inbox/elsewhere.html")
    assert settled(root) == (truth(root), False)
    assert truth(root) == expected


@pytest.mark.parametrize("ignored", [False, True])
def test_a_file_that_left_head_but_stayed_then_swapped_for_an_untracked_one_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ignored: bool
) -> None:
    # HEAD drops a name that stays on disk (untracked then, or ignored and never listed): the name goes
    # from the disk later, and an untracked file comes.
    root = tmp_path / "store"
    make_repository(root)
    name = "scratch.tmp" if ignored else "first.html"
    (root / ".gitignore").write_text(".memhtml/\n*.tmp\n", encoding="utf-8")
    (root / "areas" / "inbox" / name).write_text("kept\n")
    git(root, "add", "-f", "--", ".gitignore", f"areas/inbox/{name}")
    git(root, "commit", "-qm", "a file that will leave HEAD")
    monkeypatch.setattr(untracked, "RACY_NANOSECONDS", 0)
    assert settled(root)[0] == truth(root)
    commit_new(root, "areas/inbox/second.html")
    assert settled(root)[0] == truth(root)  # tallied clean
    git(root, "rm", "-q", "--cached", f"areas/inbox/{name}")
    git(root, "commit", "-qm", "stop tracking it")
    assert settled(root) == (truth(root), False) == ([] if ignored else [f"areas/inbox/{name}"], False)
    (root / "areas" / "inbox" / name).unlink()
    (root / "areas" / "inbox" / "swapped.html").write_text("swapped\n")
    assert settled(root) == (truth(root), False) == (["areas/inbox/swapped.html"], False)


@pytest.mark.parametrize("replacement", ["a file beside it", "a link of its name"])
def test_a_vanished_subdirectory_of_a_clean_directory_is_found_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replacement: str
) -> None:
    # A link of the subdirectory's name leaves the names and their tally as they were, and git's status
    # shows nothing deleted: only the subdirectory's absence tells.
    root = tallied_clean(tmp_path, monkeypatch)
    (root / "areas" / "inbox" / "empty").mkdir()
    assert settled(root)[0] == truth(root)
    commit_new(root, "areas/inbox/first.html")
    assert settled(root)[0] == truth(root)
    commit_new(root, "areas/inbox/second.html")
    assert settled(root)[0] == truth(root)  # tallied clean, the empty subdirectory among its names
    (root / "areas" / "inbox" / "empty").rmdir()
    if replacement == "a link of its name":
        (root / "areas" / "inbox" / "empty").symlink_to("first.html")
        expected = ["areas/inbox/empty"]
    else:
        (root / "areas" / "inbox" / "swapped.html").write_text("swapped\n")
        expected = ["areas/inbox/swapped.html"]
    assert settled(root) == (truth(root), False) == (expected, False)


def test_a_new_directory_whose_name_head_holds_is_walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its parent's names are all HEAD's, but what the new directory holds besides is no listing's to tell.
    root = fresh_repository(tmp_path, monkeypatch)
    commit_new(root, "areas/inbox/first.html")
    assert settled(root)[0] == truth(root)
    (root / "areas" / "inbox" / "new").mkdir()
    (root / "areas" / "inbox" / "new" / "loose.html").write_text("loose\n")
    commit_new(root, "areas/inbox/new/tracked.html")
    assert settled(root) == (truth(root), False) == (["areas/inbox/new/loose.html"], False)
    assert settled(root) == (truth(root), False)


def test_a_directory_that_became_a_submodule_beside_an_untracked_file_is_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The commit adds the name `m` (a submodule) that the directory already held (a directory): the
    # tally, not the count of names alone, tells that the untracked file is no committed one.
    root = tallied_clean(tmp_path, monkeypatch, "areas/inbox/m/y.html", "areas/inbox/b.html")
    inner = root / "areas" / "inbox" / "m"
    git(inner, "init", "-q")
    git(inner, "add", "-A")
    git(inner, "commit", "-qm", "inside")
    git(root, "rm", "-r", "-q", "--cached", "areas/inbox/m")
    git(root, "add", "areas/inbox/m")
    git(root, "commit", "-qm", "a submodule now")
    (root / "areas" / "inbox" / "loose.html").write_text("loose\n")
    assert settled(root) == (truth(root), False) == (["areas/inbox/loose.html"], False)


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_a_file_git_status_does_not_look_at_swapped_for_an_untracked_one_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str
) -> None:
    # No status shows the tracked file gone: only the tally of the directory's names does.
    root = tallied_clean(tmp_path, monkeypatch, "areas/inbox/a.html", "areas/inbox/b.html", "areas/inbox/c.html")
    git(root, "update-index", flag, "areas/inbox/a.html")
    (root / "areas" / "inbox" / "a.html").unlink()
    (root / "areas" / "inbox" / "loose.html").write_text("loose\n")
    assert settled(root) == (truth(root), False) == (["areas/inbox/loose.html"], False)


def test_a_directory_changed_within_the_racy_window_is_walked_again(tmp_path: Path) -> None:
    root = tmp_path / "store"
    make_repository(root)  # every directory was written just now
    walked(root)
    memo = json.loads((root / ".memhtml" / MEMO_NAME).read_text(encoding="utf-8"))
    assert memo["directories"]["areas/inbox"][4] is False
    # A file made within the same tick as the last change leaves the directory's time as it was.
    (root / "areas" / "inbox" / "same-tick.html").write_text("x\n")
    answer, _ = walked(root)
    assert answer == truth(root) == ["areas/inbox/same-tick.html"]


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"version": 1}', b'{"version": 99}', b"[1, 2]"])
def test_a_memo_that_cannot_be_read_walks_everything(tmp_path: Path, damage: bytes) -> None:
    root = tmp_path / "store"
    make_repository(root)
    (root / "areas" / "inbox" / "loose.html").write_text("loose\n")
    (root / ".memhtml" / MEMO_NAME).write_bytes(damage)
    assert walked(root) == (["areas/inbox/loose.html"], True)
    assert json.loads((root / ".memhtml" / MEMO_NAME).read_text(encoding="utf-8"))["version"] == untracked._MEMO_VERSION


def test_without_the_stores_directory_nothing_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "store"
    make_repository(root)
    shutil.rmtree(root / ".memhtml")
    (root / "areas" / "inbox" / "loose.html").write_text("loose\n")
    assert walked(root) == (["areas/inbox/loose.html"], True)
    assert walked(root) == (["areas/inbox/loose.html"], True)
    assert not (root / ".memhtml").exists()


def test_a_changed_variable_walks_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(untracked, "RACY_NANOSECONDS", 0)
    root = tmp_path / "store"
    make_repository(root)
    time.sleep(TICK)
    walked(root)
    assert walked(root)[1] is False
    ignore_file = tmp_path / "global-ignore"
    ignore_file.write_text("kept.html\n")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.excludesFile")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(ignore_file))
    assert walked(root)[1] is True


@pytest.mark.parametrize("rules", [".gitignore", "areas/.gitignore", ".git/info/exclude"])
def test_a_rule_taken_back_lists_the_file_it_hid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rules: str) -> None:
    monkeypatch.setattr(untracked, "RACY_NANOSECONDS", 0)
    root = tmp_path / "store"
    make_repository(root)
    (root / rules).write_text(".memhtml/\n*.draft\n", encoding="utf-8")
    (root / "areas" / "inbox" / "hidden.draft").write_text("hidden\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "rules", "--allow-empty")
    time.sleep(TICK)
    assert walked(root)[0] == []
    time.sleep(TICK)
    # Only the rules change: no directory does.
    (root / rules).write_text(".memhtml/\n", encoding="utf-8")
    time.sleep(TICK)
    assert walked(root)[0] == truth(root) == ["areas/inbox/hidden.draft"]


def test_a_nested_repository_is_listed_as_git_lists_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(untracked, "RACY_NANOSECONDS", 0)
    root = tmp_path / "store"
    make_repository(root)
    nested = root / "projects" / "alpha" / "vendored"
    nested.mkdir()
    git(nested, "init", "-q")
    (nested / "inside.html").write_text("inside\n")
    time.sleep(TICK)
    assert walked(root)[0] == truth(root) == ["projects/alpha/vendored/"]
    time.sleep(TICK)
    (nested / "more.html").write_text("more\n")
    time.sleep(TICK)
    assert walked(root) == (truth(root), False)
    time.sleep(TICK)
    shutil.rmtree(nested / ".git")
    time.sleep(TICK)
    assert (
        walked(root)[0] == truth(root) == ["projects/alpha/vendored/inside.html", "projects/alpha/vendored/more.html"]
    )


def fresh_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(untracked, "RACY_NANOSECONDS", 0)
    root = tmp_path / "store"
    make_repository(root)
    time.sleep(TICK)
    assert walked(root)[0] == truth(root)
    return root


def settled(root: Path) -> tuple[list[str], bool]:
    time.sleep(TICK)
    answer = walked(root)
    time.sleep(TICK)
    return answer


def test_a_repository_made_inside_a_tracked_directory_is_still_entered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Git enters a directory with a `.git` while its index holds paths below it.
    root = fresh_repository(tmp_path, monkeypatch)
    git(root / "projects" / "alpha", "init", "-q")
    settled(root)
    (root / "projects" / "alpha" / "deep" / "new.html").write_text("new\n")
    assert settled(root) == (truth(root), False)
    assert truth(root) == ["projects/alpha/deep/new.html"]
    # Out of git's index, the directory is a repository of its own: git lists it as one entry.
    git(root, "rm", "-r", "-q", "--cached", "projects/alpha")
    assert settled(root)[0] == truth(root) == ["projects/alpha/"]


@pytest.mark.parametrize("inner", ["fresh.html", "new/fresh.html"])
def test_a_new_file_in_an_untracked_directory_below_an_entered_repository_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inner: str
) -> None:
    # Git enters `projects/alpha` (its index holds paths below it) but, asked about a directory below it
    # that holds no tracked path, alone, treats `projects/alpha` as a repository of its own and lists
    # nothing there.
    root = fresh_repository(tmp_path, monkeypatch)
    git(root / "projects" / "alpha", "init", "-q")
    (root / "projects" / "alpha" / "empty").mkdir()
    assert settled(root)[0] == truth(root) == []
    target = root / "projects" / "alpha" / "empty" / inner
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("new\n")
    answer, everything = settled(root)
    assert (answer, everything) == (truth(root), False)
    assert truth(root) == [f"projects/alpha/empty/{inner}"]


@pytest.mark.parametrize("committed", [False, True])
def test_a_repository_whose_last_tracked_file_left_the_index_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, committed: bool
) -> None:
    # The tracked file is gone from the disk first, so its removal from git's index (staged, or
    # committed too) changes no directory the walk stats: only the `.git` above it tells.
    root = fresh_repository(tmp_path, monkeypatch)
    (root / "areas" / "inbox" / "kept.html").unlink()
    git(root / "areas" / "inbox", "init", "-q")
    assert settled(root)[0] == truth(root) == []
    git(root, "rm", "-q", "--cached", "areas/inbox/kept.html")
    if committed:
        git(root, "commit", "-qm", "the last file below the repository leaves")
    answer, everything = settled(root)
    assert (answer, everything) == (truth(root), False)
    assert truth(root) == ["areas/inbox/"]


def test_a_git_directory_that_is_no_repository_is_entered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fresh_repository(tmp_path, monkeypatch)
    (root / "areas" / "inbox" / "sub" / ".git").mkdir(parents=True)
    settled(root)
    (root / "areas" / "inbox" / "sub" / "child").mkdir()
    settled(root)
    (root / "areas" / "inbox" / "sub" / "child" / "b.html").write_text("b\n")
    assert settled(root)[0] == truth(root) == ["areas/inbox/sub/child/b.html"]


def test_an_intent_to_add_taken_back_is_untracked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fresh_repository(tmp_path, monkeypatch)
    (root / "areas" / "inbox" / "ita.html").write_text("x\n")
    settled(root)
    git(root, "add", "-N", "areas/inbox/ita.html")  # `git status` shows ` A`
    assert settled(root)[0] == truth(root) == []
    git(root, "rm", "-q", "--cached", "areas/inbox/ita.html")
    assert settled(root)[0] == truth(root) == ["areas/inbox/ita.html"]


def test_a_conflict_reset_leaves_the_other_side_untracked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fresh_repository(tmp_path, monkeypatch)
    base = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(root, "switch", "-q", "-c", "other")
    git(root, "mv", "areas/inbox/kept.html", "areas/inbox/theirs.html")
    git(root, "commit", "-qm", "one way")
    git(root, "switch", "-q", base)
    git(root, "mv", "areas/inbox/kept.html", "areas/inbox/ours.html")
    git(root, "commit", "-qm", "the other way")
    settled(root)
    subprocess.run(["git", "-C", str(root), "merge", "other"], capture_output=True, check=False)  # conflicts
    assert settled(root)[0] == truth(root)
    git(root, "reset", "-q")  # the index back to HEAD; the other side's file stays on disk
    assert settled(root)[0] == truth(root) == ["areas/inbox/theirs.html"]


def test_a_bucket_that_is_no_directory_is_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fresh_repository(tmp_path, monkeypatch)
    (root / "archive").write_text("a file named like a bucket\n")
    assert settled(root)[0] == truth(root) == ["archive"]
    (root / "archive").unlink()
    (root / "archive").symlink_to("areas")
    assert settled(root)[0] == truth(root) == ["archive"]


def test_a_rule_taken_back_in_the_worktree_configuration_lists_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fresh_repository(tmp_path, monkeypatch)
    rules = tmp_path / "ignore"
    rules.write_text("*.txt\n")
    git(root, "config", "extensions.worktreeConfig", "true")
    git(root, "config", "--worktree", "core.excludesFile", str(rules))
    (root / "areas" / "inbox" / "note.txt").write_text("n\n")
    assert settled(root)[0] == truth(root) == []
    git(root, "config", "--worktree", "--unset", "core.excludesFile")
    assert settled(root)[0] == truth(root) == ["areas/inbox/note.txt"]


def test_too_many_paths_to_ask_about_walk_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fresh_repository(tmp_path, monkeypatch)
    monkeypatch.setattr(untracked, "SUSPECTS_LIMIT", 3)
    for number in range(6):
        (root / "resources" / f"r{number}.html").write_text(f"{number}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "six")
    settled(root)
    git(root, "rm", "-r", "-q", "--cached", "resources")  # seven paths leave git's index at once
    calls = questions_to_git(monkeypatch)
    assert settled(root)[0] == truth(root)
    assert len(truth(root)) == 7
    assert list(BUCKETS) in calls  # asked as one walk, not path by path


def test_a_sparse_checkout_walks_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fresh_repository(tmp_path, monkeypatch)
    git(root, "sparse-checkout", "set", "--no-cone", "/*")
    assert settled(root)[1] is True
    assert settled(root)[1] is True


def test_the_source_of_a_committed_rename_left_on_disk_is_untracked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git's diff shows the move as a rename (the same bytes under a new path in another directory);
    the source's directory never changed, so only the removed paths since the last walk tell."""
    root = fresh_repository(tmp_path, monkeypatch)
    source = root / "projects" / "alpha" / "deep" / "kept.html"
    git(root, "rm", "-q", "--cached", "projects/alpha/deep/kept.html")
    (root / "resources" / "moved.html").write_bytes(source.read_bytes())
    git(root, "add", "resources/moved.html")
    git(root, "commit", "-qm", "moved, the old copy kept")
    renamed = git(root, "diff", "--raw", "-M", "HEAD~1", "HEAD")
    assert " R100\t" in renamed
    answer, everything = settled(root)
    assert not everything
    assert answer == truth(root) == ["projects/alpha/deep/kept.html"]
