"""`memhtml hooks install`/`uninstall` and the pre-commit hook at work: real `git commit`, real hook,
real CLI, including the temporary indexes of `git commit -a` and `git commit <path>`."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memhtml.operations.githooks import MARKER
from tests.cli.test_validate import GITHUB, POOL, put, valid_text, with_body
from tests.conftest import commit_count, git, run_cli

HOOK = ".git/hooks/pre-commit"
FOREIGN = "#!/bin/sh\necho 'my own checks'\n"


def install(root: Path, *args: str) -> dict[str, object]:
    answer = run_cli("hooks", "install", "--repo", str(root), *args)
    assert answer.status == 0, answer.stdout + answer.stderr
    assert answer.envelope["type"] == "hooks.report"
    return answer.data


def commit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git commit` as a person runs it, with a PATH that does not lead to memhtml: the hook must name
    its own interpreter."""
    path = os.pathsep.join(
        directory
        for directory in os.environ.get("PATH", "").split(os.pathsep)
        if directory and not (Path(directory) / "memhtml").exists()
    )
    assert shutil.which("git", path=path) is not None
    return subprocess.run(
        ["git", "commit", "-q", *args],
        cwd=root,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        check=False,
    )


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def hooked(store_root: Path) -> Path:
    valid_text(store_root)
    data = install(store_root)
    assert data["outcome"] == "installed" and data["changed"] is True
    return store_root


# ---------------------------------------------------------------- install and uninstall


def test_install_writes_an_executable_hook_that_names_this_interpreter(store_root: Path) -> None:
    data = install(store_root)
    assert data == {
        "hook": HOOK,
        "outcome": "installed",
        "changed": True,
        "shared": False,
        "interpreter": sys.executable,
    }
    hook = store_root / HOOK
    text = hook.read_text()
    assert MARKER in text.splitlines() and f"python={sys.executable}" in text
    assert "-m memhtml validate --staged --repo ." in text
    assert hook.stat().st_mode & stat.S_IXUSR
    again = install(store_root)
    assert again["outcome"] == "unchanged" and again["changed"] is False
    assert hook.read_text() == text


def test_install_respects_core_hooks_path(store_root: Path) -> None:
    git(store_root, "config", "core.hooksPath", "githooks")
    data = install(store_root)
    assert data["hook"] == "githooks/pre-commit" and data["shared"] is False
    assert (store_root / "githooks" / "pre-commit").exists()
    assert not (store_root / HOOK).exists()


def test_install_refuses_a_foreign_hook_and_force_replaces_it(store_root: Path) -> None:
    hook = store_root / HOOK
    hook.write_text(FOREIGN)
    refused = run_cli("hooks", "install", "--repo", str(store_root))
    assert refused.status == 1 and refused.envelope["code"] == "ERR_INTEGRATION_MODIFIED"
    assert "memhtml hooks install --force" in refused.envelope["suggestions"]
    assert hook.read_text() == FOREIGN
    kept = run_cli("hooks", "uninstall", "--repo", str(store_root))
    assert kept.status == 0 and kept.data["outcome"] == "kept" and kept.data["foreign"] is True
    assert hook.read_text() == FOREIGN
    replaced = install(store_root, "--force")
    assert replaced["outcome"] == "replaced" and MARKER in hook.read_text()
    removed = run_cli("hooks", "uninstall", "--repo", str(store_root)).data
    assert removed["outcome"] == "removed" and removed["changed"] is True and not hook.exists()
    absent = run_cli("hooks", "uninstall", "--repo", str(store_root)).data
    assert absent["outcome"] == "absent" and absent["changed"] is False


def test_an_edited_hook_is_no_longer_ours(store_root: Path) -> None:
    install(store_root)
    hook = store_root / HOOK
    edited = hook.read_text() + "echo 'and my own check'\n"
    hook.write_text(edited)
    assert run_cli("hooks", "install", "--repo", str(store_root)).envelope["code"] == "ERR_INTEGRATION_MODIFIED"
    kept = run_cli("hooks", "uninstall", "--repo", str(store_root)).data
    assert kept["outcome"] == "kept" and kept["edited"] is True
    assert hook.read_text() == edited


def test_a_hook_for_another_interpreter_is_updated(store_root: Path) -> None:
    install(store_root)
    hook = store_root / HOOK
    hook.write_text(hook.read_text().replace(f"python={sys.executable}", "python=/opt/old/bin/python"))
    data = install(store_root)
    assert data["outcome"] == "updated" and f"python={sys.executable}" in hook.read_text()


# ---------------------------------------------------------------- the hook at work


def test_a_bad_file_is_refused_and_nothing_is_committed(hooked: Path) -> None:
    before = head(hooked)
    put(hooked, "areas/inbox/bad.html", with_body(hooked, "<script>x()</script>"))
    git(hooked, "add", "areas/inbox/bad.html")
    refused = commit(hooked, "-m", "bad")
    assert refused.returncode != 0
    assert "areas/inbox/bad.html" in refused.stdout + refused.stderr and "<script> is forbidden" in refused.stderr
    assert head(hooked) == before
    put(hooked, "areas/inbox/bad.html", with_body(hooked, "Measured again in March."))
    git(hooked, "add", "areas/inbox/bad.html")
    landed = commit(hooked, "-m", "good")
    assert landed.returncode == 0, landed.stderr
    assert commit_count(hooked) == int(git(hooked, "rev-list", "--count", before).strip()) + 1
    assert git(hooked, "show", "--name-only", "--format=", "HEAD").split() == ["areas/inbox/bad.html"]


