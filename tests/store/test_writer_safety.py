"""The write transaction against hostile and unlucky trees: symlinked directories, files deleted
from disk but alive in HEAD, uncommitted leftovers, git's own directory, killed writers, contention."""

from __future__ import annotations

from pathlib import Path

from memhtml.contracts.paths import slug_with_ordinal
from tests.conftest import git, run_cli, run_cli_concurrently

FACT = ["--type", "semantic", "--claim", "The retry budget of the gateway is 3."]


def test_a_symlinked_directory_never_leads_a_write_out_of_the_store(store_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (store_root / "projects" / "link").symlink_to(outside, target_is_directory=True)
    head = git(store_root, "rev-parse", "HEAD")
    for extra in (["--workspace", "link"], ["--path", "projects/link/escape.html"]):
        answer = run_cli("write", "--repo", str(store_root), "--title", "Escape", *FACT, *extra)
        assert answer.status == 1, answer.stdout
        assert answer.envelope["code"] == "ERR_INVALID_MEMORY" and answer.envelope["stored"] is False
    assert list(outside.iterdir()) == []
    assert git(store_root, "rev-parse", "HEAD") == head


def test_a_path_alive_in_head_is_occupied_even_when_deleted_from_disk(store_root: Path) -> None:
    first = run_cli("write", "--repo", str(store_root), "--title", "Same", *FACT)
    (store_root / first.data["path"]).unlink()
    second = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "Same",
        "--type",
        "semantic",
        "--claim",
        "A second fact entirely.",
    )
    assert second.data["path"] == "areas/inbox/same-2.html"
    assert git(store_root, "show", "--name-status", "--format=", "HEAD").split() == [
        "A",
        "areas/inbox/same-2.html",
    ]
    explicit = run_cli(
        "write",
        "--repo",
        str(store_root),
        "--title",
        "Other",
        "--type",
        "semantic",
        "--claim",
        "A third fact.",
        "--path",
        first.data["path"],
    )
    assert explicit.status == 1 and explicit.envelope["code"] == "ERR_WRITE_CONFLICT"


def test_an_uncommitted_leftover_never_answers_unchanged(store_root: Path) -> None:
    written = run_cli("write", "--repo", str(store_root), "--title", "Leftover", *FACT)
    text = (store_root / written.data["path"]).read_text()
    # Simulate a writer killed before its commit: the same bytes, untracked, at another path.
    git(store_root, "rm", "-q", "--cached", written.data["path"])
    git(store_root, "commit", "-q", "-m", "forget it")
    (store_root / written.data["path"]).unlink()
    (store_root / "areas/inbox/leftover-orphan.html").write_text(text)
    assert run_cli("index", "update", "--repo", str(store_root)).status == 0
    again = run_cli("write", "--repo", str(store_root), "--title", "Leftover", *FACT)
    assert again.status == 0 and again.data["outcome"] == "written", again.stdout
    assert git(store_root, "show", "--name-only", "--format=", "HEAD").split() == [again.data["path"]]


def test_paths_into_git_or_hidden_directories_are_not_memory_paths(store_root: Path) -> None:
    for path in ("projects/.git/x.html", "projects/.GIT/x.html", "areas/.hidden/x.html", "areas/a\nb.html"):
        strict = run_cli(
            "write", "--repo", str(store_root), "--title", "Hidden", *FACT, "--path", path, "--strict-path"
        )
        assert strict.status == 1 and strict.envelope["code"] == "ERR_INVALID_MEMORY", path
    loose = run_cli("write", "--repo", str(store_root), "--title", "Hidden", *FACT, "--path", "projects/.git/x.html")
    assert loose.data["path"] == "areas/inbox/hidden.html"
    assert git(store_root, "status", "--porcelain", "--untracked-files=all") == ""


def test_a_killed_writer_leaves_nothing_that_breaks_the_next_one(store_root: Path) -> None:
    stale = store_root / ".git" / "memhtml-index-999999-deadbeef"
    stale.write_bytes(b"left by a killed writer")
    answer = run_cli("write", "--repo", str(store_root), "--title", "After a crash", *FACT)
    assert answer.status == 0
    assert not stale.exists()
    assert list((store_root / ".git").glob("memhtml-index-*")) == []


def test_contended_identical_writes_store_each_fact_once(store_root: Path) -> None:
    before = int(git(store_root, "rev-list", "--count", "HEAD"))
    answers = run_cli_concurrently(
        [
            [
                "write",
                "--repo",
                str(store_root),
                "--title",
                f"Fact {i % 4}",
                "--type",
                "semantic",
                "--claim",
                f"Shared fact number {i % 4}.",
            ]
            for i in range(12)
        ]
    )
    assert [answer.status for answer in answers] == [0] * 12, [answer.stdout for answer in answers]
    outcomes = [answer.data["outcome"] for answer in answers]
    assert sorted(outcomes) == ["unchanged"] * 8 + ["written"] * 4
    assert int(git(store_root, "rev-list", "--count", "HEAD")) == before + 4
    memory_files = sorted(str(p.relative_to(store_root)) for p in (store_root / "areas/inbox").glob("*.html"))
    assert memory_files == [f"areas/inbox/fact-{n}.html" for n in range(4)]


def test_collision_suffix_of_an_eighty_character_slug_matches_the_original() -> None:
    assert slug_with_ordinal("a" * 80, 2) == "a" * 78 + "-2"
    assert slug_with_ordinal("a" * 78 + "-2", 2) == "a" * 77 + "-2"


def test_the_dedupe_question_sees_a_commit_that_landed_while_the_index_was_open(store_root: Path) -> None:
    """A writer that opened the index, then waited for the store lock while another writer committed,
    must not dedupe against its stale view (it would store the same fact twice)."""
    import datetime as dt

    from memhtml.operations.indexing import writable_index
    from memhtml.operations.write import WriteRequest, place_memory
    from memhtml.store.repository import open_store

    store = open_store(store_root)
    request = WriteRequest(title="Landed", memory_type="semantic", claim="This landed meanwhile.")
    placed = place_memory(request, dt.datetime(2026, 11, 30, tzinfo=dt.UTC))
    with writable_index(store) as session:
        # Another writer's commit lands (plain git, as any other process could).
        (store_root / "areas/inbox/landed.html").write_text(placed.file_text)
        git(store_root, "add", "areas/inbox/landed.html")
        git(store_root, "commit", "-qm", "another writer")
        owners = session.owners([placed.content_hash])
    assert owners[placed.content_hash].path == "areas/inbox/landed.html"
