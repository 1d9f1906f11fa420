"""The envelope on every door: JSON when piped, --json or MEMHTML_OUTPUT=json, rich on a terminal;
usage errors before any I/O; infrastructure failures that say `failed` and `retryable`; and no
failure reported after a commit landed."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git, run_cli

FACT = ["--title", "Retry budget", "--type", "semantic", "--claim", "The retry budget of the gateway is 3."]


def run_on_terminal(*args: str) -> tuple[int, str]:
    """Run the CLI with stdout on a pseudo-terminal, as a person at a shell would."""
    leader, follower = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "memhtml", *args], stdout=follower, stderr=subprocess.PIPE, env=os.environ
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closes when the child exits
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return process.wait(), b"".join(chunks).decode("utf-8", "replace")


def test_envelope_is_pretty_json_with_one_trailing_newline_when_piped(store_root: Path) -> None:
    answer = run_cli("write", "--repo", str(store_root), *FACT)
    assert answer.stdout.endswith("}\n") and not answer.stdout.endswith("\n\n")
    assert answer.stdout.startswith('{\n  "apiVersion": "1",\n  "type": "memory.written",')
    assert list(answer.envelope) == ["apiVersion", "type", "data"]


def test_dense_minifies_and_drops_nulls(store_root: Path) -> None:
    answer = run_cli("write", "--repo", str(store_root), *FACT, "--dense")
    assert "\n" not in answer.stdout.rstrip("\n")
    assert "existingPath" not in answer.data  # null on a fresh write, so dropped
    assert answer.data["deduped"] is False  # false is kept


def test_terminal_gets_rich_rendering_unless_json_is_asked_for(store_root: Path) -> None:
    status, screen = run_on_terminal("write", "--repo", str(store_root), *FACT)
    assert status == 0
    assert "memory.written" in screen and "outcome" in screen and '"apiVersion"' not in screen
    status, screen = run_on_terminal("status", "--repo", str(store_root), "--json")
    assert status == 0 and json.loads(screen)["type"] == "status.health"
    os.environ["MEMHTML_OUTPUT"] = "json"
    try:
        status, screen = run_on_terminal("status", "--repo", str(store_root))
    finally:
        del os.environ["MEMHTML_OUTPUT"]
    assert json.loads(screen)["type"] == "status.health"


def test_usage_errors_exit_2_before_touching_anything(tmp_path: Path) -> None:
    absent = tmp_path / "never-created"
    cases = {
        ("--importance", "11"): "ERR_INVALID_FLAG",
        ("--importance", "abc"): "ERR_INVALID_FLAG",
        ("--confidence", "1.5"): "ERR_INVALID_FLAG",
        ("--confidence", "nan"): "ERR_INVALID_FLAG",
        ("--entity", "nocolon"): "ERR_INVALID_FLAG",
        ("--type", "bogus"): "ERR_INVALID_FLAG",
        ("--titel", "x"): "ERR_INVALID_FLAG",
    }
    for extra, code in cases.items():
        base = [arg for arg in FACT if arg not in ("--type", "semantic")] if extra[0] == "--type" else FACT
        answer = run_cli("write", "--repo", str(absent), *base, *extra)
        assert answer.status == 2, (extra, answer.stdout)
        envelope = answer.envelope
        assert envelope["code"] == code, extra
        assert envelope["suggestions"][-1] == "memhtml help write"
        assert envelope["stored"] is False and envelope["outcome"] == "refused"
        assert envelope["retryable"] is False
    missing = run_cli("write", "--repo", str(absent), "--type", "semantic", "--claim", "x")
    assert missing.status == 2 and missing.envelope["code"] == "ERR_MISSING_ARGUMENT"
    assert not absent.exists()


def test_refuse_env_root_requires_an_explicit_repo(store_root: Path) -> None:
    answer = run_cli("status", env={"MEMHTML_ROOT": str(store_root), "MEMHTML_REFUSE_ENV_ROOT": "1"})
    assert answer.status == 2 and answer.envelope["code"] == "ERR_REPO_REQUIRED"
    allowed = run_cli("status", env={"MEMHTML_ROOT": str(store_root), "MEMHTML_REFUSE_ENV_ROOT": "off"})
    assert allowed.status == 0 and allowed.data["root"] == str(store_root.resolve())


def test_a_branch_lock_held_past_the_retries_is_locked_retryable_and_leaves_no_trace(store_root: Path) -> None:
    head = git(store_root, "rev-parse", "HEAD")
    # Another git process holding the branch lock makes every compare-and-swap fail.
    lock = store_root / ".git" / "refs" / "heads" / "main.lock"
    lock.write_text(head)
    try:
        answer = run_cli("write", "--repo", str(store_root), *FACT)
    finally:
        lock.unlink()
    assert answer.status == 1
    envelope = answer.envelope
    assert envelope["code"] == "ERR_LOCKED"
    assert envelope["stored"] is False and envelope["outcome"] == "failed" and envelope["retryable"] is True
    assert git(store_root, "rev-parse", "HEAD") == head
    assert git(store_root, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (store_root / "areas" / "inbox" / "retry-budget.html").exists()
    retried = run_cli("write", "--repo", str(store_root), *FACT)
    assert retried.status == 0 and retried.data["outcome"] == "written"


def test_a_landed_commit_is_reported_as_success_when_the_git_index_cannot_follow(store_root: Path) -> None:
    # With git's index file gone, entries for the new path alone would read as every other memory staged
    # for deletion: the write lands, leaves the index as it is and says how to rebuild it.
    (store_root / ".git" / "index").unlink()
    answer = run_cli("write", "--repo", str(store_root), *FACT)
    assert answer.status == 0
    assert answer.data["stored"] is True and answer.data["outcome"] == "written"
    assert answer.data["index"]["ok"] is False and answer.data["index"]["remedy"] == "memhtml doctor --fix"
    changed = git(store_root, "show", "--name-only", "--format=", "HEAD").split()
    assert changed == [answer.data["path"]]
    assert not (store_root / ".git" / "index").exists()
    fixed = run_cli("doctor", "--fix", "--repo", str(store_root))
    assert fixed.data["repaired"]["gitIndexEntries"] > 0, fixed.stdout
    assert git(store_root, "status", "--porcelain", "--untracked-files=all") == ""


def test_manifest_lists_exactly_the_commands_that_exist() -> None:
    answer = run_cli("manifest")
    names = [command["name"] for command in answer.data["commands"]]
    assert names == [
        "manifest",
        "version",
        "help",
        "init",
        "write",
        "apply",
        "batch",
        "read",
        "search",
        "recall",
        "correct",
        "link",
        "neighbors",
        "resolve",
        "archive",
        "why",
        "reinforce",
        "list",
        "entity activity",
        "task add",
        "task status",
        "task list",
        "conflicts audit",
        "index rebuild",
        "index update",
        "index embed",
        "index status",
        "status",
        "doctor",
        "validate",
        "hooks install",
        "hooks uninstall",
        "eval discriminate",
        "eval locomo",
        "eval supersession",
        "state export",
        "state import",
        "serve mcp",
    ]
    bare = run_cli()
    assert bare.data == answer.data
    described = run_cli("write", "--help", "--type", "bogus")
    assert described.status == 0 and described.envelope["type"] == "cli.help"
    assert described.data["name"] == "write"


def test_every_suggested_memhtml_command_exists(store_root: Path) -> None:
    known = {command["name"] for command in run_cli("manifest").data["commands"]}
    first = run_cli("write", "--repo", str(store_root), *FACT)
    failing = [
        ("read", "--repo", str(store_root), "resources/missing.html"),
        ("read", "--repo", str(store_root), "README.html"),
        ("write", "--repo", str(store_root), *FACT[:4], "--claim", "Other.", "--path", first.data["path"]),
        ("write", "--repo", str(store_root / "nowhere"), *FACT),
        (
            "write",
            "--repo",
            str(store_root),
            "--title",
            "x",
            "--type",
            "semantic",
            "--article-html",
            "<p>x</p>",
        ),
        ("write", "--titel", "x"),
        ("apply",),
        ("wirte",),
    ]
    for args in failing:
        envelope = run_cli(*args).envelope
        assert envelope["code"].startswith("ERR_"), args
        for suggestion in envelope["suggestions"]:
            words = suggestion.split()
            if words[0] != "memhtml":
                continue
            assert words[1] in known or " ".join(words[1:3]) in known, (args, suggestion)


def test_a_batch_answer_on_a_terminal_lists_its_ops_in_brief_and_the_refused_ones_first(
    store_root: Path, tmp_path: Path
) -> None:
    """A 10k-op answer laid out whole was 200k lines and ≈50 s of drawing: a person gets the summary
    and at most 20 ops, every refused one among them; JSON keeps every op's answer."""
    from memhtml.cli.render import RENDERED_OPS

    ops = [{"op": "write", "title": f"Probe {n}", "type": "semantic", "body": f"Probe {n} is {n}."} for n in range(30)]
    ops[27] = {"op": "write", "title": "Bad", "type": "bogus", "body": "A type that does not exist."}
    batch = tmp_path / "batch.jsonl"
    batch.write_text("\n".join(json.dumps(op) for op in ops) + "\n", encoding="utf-8")
    status, screen = run_on_terminal("apply", "--repo", str(store_root), "--file", str(batch), "--continue-on-error")
    assert status == 3, screen  # partial
    screen = re.sub(r"\x1b\[[0-9;]*m", "", screen)  # the colours
    rows = [line.split()[1:3] for line in screen.splitlines() if re.match(r"│ +\d+ +(written|refused) ", line)]
    assert len(rows) == RENDERED_OPS
    assert rows == [["27", "refused"]] + [[str(number), "written"] for number in range(19)]  # then the first ops
    assert "ERR_INVALID_MEMORY: invalid memory: unknown memory type: bogus" in screen
    assert f"… {30 - RENDERED_OPS:,} more; --json answers every op" in screen
    assert "total 30 · written 29 · failed 1 · refused 1" in screen
    assert "stored true · partial true · commit " in screen
    piped = run_cli("apply", "--repo", str(store_root), "--file", str(batch), "--continue-on-error")
    assert len(piped.data["results"]) == 30


@pytest.mark.parametrize("argv", [["--version"], ["-V"], ["version"]])
def test_the_version_is_the_installed_package_s(argv: list[str]) -> None:
    answer = run_cli(*argv)
    assert answer.status == 0, answer.stderr
    assert answer.envelope["type"] == "cli.version"
    assert answer.data["version"] == importlib.metadata.version("memhtml")
    assert answer.data["compat"] == "0.15.1" and answer.data["name"] == "memhtml"


def test_an_unknown_flag_on_a_bare_line_is_refused_not_answered_with_the_manifest() -> None:
    answer = run_cli("--bogus")
    assert answer.status == 2
    assert answer.envelope["code"] == "ERR_INVALID_FLAG" and "cli.manifest" not in answer.stdout
    assert answer.envelope["suggestions"][-1] == "memhtml help manifest"
    assert run_cli(*answer.envelope["suggestions"][-1].split()[1:]).status == 0  # the suggestion runs
