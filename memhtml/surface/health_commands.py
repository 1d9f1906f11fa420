"""The store-health commands: the whole store's health (`doctor`), checking memory files as they stand
(`validate`) and the git hook that runs that check on every commit (`hooks install`, `hooks uninstall`).

`doctor` is the original's command, at its place after `status`; the others are ours.
`commands` splices them into the table there.
"""

from __future__ import annotations

from typing import Final

from memhtml.surface.command_shapes import ArgSpec, CommandSpec, FlagSpec

DOCTOR_COMMAND: Final[CommandSpec] = CommandSpec(
    name="doctor",
    effect="changes",
    summary="Corpus health: every file under the buckets checked (format, safety notary, memory paths), "
    "the index against the tree, dangling links, orphan state rows, inbox depth, tasks, vectors, "
    "what a killed writer or git left. Exit 1 when the store is unhealthy.",
    args=(),
    flags=(
        FlagSpec(
            "fix",
            "boolean",
            "Repair what has one safe repair, then check again and report the store as it now is: "
            "dangling links pointed at the target's archived copy or removed (one commit), orphan "
            "access rows pruned, a drifted index rebuilt, git lock files older than 5 minutes removed. "
            "The other findings need a decision; `remedies` names the command.",
            default=False,
        ),
    ),
    response_types=("doctor.report",),
    examples=("memhtml doctor", "memhtml doctor --fix"),
    opens_repo=True,
)

VALIDATE_COMMAND: Final[CommandSpec] = CommandSpec(
    name="validate",
    summary="Check memory files as they stand on disk or in the git index: the format check, the "
    "safety notary and the memory-path rules. Lists every violation; exit 1 when there is one.",
    args=(
        ArgSpec(
            "path",
            "A file or directory to check, relative to the store root (or absolute inside it); a "
            "directory means every .html under it. None: every memory under the PARA buckets. Files "
            "outside the buckets and files that are not .html are skipped. A path outside the store, "
            "through `..`, through a symbolic link that leads out, or inside .git or .memhtml is refused "
            "at exit 2.",
            required=False,
            repeatable=True,
        ),
    ),
    flags=(
        FlagSpec(
            "staged",
            "boolean",
            "Check the staged content (the blobs in the git index: added, copied, modified and renamed "
            "entries; deletions are skipped) instead of the working tree. Inside a git hook the index "
            "is the one git handed the hook (GIT_INDEX_FILE), as `git commit -a` and `git commit <path>` "
            "use a temporary one. With paths, only staged entries under them are checked. Nothing is "
            "written to any index or file.",
            default=False,
        ),
    ),
    response_types=("validate.report",),
    examples=(
        "memhtml validate",
        "memhtml validate resources/db/pool-ceiling.html areas/",
        "memhtml validate --staged",
    ),
    opens_repo=True,
)

HOOKS_COMMANDS: Final[tuple[CommandSpec, ...]] = (
    CommandSpec(
        name="hooks install",
        effect="changes",
        summary="Install a git pre-commit hook in the store that runs `validate --staged` through this "
        "installation's Python, so a commit carrying an invalid or unsafe memory file is refused. "
        "Respects core.hooksPath; idempotent.",
        args=(),
        flags=(
            FlagSpec(
                "force",
                "boolean",
                "Replace a pre-commit hook memhtml did not write (or one it wrote and someone edited "
                "since). Without it such a hook is left alone and the command fails with "
                "ERR_INTEGRATION_MODIFIED.",
                default=False,
            ),
        ),
        response_types=("hooks.report",),
        examples=("memhtml hooks install", "memhtml hooks install --force"),
        opens_repo=True,
    ),
    CommandSpec(
        name="hooks uninstall",
        effect="changes",
        summary="Remove the pre-commit hook `hooks install` wrote. A hook memhtml did not write, or one "
        "edited since, is left alone.",
        args=(),
        flags=(),
        response_types=("hooks.report",),
        examples=("memhtml hooks uninstall",),
        opens_repo=True,
    ),
)

# Ours, not the original's.
ADDED_HEALTH_COMMANDS: Final[tuple[CommandSpec, ...]] = (VALIDATE_COMMAND, *HOOKS_COMMANDS)
HEALTH_COMMANDS: Final[tuple[CommandSpec, ...]] = (DOCTOR_COMMAND, *ADDED_HEALTH_COMMANDS)
