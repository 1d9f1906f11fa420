"""Running git: one sanitized child-process call, and the failure it raises.

Every git child gets a scrubbed environment (no inherited GIT_DIR/GIT_INDEX_FILE/... from a hook or
parent process, no prompts, no optional locks, C locale) unless the caller states a variable on purpose.
Messages never carry argv, paths of the host or git's own text beyond its exit status. The one
exception to the scrubbing is `caller_index_file`, which asks git where the index of the caller (a git
hook) is.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

from memhtml.contracts.errors import CorruptRepository, DamagedFile, GitFailure, MemhtmlError, NoSpace, ReadOnlyStore
from memhtml.store.lock import held_descriptors

# The id git gives "no object": the old value of a ref being created.
ZERO_SHA: Final[str] = "0" * 40
# An object id as a ref file holds it: SHA-1 (40 hex digits) or SHA-256 (64).
_OBJECT_ID: Final = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")

# Variables a hook or a parent git process can leak into us; they would redirect our git calls.
_LEAKY_GIT_VARIABLES: Final[tuple[str, ...]] = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_PREFIX",
    "GIT_CEILING_DIRECTORIES",
    "GIT_NAMESPACE",
)


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git child: the caller's, scrubbed of redirecting variables, plus `extra`."""
    env = {key: value for key, value in os.environ.items() if key not in _LEAKY_GIT_VARIABLES}
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    if extra:
        env.update(extra)
    return env


def variables_git_sees() -> dict[str, str]:
    """The variables a git child is given, for a caller that must know which configuration and ignore
    files git will read (the untracked walk's memo)."""
    return git_environment()


def run_git(
    root: Path,
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    ok_statuses: tuple[int, ...] = (0,),
) -> subprocess.CompletedProcess[bytes]:
    """Run `git -C root <args>`; raise GitFailure unless the exit status is in `ok_statuses`."""
    try:
        completed = subprocess.run(
            ["git", "-C", str(root), *args],
            input=stdin,
            capture_output=True,
            env=git_environment(env),
            check=False,
            pass_fds=held_descriptors(),
        )
    except OSError as error:  # git missing or not executable
        raise GitFailure(f"git {_subcommand(args)} could not start ({error.strerror})", ["install git"]) from error
    if completed.returncode not in ok_statuses:
        raise git_failure(root, args, completed.returncode, completed.stderr)
    return completed


def git_failure(root: Path, args: Sequence[str], status: int, stderr: bytes) -> MemhtmlError:
    """The failure a git call ended with, as the kind of failure it is: a full disk, a store that cannot
    be written and a git index that cannot be read are the same failures whoever meets them; anything
    else is a git failure, retryable when another process held a lock or moved a ref."""
    text = stderr.decode("utf-8", "replace")
    command = _subcommand(args)
    if _NO_SPACE.search(text):
        return NoSpace(
            f"git {command} failed: no space is left on the device holding the store; nothing was written",
            [f"df -h {root}", "retry the same command once space is freed"],
        )
    if _READ_ONLY.search(text):
        return ReadOnlyStore(
            f"git {command} failed: the store cannot be written (a read-only file system or missing permissions)",
            [f"ls -ld {root} {root}/.git", f"findmnt -T {root}"],
        )
    if _DAMAGED_INDEX.search(text):
        return DamagedFile(
            f"git {command} failed: git's index (.git/index) cannot be read; the memories themselves are safe",
            [f"memhtml doctor --fix --repo {root}"],
        )
    failure = GitFailure(f"git {command} failed (exit {status})" + _hint(stderr), [], retryable=_contended(stderr))
    failure.lock_held = ".lock" in text and "File exists" in text
    return failure


# What git prints when the device is full or the quota used up, when it may not write, and when its
# index file is not an index.
_NO_SPACE: Final = re.compile(r"No space left on device|Disk quota exceeded")
_READ_ONLY: Final = re.compile(r"Read-only file system|Permission denied|insufficient permission")
_DAMAGED_INDEX: Final = re.compile(
    r"index file smaller than expected|index file corrupt|bad index file|bad signature 0x|index file open failed"
)


