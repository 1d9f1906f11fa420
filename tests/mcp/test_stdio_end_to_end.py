"""The MCP server end to end: a real `python -m memhtml.mcp` child driven by the SDK's stdio client,
with the CLI writing to the same store between calls and at the same time.

Every claim is checked against what git and the disk say, not only against the server's answer.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from tests.conftest import commit_count, git, memory_files, run_cli
from tests.mcp.stdio_session import open_database_files, payload, server_pids, server_session

EXPECTED_TOOLS = {
    "memory_write",
    "memory_write_batch",
    "memory_read",
    "memory_search",
    "memory_recall",
    "memory_correct",
    "memory_link",
    "memory_neighbors",
    "memory_resolve",
    "memory_archive",
    "memory_reinforce",
    "memory_list",
    "memory_status",
    "task_add",
    "task_status",
    "task_list",
}
YEAR = dt.datetime.now(dt.UTC).year
# A hang guard for the whole conversation, not a timing assertion.
CONVERSATION_LIMIT_SECONDS = 600

POOL = {
    "title": "Checkout pool ceiling",
    "memory_type": "semantic",
    "body": "The connection pool ceiling of checkout-api is 64. Raised after the Black Friday load test.",
    "tags": ["db"],
    "entities": ["service:checkout-api"],
}


def subjects(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    result = await session.call_tool(tool, arguments)
    return result.is_error, payload(result)


def cli_write(root: Path, title: str, claim: str) -> dict[str, Any]:
    answer = run_cli("write", "--repo", str(root), "--title", title, "--type", "semantic", "--claim", claim)
    assert answer.status == 0, answer.stdout + answer.stderr
    return answer.data


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the server's open files from /proc")
def test_a_session_over_stdio_shares_the_store_with_the_cli(store_root: Path) -> None:
    errlog = store_root.parent / "server-stderr.log"

    async def conversation() -> None:
        with anyio.fail_after(CONVERSATION_LIMIT_SECONDS):
            async with server_session(store_root, errlog) as session:
                await _converse(session, store_root)

    try:
        anyio.run(conversation)
    except BaseException:
        print(errlog.read_text(encoding="utf-8"))
        raise


async def _converse(session: ClientSession, root: Path) -> None:
    listed = await session.list_tools()
    assert {tool.name for tool in listed.tools} == EXPECTED_TOOLS
    templates = await session.list_resource_templates()
    assert {template.uri_template for template in templates.resource_templates} == {
        "memhtml://file/{path}",
        "memhtml://at/{commit}/{path}",
    }

    # A write is one commit and one file, and the answer says so.
    commits = commit_count(root)
    failed, written = await call(session, "memory_write", POOL)
    assert not failed and written["stored"] is True and written["outcome"] == "written"
    pool_path = written["path"]
    assert pool_path in memory_files(root)
    assert commit_count(root) == commits + 1
    assert git(root, "rev-parse", "HEAD").strip() == written["commit_sha"]
    assert subjects(root)[0] == "memhtml(write): Checkout pool ceiling"

    # The same fact again stores nothing, and says so without pretending to have written it.
    failed, duplicate = await call(session, "memory_write", POOL)
    assert not failed
    assert duplicate["stored"] is False and duplicate["outcome"] == "unchanged"
    assert duplicate["existing_path"] == pool_path and duplicate["commit_sha"] is None
    assert commit_count(root) == commits + 1

    # Another process writes between two calls; the server's next read catches up from git.
    cli_memory = cli_write(root, "Checkout cache TTL", "The cache TTL of checkout-api is 900 seconds.")
    failed, found = await call(session, "memory_search", {"query": "checkout cache TTL"})
    assert not failed
    assert cli_memory["path"] in [hit["path"] for hit in found["hits"]]

    # An atomic batch with one refused op stores nothing and reports every op.
    files, commits = memory_files(root), commit_count(root)
    ops = [
        {"title": "Ledger shard count", "memory_type": "semantic", "body": "The shard count of ledger is 16."},
        {"title": "Bogus", "memory_type": "not-a-type", "body": "This op is refused."},
    ]
    failed, aborted = await call(session, "memory_write_batch", {"ops": ops})
    assert failed
    assert aborted["code"] == "ERR_INVALID_MEMORY" and aborted["stored"] is False
    assert [result["outcome"] for result in aborted["data"]["results"]] == ["skipped", "refused"]
    assert aborted["data"]["summary"]["refused"] == 1
    assert memory_files(root) == files and commit_count(root) == commits

    # With continue_on_error the good op lands, the answer is partial and still an error result.
    failed, partial = await call(session, "memory_write_batch", {"ops": ops, "continue_on_error": True})
    assert failed and partial["partial"] is True and partial["stored"] is True
    landed = [result["path"] for result in partial["results"] if result["stored"]]
    assert len(landed) == 1 and landed[0] in memory_files(root)
    assert commit_count(root) == commits + 1

    # A CLI writer and the server write at the same time: both land, nothing is lost or mixed.
    files, commits = memory_files(root), commit_count(root)
    titles = [f"Concurrent server fact {number}" for number in range(3)]
    cli_answers: list[dict[str, Any]] = []

    async def cli_side() -> None:
        data = await anyio.to_thread.run_sync(
            cli_write, root, "Concurrent CLI fact", "The concurrent CLI fact holds on every run."
        )
        cli_answers.append(data)

    async with anyio.create_task_group() as group:
        group.start_soon(cli_side)
        for number, title in enumerate(titles):
            body = f"The concurrent server fact number {number} holds."
            failed, data = await call(
                session, "memory_write", {"title": title, "memory_type": "semantic", "body": body}
            )
            assert not failed and data["stored"] is True
    assert len(memory_files(root)) == len(files) + 4
    assert commit_count(root) == commits + 4
    assert {f"memhtml(write): {title}" for title in [*titles, "Concurrent CLI fact"]} <= set(subjects(root)[:4])
    failed, found = await call(session, "memory_search", {"query": "concurrent CLI fact"})
    assert cli_answers[0]["path"] in [hit["path"] for hit in found["hits"]]

    # Between requests the server holds no index or state database open.
    [pid] = server_pids(root)
    assert open_database_files(pid) == []

    # A correction writes the new memory and archives the target in one commit.
    commits = commit_count(root)
    failed, corrected = await call(
        session,
        "memory_correct",
        {
            "target_path": pool_path,
            "title": "Checkout pool ceiling v2",
            "body": "The connection pool ceiling of checkout-api is 96.",
            "reason": "raised again",
        },
    )
    assert not failed and corrected["stored"] is True and corrected["outcome"] == "written"
    assert corrected["archived_path"] == f"archive/{YEAR}/{pool_path}"
    on_disk = memory_files(root)
    assert corrected["path"] in on_disk and corrected["archived_path"] in on_disk and pool_path not in on_disk
    assert commit_count(root) == commits + 1
    assert "Memhtml-Reason: raised again" in git(root, "log", "-1", "--format=%B")

    # Archiving the CLI's memory through the server moves it; nothing is deleted.
    failed, archived = await call(session, "memory_archive", {"path": cli_memory["path"], "reason": "retired"})
    assert not failed and archived["stored"] is True
    on_disk = memory_files(root)
    assert archived["archive_path"] in on_disk and cli_memory["path"] not in on_disk
    failed, found = await call(session, "memory_search", {"query": "checkout cache TTL"})
    assert cli_memory["path"] not in [hit["path"] for hit in found["hits"]]

    # Resources: the live memory, and the first version pinned at the commit that wrote it.
    live = await session.read_resource(f"memhtml://file/{corrected['path']}")
    assert live.contents[0].text.startswith("# Checkout pool ceiling v2\n\n")  # type: ignore[union-attr]
    pinned = await session.read_resource(f"memhtml://at/{written['commit_sha']}/{pool_path}")
    text = pinned.contents[0].text  # type: ignore[union-attr]
    assert text.startswith("# Checkout pool ceiling\n\nThe connection pool ceiling of checkout-api is 64.")
    assert not (root / pool_path).exists()  # served from git, not from the working tree
    with pytest.raises(MCPError) as refused:
        await session.read_resource(f"memhtml://file/{pool_path}")
    assert refused.value.code == -32002 and refused.value.data["code"] == "ERR_PATH_NOT_FOUND"

    # resolve follows the archive move to the correction and pins it.
    failed, resolved = await call(session, "memory_resolve", {"path": pool_path})
    assert resolved["path"] == corrected["path"] and resolved["stop_reason"] == "live"
    pinned = await session.read_resource(resolved["pinned_uri"])
    assert pinned.contents[0].text.startswith("# Checkout pool ceiling v2")  # type: ignore[union-attr]

    # The working tree is clean and git holds exactly the memories on disk: every change is committed.
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    buckets = ("projects/", "areas/", "resources/", "archive/")
    tracked = git(root, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    assert sorted(name for name in tracked if name.startswith(buckets) and name.endswith(".html")) == memory_files(root)
