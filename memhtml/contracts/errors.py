"""Typed failures and the closed list of error codes every door reports.

Each failure class carries its envelope code, whether retrying the same call can succeed, and
runnable suggestions. The CLI maps classes to codes and exit statuses in one place.
"""

from __future__ import annotations

import errno
from collections.abc import Mapping
from typing import ClassVar, Final

# The original's 21 codes in manifest order, then ours; append-only.
ERROR_CODES: Final[tuple[str, ...]] = (
    "ERR_UNKNOWN_COMMAND",
    "ERR_MISSING_ARGUMENT",
    "ERR_INVALID_FLAG",
    "ERR_UNEXPECTED_ARGUMENT",
    "ERR_REPO_REQUIRED",
    "ERR_PATH_NOT_FOUND",
    "ERR_INVALID_MEMORY",
    "ERR_DUPLICATE_CONTENT",
    "ERR_WRITE_CONFLICT",
    "ERR_DIRTY_TREE",
    "ERR_INDEX_STALE",
    "ERR_EMBED_MODEL_MISMATCH",
    "ERR_MODEL_UNAVAILABLE",
    "ERR_STORAGE",
    "ERR_GIT",
    "ERR_DISCRIMINATION_FAILED",
    "ERR_UNKNOWN",
    "ERR_REBUILD_NO_EMBED_REFUSED",
    "ERR_UNKNOWN_HOST",
    "ERR_UNKNOWN_HOOK_EVENT",
    "ERR_INTEGRATION_MODIFIED",
    "ERR_SECRET_DETECTED",
    "ERR_INVISIBLE_CHARACTERS",
    "ERR_CORRUPT_REPOSITORY",
    "ERR_DETACHED_HEAD",
    "ERR_LOCKED",
    "ERR_NO_SPACE",
    "ERR_READ_ONLY",
    "ERR_DAMAGED_FILE",
    "ERR_INPUT_TOO_LARGE",
)

USAGE_ERROR_CODES: Final[tuple[str, ...]] = (
    "ERR_UNKNOWN_COMMAND",
    "ERR_MISSING_ARGUMENT",
    "ERR_INVALID_FLAG",
    "ERR_UNEXPECTED_ARGUMENT",
    "ERR_REPO_REQUIRED",
)


