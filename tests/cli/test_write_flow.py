"""End-to-end write/read/init/status through the real executable, real git, temp directories."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import commit_count, git, memory_files, run_cli, run_cli_concurrently

CLAIM = [
    "--title",
    "Pool ceiling",
    "--type",
    "semantic",
    "--claim",
    "The connection pool ceiling is 64.",
    "--body",
    "Measured under load.",
    "--tag",
    "db",
]


def test_init_scaffolds_and_is_idempotent(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    first = run_cli("init", "--repo", str(root))
    assert first.status == 0
    assert first.data["created"] is True
    assert ".gitignore" in first.data["wrote"] and "README.html" in first.data["wrote"]
    assert git(root, "log", "--format=%s") == "memhtml(init): scaffold the memory repository\n"
    assert git(root, "config", "--local", "merge.ours.driver").strip() == "true"
    second = run_cli("init", "--repo", str(root))
    assert second.status == 0
    assert second.data["created"] is False and second.data["wrote"] == []
    assert second.data["headSha"] == first.data["headSha"]
    assert commit_count(root) == 1
    exclude = (root / ".git/info/exclude").read_text()
    assert ".memhtml/index.duckdb" in exclude


def test_three_identical_writes_store_one_file_in_one_commit(store_root: Path) -> None:
    before = commit_count(store_root)
    answers = [run_cli("write", "--repo", str(store_root), *CLAIM) for _ in range(3)]
    assert [answer.status for answer in answers] == [0, 0, 0]
    assert [answer.data["outcome"] for answer in answers] == ["written", "unchanged", "unchanged"]
    assert [answer.data["stored"] for answer in answers] == [True, False, False]
    path = answers[0].data["path"]
    assert path == "resources/db/pool-ceiling.html"
    for later in answers[1:]:
        assert later.data["existingPath"] == path and later.data["path"] == path
        assert later.data["commitSha"] is None and later.data["deduped"] is True
    assert memory_files(store_root) == [path]
    assert commit_count(store_root) == before + 1
    assert git(store_root, "status", "--porcelain") == ""
    assert git(store_root, "log", "-1", "--format=%s").strip() == "memhtml(write): Pool ceiling"


def test_same_title_different_claim_gets_a_suffix(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *CLAIM)
    other = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "Pool ceiling",
        "--type",
        "semantic",
        "--claim",
        "The connection pool ceiling is 96.",
        "--tag",
        "db",
    )
    assert other.data["path"] == "resources/db/pool-ceiling-2.html"


def test_staged_unrelated_file_stays_staged_and_out_of_the_commit(store_root: Path) -> None:
    (store_root / "notes.txt").write_text("user work in progress\n")
    git(store_root, "add", "notes.txt")
    answer = run_cli("write", "--repo", str(store_root), *CLAIM)
    assert answer.status == 0
    changed = git(store_root, "show", "--name-only", "--format=", "HEAD").split()
    assert changed == ["resources/db/pool-ceiling.html"]
    assert git(store_root, "diff", "--cached", "--name-only").split() == ["notes.txt"]
    assert git(store_root, "status", "--porcelain").splitlines() == ["A  notes.txt"]


def test_refused_write_leaves_tree_and_head_untouched(store_root: Path) -> None:
    head = git(store_root, "rev-parse", "HEAD")
    answer = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "No mark",
        "--type",
        "semantic",
        "--article-html",
        "<p>No mark here</p>",
    )
    assert answer.status == 1
    envelope = answer.envelope
    assert envelope["code"] == "ERR_INVALID_MEMORY"
    assert envelope["stored"] is False and envelope["outcome"] == "refused"
    assert envelope["retryable"] is False
    assert "no <mark>" in envelope["error"]
    assert git(store_root, "rev-parse", "HEAD") == head
    assert git(store_root, "status", "--porcelain", "--untracked-files=all") == ""


def test_occupied_explicit_path_is_a_write_conflict(store_root: Path) -> None:
    first = run_cli("write", "--repo", str(store_root), *CLAIM)
    head = git(store_root, "rev-parse", "HEAD")
    clash = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "Other",
        "--type",
        "semantic",
        "--claim",
        "Something else entirely.",
        "--path",
        first.data["path"],
    )
    assert clash.status == 1 and clash.envelope["code"] == "ERR_WRITE_CONFLICT"
    assert clash.envelope["outcome"] == "refused"
    assert git(store_root, "rev-parse", "HEAD") == head


def test_unusable_path_is_ignored_or_refused_under_strict_path(store_root: Path) -> None:
    loose = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "Bad path memory",
        "--type",
        "semantic",
        "--claim",
        "Lands by placement.",
        "--path",
        "foo/bar.txt",
    )
    assert loose.status == 0 and loose.data["path"] == "areas/inbox/bad-path-memory.html"
    head = git(store_root, "rev-parse", "HEAD")
    strict = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "Strict",
        "--type",
        "semantic",
        "--claim",
        "Refused.",
        "--path",
        "foo/bar.txt",
        "--strict-path",
    )
    assert strict.status == 1 and strict.envelope["code"] == "ERR_INVALID_MEMORY"
    assert "not rooted in a PARA bucket" in strict.envelope["error"]
    assert git(store_root, "rev-parse", "HEAD") == head
    explicit = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "Named",
        "--type",
        "semantic",
        "--claim",
        "Lands where named.",
        "--path",
        "/resources//custom/named.html",
    )
    assert explicit.data["path"] == "resources/custom/named.html"


def test_episodic_memories_get_the_utc_write_date_prefix(store_root: Path) -> None:
    answer = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "Deploy freeze",
        "--type",
        "episodic",
        "--claim",
        "The deploy froze.",
    )
    name = Path(answer.data["path"]).name
    assert name.endswith("-deploy-freeze.html") and name[:8].isdigit()


def test_write_file_bytes_and_trailers(store_root: Path) -> None:
    answer = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "Test   one",
        "--claim",
        "The sky is blue.",
        "--body",
        "Second sentence.",
        "--body",
        "Third para.",
        "--type",
        "semantic",
        "--tag",
        "Sky Facts",
        "--entity",
        "thing:sky",
        "--importance",
        "7",
        "--confidence",
        "0.125",
        "--session-id",
        "s1",
        "--prompt-id",
        "p1",
        "--turn-uuid",
        "t1",
    )
    assert answer.status == 0
    text = (store_root / answer.data["path"]).read_text()
    created = text.split('memhtml-created" content="')[1][:20]
    expected = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Test   one</title>
<meta name="memhtml-type" content="semantic">
<meta name="memhtml-status" content="active">
<meta name="memhtml-created" content="{created}">
<meta name="memhtml-updated" content="{created}">
<meta name="memhtml-confidence" content="0.13">
<meta name="memhtml-importance" content="7">
<meta name="memhtml-content-hash" content="sha256:6c5d54265b819eb83e82d2b3d571bce728d539e03d5928c6887a68fb2d26e7dc">
<meta name="memhtml-session" content="s1">
<meta name="memhtml-prompt" content="p1">
<meta name="memhtml-turn" content="t1">
<meta name="memhtml-entity" content="thing:sky">
<meta name="memhtml-tag" content="Sky Facts">
</head>
<body>
<article>
<p><mark>The sky is blue.</mark> Second sentence.</p>
<p>Third para.</p>
</article>
</body>
</html>
"""
    assert text == expected
    assert answer.data["path"] == "resources/sky-facts/test-one.html"
    message = git(store_root, "log", "-1", "--format=%B")
    assert message == "memhtml(write): Test one\n\nMemhtml-Session: s1\nMemhtml-Prompt: p1\n\n"