def test_a_refused_commit_leaves_the_staged_content_as_it_was(hooked: Path) -> None:
    put(hooked, "areas/inbox/bad.html", with_body(hooked, "\u202e"))
    git(hooked, "add", "areas/inbox/bad.html")
    staged = git(hooked, "ls-files", "-s")  # git itself refreshes the index file's stat data
    ours = sorted(path.name for path in (hooked / ".git").iterdir() if "memhtml" in path.name)
    assert commit(hooked, "-m", "bad").returncode != 0
    assert git(hooked, "ls-files", "-s") == staged
    assert git(hooked, "diff", "--cached", "--name-only").split() == ["areas/inbox/bad.html"]
    assert sorted(path.name for path in (hooked / ".git").iterdir() if "memhtml" in path.name) == ours


def test_a_hand_edited_secret_is_refused_without_its_value_in_the_output(hooked: Path) -> None:
    put(hooked, POOL, with_body(hooked, f"The deploy token is {GITHUB}."))
    git(hooked, "add", POOL)
    refused = commit(hooked, "-m", "leak")
    assert refused.returncode != 0
    output = refused.stdout + refused.stderr
    assert "ERR_SECRET_DETECTED" in output and "github-token" in output
    assert GITHUB not in output and GITHUB[4:] not in output
    assert git(hooked, "show", "HEAD:" + POOL).count("ghp_") == 0


def test_commit_all_checks_the_working_tree_version_it_stages(hooked: Path) -> None:
    good = with_body(hooked, "Measured again in March.")
    bad = with_body(hooked, "<style>p{}</style>")
    # The real index holds a bad version; `commit -a` stages the good one from the tree into its own index.
    put(hooked, POOL, bad)
    git(hooked, "add", POOL)
    put(hooked, POOL, good)
    landed = commit(hooked, "-a", "-m", "all, good")
    assert landed.returncode == 0, landed.stderr
    assert git(hooked, "show", "HEAD:" + POOL) == good
    # And the other way round: a good staged version, a bad one in the tree.
    put(hooked, POOL, with_body(hooked, "Measured a third time."))
    git(hooked, "add", POOL)
    put(hooked, POOL, bad)
    before = head(hooked)
    refused = commit(hooked, "-a", "-m", "all, bad")
    assert refused.returncode != 0 and "<style> is forbidden" in refused.stderr
    assert head(hooked) == before


def test_commit_of_named_paths_checks_only_what_it_commits(hooked: Path) -> None:
    other = "areas/inbox/other.html"
    put(hooked, other, with_body(hooked, "<script>x()</script>"))
    git(hooked, "add", other)  # a bad file staged, but not part of the commit below
    put(hooked, POOL, with_body(hooked, "Measured again in March."))
    landed = commit(hooked, "-m", "only the pool", "--", POOL)
    assert landed.returncode == 0, landed.stderr
    assert git(hooked, "show", "--name-only", "--format=", "HEAD").split() == [POOL]
    put(hooked, POOL, with_body(hooked, "\u200bhidden"))  # a bad working-tree version, named
    before = head(hooked)
    refused = commit(hooked, "-m", "named, bad", "--", POOL)
    assert refused.returncode != 0 and POOL in refused.stderr and other not in refused.stderr
    assert head(hooked) == before


def test_the_hook_leaves_a_repository_without_buckets_alone(store_root: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared-hooks"
    git(store_root, "config", "core.hooksPath", str(shared))
    assert install(store_root)["shared"] is True
    other = tmp_path / "web"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    git(other, "config", "core.hooksPath", str(shared))
    put(other, "resources/page.html", "<p>a web page, not a memory</p>")
    git(other, "add", "-A")
    assert commit(other, "-m", "site").returncode == 0


# ---------------------------------------------------------------- the pre-commit framework


def test_the_pre_commit_framework_hook_runs_validate_on_the_files_it_passes(store_root: Path) -> None:
    yaml = pytest.importorskip("yaml")
    definition = Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml"
    (hook,) = yaml.safe_load(definition.read_text())
    assert hook["id"] == "memhtml-validate" and hook["language"] == "python"
    assert hook.get("pass_filenames", True) is True
    pattern = re.compile(hook["files"])
    assert pattern.search("resources/db/pool.html") and not pattern.search("resources/db/notes.txt")
    program, *arguments = hook["entry"].split()
    assert program == "memhtml" and arguments[:1] == ["validate"]
    # As pre-commit runs it: at the top of the repository, with the matching files as arguments.
    put(store_root, "areas/inbox/bad.html", with_body(store_root, "<script>x()</script>"))
    files = ["areas/inbox/bad.html", POOL, "README.html"]
    refused = run_cli(*arguments, *files, cwd=store_root)
    assert refused.status == 1, refused.stdout + refused.stderr
    assert {item["path"] for item in refused.envelope["data"]["violations"]} == {"areas/inbox/bad.html"}
    assert run_cli(*arguments, POOL, "README.html", cwd=store_root).status == 0