class MemhtmlError(Exception):
    """Base of every failure a door reports as an error envelope."""

    code: ClassVar[str] = "ERR_UNKNOWN"
    retryable: bool = False  # per class by default; an instance may say otherwise
    usage: ClassVar[bool] = False

    def __init__(self, message: str, suggestions: list[str] | None = None, *, retryable: bool | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.suggestions: list[str] = list(suggestions or [])
        # Results that still belong in the failure envelope (an aborted batch's per-op report).
        self.data: Mapping[str, object] | None = None
        if retryable is not None:
            self.retryable = retryable


class UsageError(MemhtmlError):
    """The command line itself must change; found before any I/O (exit 2)."""

    usage = True

    def __init__(
        self, code: str, message: str, suggestions: list[str] | None = None, *, command: str | None = None
    ) -> None:
        super().__init__(message, suggestions)
        self.instance_code = code
        self.command = command  # the command the line named, when the grammar got that far

    @property
    def envelope_code(self) -> str:
        return self.instance_code


class PathNotFound(MemhtmlError):
    code = "ERR_PATH_NOT_FOUND"


class InvalidMemory(MemhtmlError):
    code = "ERR_INVALID_MEMORY"


class SecretDetected(MemhtmlError):
    """A value shaped like a credential in what a write would store: a secret that reaches a commit
    stays in git history (and in every vector embedded from it), so nothing is written."""

    code = "ERR_SECRET_DETECTED"


class InvisibleCharacters(MemhtmlError):
    """Invisible or bidirectional-control characters, which can hide or reorder what a reader sees."""

    code = "ERR_INVISIBLE_CHARACTERS"


class WriteConflict(MemhtmlError):
    code = "ERR_WRITE_CONFLICT"


class DirtyTree(MemhtmlError):
    code = "ERR_DIRTY_TREE"


class StorageFailure(MemhtmlError):
    code = "ERR_STORAGE"
    retryable = True


class DamagedIndex(StorageFailure):
    """The index file cannot be opened or read for a reason no lock explains: truncated, overwritten,
    not a DuckDB file, a directory in its place. Retrying changes nothing; the index is rebuilt from
    git, and `index rebuild` sets the damaged file aside first. A damaged support file, coded as one."""

    code = "ERR_DAMAGED_FILE"
    retryable = False


class EmbedSpaceMismatch(MemhtmlError):
    """The index holds vectors of another space than the configured embedder's; they are never mixed."""

    code = "ERR_EMBED_MODEL_MISMATCH"


class ModelUnavailable(MemhtmlError):
    """The configured embedder cannot be loaded (an optional extra missing, a damaged install)."""

    code = "ERR_MODEL_UNAVAILABLE"


class DiscriminationFailed(MemhtmlError):
    """The retrieval gate found a target at or below one of its wrong twins, or MRR under the floor."""

    code = "ERR_DISCRIMINATION_FAILED"


class GitFailure(MemhtmlError):
    """A git call failed; retryable only when another process held a lock or moved the branch."""

    code = "ERR_GIT"
    lock_held = False  # another git process held a lock file the call needed (`<name>.lock` exists)


class CorruptRepository(GitFailure):
    """Git objects the store needs are missing or unreadable (a deleted object file, a pack removed by a
    repack, a damaged disk). Nothing is written on top of a tree that cannot be read: retrying changes
    nothing, `git fsck` names what is gone."""

    code = "ERR_CORRUPT_REPOSITORY"
    retryable = False


class DetachedHead(MemhtmlError):
    """HEAD names a commit rather than a branch: a commit made there would belong to no branch and be
    left behind by the next checkout, so writes are refused until a branch is checked out."""

    code = "ERR_DETACHED_HEAD"


class NotAStore(MemhtmlError):
    """The root is not an initialized memory store; the remedy is `memhtml init`."""

    code = "ERR_GIT"


class Interrupted(MemhtmlError):
    """The command was interrupted (Ctrl-C, SIGTERM, SIGHUP) before it finished; a write interrupted
    before its commit landed has put every byte back, one interrupted after it still answers success."""

    code = "ERR_UNKNOWN"
    retryable = True

    def __init__(self) -> None:
        super().__init__(
            "interrupted before the command finished; a write interrupted before its commit stored "
            "nothing and left the tree as it was",
            ["retry the same command (a landed write answers unchanged)", "git log -1", "memhtml status"],
        )


class LockTimeout(MemhtmlError):
    """Another process held a lock we need (the store's write lock, git's index or ref locks, the index
    database) for longer than we were willing to wait; nothing was written."""

    code = "ERR_LOCKED"
    retryable = True


class NoSpace(StorageFailure):
    """The file system holding the store is full (or the user's quota is used up); nothing was written.
    The same call succeeds once space is freed."""

    code = "ERR_NO_SPACE"


class ReadOnlyStore(StorageFailure):
    """The store (its working tree, `.git` or `.memhtml`) cannot be written: a read-only mount or missing
    permissions. Retrying changes nothing until that changes."""

    code = "ERR_READ_ONLY"
    retryable = False


class DamagedFile(MemhtmlError):
    """A file memhtml or git keeps beside the memories (git's index, `.memhtml` and its databases) is
    not what it must be: garbage bytes, a directory where a file belongs. The remedy names the repair."""

    code = "ERR_DAMAGED_FILE"


class DamagedStateDatabase(DamagedFile):
    """The state database (`.memhtml/state.duckdb`) cannot be opened for a reason no lock explains. It is
    not rebuildable from git: `doctor --fix` sets it aside and restores the counters `state export` last
    committed."""


class IntegrationModified(MemhtmlError):
    """A file memhtml would install (a git hook) is occupied by one it did not write, or by one it wrote
    and someone edited since; it is never overwritten without `--force`."""

    code = "ERR_INTEGRATION_MODIFIED"


class FollowsRefusal(MemhtmlError):
    """A refusal caused by another one, reported with that one's code (and retryability)."""

    def __init__(self, cause: MemhtmlError, message: str) -> None:
        super().__init__(f"{message}: {cause.message}", cause.suggestions, retryable=cause.retryable)
        self.cause_code = envelope_code(cause)


class BatchAborted(FollowsRefusal):
    """An atomic batch stopped by one refused op: nothing was written; the envelope carries that op's
    code and every op's result."""

    def __init__(self, cause: MemhtmlError, message: str, data: Mapping[str, object]) -> None:
        super().__init__(cause, message)
        self.message = message
        self.args = (message,)
        self.data = data


def os_failure(error: OSError, root: object | None = None) -> MemhtmlError:
    """A file-system failure that reached a door, as the kind of failure it is (by its errno): no space,
    a store that cannot be written, or another storage failure; `root` (the store) makes the remedies
    runnable. Its message names what the operating system said, never a path of the host."""
    where = "" if root is None else f" {root}"
    reason = error.strerror or type(error).__name__
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return NoSpace(
            f"no space is left on the device holding the store ({reason}); nothing was written",
            [f"df -h{where}", "retry the same command once space is freed"],
        )
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ReadOnlyStore(
            f"the store cannot be written ({reason}): a read-only file system or missing permissions",
            [f"ls -ld{where}{'' if root is None else f' {root}/.git {root}/.memhtml'}", f"findmnt -T{where or ' .'}"],
        )
    return StorageFailure(f"a file of the store could not be read or written ({reason})", ["retry the same command"])


def envelope_code(error: MemhtmlError) -> str:
    """The one code an error reports, whether fixed by class or chosen per instance."""
    if isinstance(error, UsageError):
        return error.envelope_code
    if isinstance(error, FollowsRefusal):
        return error.cause_code
    return error.code