def _subcommand(args: Sequence[str]) -> str:
    """The git command a call runs, past the global options before it (`-c name=value`, `--literal-pathspecs`)."""
    skip_value = False
    for argument in args:
        if skip_value:
            skip_value = False
        elif argument == "-c":
            skip_value = True
        elif not argument.startswith("-"):
            return argument
    return args[0] if args else "git"


def start_git(root: Path, args: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start `git -C root <args>` with pipes to its stdin and from its stdout, to be kept open by the
    caller (a `cat-file --batch`). No descriptor of ours is handed down: a long-lived child must never
    hold the store's write lock. Raises GitFailure when git cannot start."""
    try:
        return subprocess.Popen(
            ["git", "-C", str(root), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=git_environment(),
        )
    except OSError as error:
        raise GitFailure(f"git {args[0]} could not start ({error.strerror})", ["install git"]) from error


def run_git_unattached(root: Path, args: Sequence[str]) -> bool:
    """Run `git -C root <args>` to its end with no input, its output discarded and no descriptor of
    ours handed down, for work git may carry on in a process of its own (a `git gc` in the background
    must never hold the store's write lock). False when git could not start; its status is not asked."""
    try:
        subprocess.run(
            ["git", "-C", str(root), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=git_environment(),
            check=False,
        )
    except OSError:
        return False
    return True


def stream_to_git(root: Path, args: Sequence[str], chunks: Iterable[bytes]) -> None:
    """Run `git -C root <args>` feeding `chunks` to its stdin as they come, so a large input is never
    held in memory whole; raise GitFailure on a failing status. Its stdout is discarded."""
    import tempfile

    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(
                ["git", "-C", str(root), *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=errors,  # a file, not a pipe: a chatty failure can never block our writes
                env=git_environment(),
                pass_fds=held_descriptors(),
            )
        except OSError as error:
            raise GitFailure(f"git {args[0]} could not start ({error.strerror})", ["install git"]) from error
        assert process.stdin is not None
        try:
            for chunk in chunks:
                process.stdin.write(chunk)
            process.stdin.close()
        except BrokenPipeError:
            pass  # git stopped reading: its status says why
        status = process.wait()
        if status != 0:
            errors.seek(0)
            raise git_failure(root, args, status, errors.read())


def git_text(root: Path, args: Sequence[str], **kwargs: object) -> str:
    """stdout of a git call as text with the trailing newline removed."""
    completed = run_git(root, args, **kwargs)  # type: ignore[arg-type]
    return completed.stdout.decode("utf-8", "surrogateescape").rstrip("\n")


def rev_parse(root: Path, questions: Sequence[str]) -> list[str]:
    """`git rev-parse`'s answer to each of `questions`, in order. One process answers all of them, one
    a line; when a path holds a newline (a directory may be named so) the lines cannot be told apart, so
    each question is asked on its own and its answer is all of its output but the last newline."""
    lines = run_git(root, ["rev-parse", *questions]).stdout.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) == len(questions) + 1 and lines[-1] == "":
        return lines[:-1]
    return [
        run_git(root, ["rev-parse", question]).stdout.decode("utf-8", "surrogateescape").removesuffix("\n")
        for question in questions
    ]


def _contended(stderr: bytes) -> bool:
    """Another process held a lock or moved a ref: the same call can succeed a moment later."""
    text = stderr.decode("utf-8", "replace")
    return ".lock" in text or "cannot lock ref" in text or "but expected" in text


def _hint(stderr: bytes) -> str:
    """A short, host-free reason for the commonest git refusals."""
    text = stderr.decode("utf-8", "replace")
    if "Please tell me who you are" in text or "empty ident" in text:
        return ": no git identity is configured (set user.name and user.email)"
    if "index.lock" in text:
        return ": another git process holds the index lock"
    if "not a git repository" in text:
        return ": not a git repository"
    return ""


def caller_index_file(git_dir: Path) -> Path | None:
    """The index file the caller's git variables (GIT_INDEX_FILE, GIT_DIR, GIT_WORK_TREE, with the
    working directory) name, when they are about this repository; None otherwise, and the store's own
    index is read.

    This is the one git child started with the caller's variables as they are rather than the runner's
    scrubbed set: it only asks `rev-parse` where the caller's index is, and git answers with its own
    resolution of a relative value. A hook of another repository that runs `validate --repo <store>` hands us an
    index of that repository, which is recognized by its git directory and ignored."""
    try:
        completed = subprocess.run(
            ["git", "rev-parse", "--absolute-git-dir", "--git-path", "index"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except OSError:
        return None
    lines = completed.stdout.decode("utf-8", "surrogateescape").splitlines()
    if completed.returncode != 0 or len(lines) < 2 or Path(lines[0]).resolve() != git_dir:
        return None
    index = Path(lines[1])
    # `--git-path` answers relative to the directory it ran in: ours.
    return index if index.is_absolute() else Path.cwd() / index


def head_sha(root: Path) -> str | None:
    """The commit HEAD points at, or None on an unborn branch.

    Read from the ref files when `root` keeps them plainly, else asked of git: a command asks several
    times (a write four times besides opening the store), and each asks a `git` process to start.
    """
    found = head_from_ref_files(root / ".git")
    if found is not None:
        return found
    completed = run_git(root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"], ok_statuses=(0, 1))
    sha = completed.stdout.decode().strip()
    return sha or None


def head_from_ref_files(git_dir: Path) -> str | None:
    """HEAD's id when `git_dir` is a directory whose HEAD is detached at an id or names a branch that
    is a loose ref file or a line of `packed-refs`; None for anything else (a linked worktree's `.git`
    file, a symbolic branch, reftable, an unborn branch, a value that is not an id), which git answers.

    Git replaces a ref file and `packed-refs` by renaming a finished one into place, so a read sees the
    old value or the new one; a loose ref is looked for before `packed-refs`, as git does.
    """
    try:
        head = (git_dir / "HEAD").read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if _OBJECT_ID.fullmatch(head):
        return head
    if not head.startswith("ref: refs/heads/"):
        return None
    branch = head[len("ref: ") :]
    if any(segment in ("", ".", "..") for segment in branch.split("/")):
        return None
    value: str | None
    try:
        value = (git_dir / branch).read_text("ascii").strip()
    except FileNotFoundError:
        value = _packed_ref(git_dir, branch)
    except (OSError, UnicodeDecodeError):
        return None
    return value if value is not None and _OBJECT_ID.fullmatch(value) else None


def detached_head(git_dir: Path) -> str | None:
    """The commit HEAD names when it names no branch (a detached HEAD), else None (also when HEAD
    cannot be read here: git answers for a HEAD it keeps elsewhere)."""
    try:
        head = (git_dir / "HEAD").read_text("utf-8", "replace").strip()
    except OSError:
        return None
    return None if head.startswith("ref: ") else head


def _packed_ref(git_dir: Path, ref: str) -> str | None:
    try:
        lines = (git_dir / "packed-refs").read_text("ascii").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    suffix = " " + ref
    return next((line[: -len(suffix)] for line in lines if line.endswith(suffix) and not line.startswith("#")), None)


def blob_id(data: bytes) -> str:
    """The git object id of a blob holding `data`: sha1 of the `blob <size>` header and the bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def missing_object(root: Path, what: str) -> CorruptRepository:
    """The refusal to write on top of a repository that lacks an object the write needs."""
    return CorruptRepository(
        f"the repository is corrupt: {what} cannot be read (its object is missing or damaged); nothing was written",
        [f"git -C {root} fsck --full", "restore the missing objects from a clone or a backup of this store"],
    )