def test_read_returns_detail_and_refuses_paths_outside_the_corpus(store_root: Path, tmp_path: Path) -> None:
    written = run_cli("write", "--repo", str(store_root), *CLAIM)
    detail = run_cli("read", "--repo", str(store_root), "/" + written.data["path"])
    assert detail.status == 0
    assert detail.data["gist"] == "The connection pool ceiling is 64."
    assert detail.data["tags"] == ["db"] and detail.data["archived"] is False
    assert detail.data["metas"]["memoryType"] == "semantic"
    traversal = run_cli("read", "--repo", str(store_root), "../../outside/x.html")
    assert traversal.status == 2 and traversal.envelope["code"] == "ERR_INVALID_FLAG"
    outside = tmp_path / "outside.html"
    outside.write_text(detail.stdout)
    (store_root / "resources" / "escape.html").symlink_to(outside)
    escaped = run_cli("read", "--repo", str(store_root), "resources/escape.html")
    assert escaped.status == 1 and escaped.envelope["code"] == "ERR_PATH_NOT_FOUND"
    missing = run_cli("read", "--repo", str(store_root), "resources/nope.html")
    assert missing.status == 1 and missing.envelope["code"] == "ERR_PATH_NOT_FOUND"


def test_commands_refuse_a_directory_that_is_not_a_store(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    answer = run_cli("write", "--repo", str(plain), *CLAIM)
    assert answer.status == 1
    assert answer.envelope["stored"] is False
    assert any("memhtml init" in suggestion for suggestion in answer.envelope["suggestions"])
    assert list(plain.iterdir()) == []
    # A directory inside another repository is not a store either, and nothing lands in the parent.
    parent = tmp_path / "parent"
    run_cli("init", "--repo", str(parent))
    nested = parent / "nested"
    nested.mkdir()
    head = git(parent, "rev-parse", "HEAD")
    refused = run_cli("write", "--repo", str(nested), *CLAIM)
    assert refused.status == 1
    assert git(parent, "rev-parse", "HEAD") == head
    assert list(nested.iterdir()) == []


def test_status_reports_dirty_paths_and_counts(store_root: Path) -> None:
    run_cli("write", "--repo", str(store_root), *CLAIM)
    clean = run_cli("status", "--repo", str(store_root))
    assert clean.data["dirty"] is False and clean.data["countsByType"] == {"semantic": 1}
    (store_root / "areas/inbox/hand.html").write_text("x")
    dirty = run_cli("status", "--repo", str(store_root))
    assert dirty.data["dirty"] is True and dirty.data["dirtyPaths"] == ["areas/inbox/hand.html"]


def test_parallel_writers_each_commit_exactly_their_own_file(store_root: Path) -> None:
    before = commit_count(store_root)
    answers = run_cli_concurrently(
        [
            [
                "write",
                "--repo",
                str(store_root),
                "--title",
                f"Concurrent {i}",
                "--type",
                "semantic",
                "--claim",
                f"Writer number {i} wrote this.",
            ]
            for i in range(8)
        ]
    )
    assert [answer.status for answer in answers] == [0] * 8, [answer.stdout for answer in answers]
    assert commit_count(store_root) == before + 8
    shas = git(store_root, "rev-list", "--max-count=8", "HEAD").split()
    for sha in shas:
        files = git(store_root, "show", "--name-only", "--format=%s", sha).split("\n")
        subject, changed = files[0], [line for line in files[1:] if line]
        number = subject.removeprefix("memhtml(write): Concurrent ")
        assert changed == [f"areas/inbox/concurrent-{number}.html"]
    assert git(store_root, "status", "--porcelain", "--untracked-files=all") == ""
