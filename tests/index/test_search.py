"""Search, recall, list, neighbors, resolve, reinforce and the state sidecar against real git and DuckDB."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memhtml.html.prose import prose_article
from memhtml.html.template import MemoryHead, finish_article, render_memory_file
from tests.conftest import git, run_cli


def memory_file(
    title: str,
    claim: str,
    *,
    memory_type: str = "semantic",
    at: str = "2026-01-02T03:04:05Z",
    article: str | None = None,
    **head: Any,
) -> str:
    inner, digest = finish_article(article if article is not None else prose_article(claim, []))
    meta = MemoryHead(
        title=title, memory_type=memory_type, status="active", created=at, updated=at, content_hash=digest, **head
    )
    return render_memory_file(meta, inner)


def commit_files(root: Path, files: dict[str, str], message: str = "hand-made memories") -> str:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(root, "add", "--", *files)
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def search(root: Path, *args: str) -> dict[str, Any]:
    answer = run_cli("search", "--repo", str(root), *args)
    assert answer.status == 0, answer.stdout + answer.stderr
    return answer.data


def paths(data: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in data["hits"]]


@pytest.fixture
def corpus(store_root: Path) -> Path:
    commit_files(
        store_root,
        {
            "resources/billing/invoice.html": memory_file(
                "Invoice", "Invoice INV-2024-001 was paid twice.", tags=["billing"], entities=["service:billing"]
            ),
            "resources/hardware/gpu.html": memory_file(
                "GPU", "The render box has an RTX 4090 card.", tags=["hardware"], at="2026-02-02T00:00:00Z"
            ),
            "resources/releases/agent.html": memory_file(
                "Agent release", "Agent v5.8.4 fixed the memory leak.", at="2026-03-02T00:00:00Z"
            ),
            "areas/inbox/apple.html": memory_file("Lunch", "我今天吃了苹果", at="2026-04-02T00:00:00Z"),
            "projects/payments/pool.html": memory_file(
                "Pool ceiling", "The connection pool ceiling is 64.", at="2026-05-02T00:00:00Z"
            ),
            "areas/inbox/ceiling-pool.html": memory_file(
                "Ceiling", "A ceiling fan hangs over the pool table.", at="2026-06-02T00:00:00Z"
            ),
            "areas/inbox/tasks/todo.html": memory_file(
                "Todo", "Pay the invoice INV-2024-001 again.", memory_type="task", task_status="todo"
            ),
        },
    )
    return store_root


def test_identifiers_are_found_as_typed_and_by_their_parts(corpus: Path) -> None:
    assert paths(search(corpus, "INV-2024-001")) == ["resources/billing/invoice.html"]
    assert paths(search(corpus, "inv 2024")) == ["resources/billing/invoice.html"]
    assert paths(search(corpus, "RTX 4090")) == ["resources/hardware/gpu.html"]
    assert paths(search(corpus, "rtx4090")) == ["resources/hardware/gpu.html"]  # by its letters and digits
    assert paths(search(corpus, "v5.8.4")) == ["resources/releases/agent.html"]
    assert paths(search(corpus, "5.8.4")) == ["resources/releases/agent.html"]
    assert paths(search(corpus, "ＲＴＸ ４０９０")) == ["resources/hardware/gpu.html"]  # full-width


def test_a_version_glued_to_its_name_is_found_by_the_version_alone(store_root: Path) -> None:
    commit_files(
        store_root,
        {
            "resources/hardware/render.html": memory_file(
                "Render box", "The render box runs Python3.11 with CUDA12.4."
            ),
            "resources/kafka/brokers.html": memory_file("Kafka", "The kafka cluster has 3 brokers in region east."),
            "resources/webhooks/retry.html": memory_file("Retry", "Retry failed webhooks at most 11 times."),
        },
    )
    assert paths(search(store_root, "3.11")) == ["resources/hardware/render.html"]
    assert paths(search(store_root, "python 3.11")) == ["resources/hardware/render.html"]
    assert paths(search(store_root, "cuda 12.4")) == ["resources/hardware/render.html"]


def test_cjk_is_found_by_character_pairs(corpus: Path) -> None:
    assert paths(search(corpus, "苹果")) == ["areas/inbox/apple.html"]
    assert paths(search(corpus, "苹是果")) == []


def test_quoted_phrases_need_the_words_side_by_side(corpus: Path) -> None:
    both = paths(search(corpus, "pool ceiling"))
    assert sorted(both) == ["areas/inbox/ceiling-pool.html", "projects/payments/pool.html"]
    assert paths(search(corpus, '"pool ceiling"')) == ["projects/payments/pool.html"]
    assert paths(search(corpus, '"ceiling pool"')) == []


def test_the_relevance_floor_returns_nothing_for_an_unrelated_query(corpus: Path) -> None:
    nothing = search(corpus, "zebra quantum marmalade")
    assert nothing["hits"] == [] and nothing["arms"] == []
    # Recency cannot pull in the newest memory: it shares no word with the query.
    assert paths(search(corpus, "invoice")) == ["resources/billing/invoice.html"]


def test_tasks_stay_out_unless_asked_for(corpus: Path) -> None:
    assert "areas/inbox/tasks/todo.html" not in paths(search(corpus, "invoice"))
    assert paths(search(corpus, "invoice", "--type", "task")) == ["areas/inbox/tasks/todo.html"]


def test_scope_filters(corpus: Path) -> None:
    assert paths(search(corpus, "pool", "--workspace", "payments")) == ["projects/payments/pool.html"]
    assert paths(search(corpus, "invoice", "--tag", "billing")) == ["resources/billing/invoice.html"]
    empty = search(corpus, "invoice", "--entity", "service:nothing")
    assert empty["hits"] == [] and empty["scopeEmpty"] is True and empty["entityScope"] == "service:nothing"
    assert paths(search(corpus, "invoice", "--entity", "service:billing")) == ["resources/billing/invoice.html"]


def test_facets_same_name_or_different_names_and(store_root: Path) -> None:
    def incident(title: str, kind: str, tier: str) -> str:
        article = (
            f"<p><mark>{title} outage happened.</mark></p>"
            f"<dl><dt>doc-type</dt><dd>{kind}</dd><dt>tier</dt><dd>{tier}</dd></dl>"
        )
        return memory_file(title, "", article=article)

    commit_files(
        store_root,
        {
            "areas/inbox/a.html": incident("Alpha", "incident", "1"),
            "areas/inbox/b.html": incident("Beta", "incident", "2"),
            "areas/inbox/c.html": incident("Gamma", "review", "2"),
        },
    )
    assert sorted(paths(search(store_root, "outage", "--facet", "doc-type=incident"))) == [
        "areas/inbox/a.html",
        "areas/inbox/b.html",
    ]
    assert paths(search(store_root, "outage", "--facet", "doc-type=incident", "--facet", "tier=2")) == [
        "areas/inbox/b.html"
    ]
    assert sorted(paths(search(store_root, "outage", "--facet", "tier=1", "--facet", "tier=2"))) == [
        "areas/inbox/a.html",
        "areas/inbox/b.html",
        "areas/inbox/c.html",
    ]


def test_a_signal_tied_across_every_candidate_does_not_vote(store_root: Path) -> None:
    # One batch, one instant: recency cannot tell these apart, so it must not reorder them.
    files = {
        f"areas/inbox/m{n:02d}.html": memory_file(f"M{n}", f"Kestrel sighting number {n}" + " kestrel" * n + ".")
        for n in range(12)
    }
    commit_files(store_root, files)
    data = search(store_root, "kestrel")
    assert "recency" not in data["arms"] and "salience" not in data["arms"]
    scores = [hit["score"] for hit in data["hits"]]
    assert scores == sorted(scores, reverse=True)
    # BM25 prefers more occurrences of the word: the memory with 11 repeats leads.
    assert data["hits"][0]["path"] == "areas/inbox/m11.html"


def test_as_of_on_event_time_reads_the_validity_window(store_root: Path) -> None:
    commit_files(
        store_root,
        {
            "areas/inbox/old.html": memory_file(
                "Old", "The ceiling was 64 units.", valid_from="2025-01-01", valid_until="2026-01-01T00:00:00Z"
            ),
            "areas/inbox/new.html": memory_file("New", "The ceiling is 96 units.", valid_from="2026-01-01T00:00:00Z"),
        },
    )
    assert paths(search(store_root, "ceiling", "--as-of", "2025-06-01")) == ["areas/inbox/old.html"]
    assert paths(search(store_root, "ceiling", "--as-of", "2026-06-01")) == ["areas/inbox/new.html"]


def test_as_of_a_commit_reads_the_tree_of_that_commit(store_root: Path) -> None:
    first = commit_files(store_root, {"areas/inbox/first.html": memory_file("First", "Falcon one lands.")})
    second = commit_files(store_root, {"areas/inbox/second.html": memory_file("Second", "Falcon two lands.")})
    assert paths(search(store_root, "falcon", "--as-of", first[:10])) == ["areas/inbox/first.html"]
    assert sorted(paths(search(store_root, "falcon", "--as-of", second))) == [
        "areas/inbox/first.html",
        "areas/inbox/second.html",
    ]
    # Archive the first afterwards: it is still what the store believed at `second`.
    (store_root / "archive/2026/areas/inbox").mkdir(parents=True)
    git(store_root, "mv", "areas/inbox/first.html", "archive/2026/areas/inbox/first.html")
    archived = store_root / "archive/2026/areas/inbox/first.html"
    archived.write_text(
        archived.read_text()
        .replace('<meta name="memhtml-status" content="active">', '<meta name="memhtml-status" content="archived">')
        .replace(
            '<meta name="memhtml-content-hash"',
            '<meta name="memhtml-archived" content="2026-07-01T00:00:00Z">\n<meta name="memhtml-content-hash"',
        )
    )
    git(store_root, "commit", "-q", "-am", "archive first")
    assert paths(search(store_root, "falcon")) == ["areas/inbox/second.html"]
    assert sorted(paths(search(store_root, "falcon", "--as-of", second))) == [
        "archive/2026/areas/inbox/first.html",
        "areas/inbox/second.html",
    ]
    unknown = run_cli("search", "--repo", str(store_root), "falcon", "--as-of", "deadbeef")
    assert unknown.status == 2 and unknown.envelope["code"] == "ERR_INVALID_FLAG"


def test_recall_quotes_under_the_budget_and_lists_the_rest(corpus: Path) -> None:
    answer = run_cli("recall", "--repo", str(corpus), "pool ceiling", "--budget", "40")
    memories = answer.data["memories"]
    quoted = [item["path"] for item in memories["disclosed"]]
    listed = [item["path"] for item in memories["indexLines"]]
    assert sorted(quoted + listed) == ["areas/inbox/ceiling-pool.html", "projects/payments/pool.html"]
    assert memories["spentChars"] == sum(len(item["body"]) for item in memories["disclosed"]) <= 40
    assert memories["truncated"] is bool(listed)
    nothing_quoted = run_cli("recall", "--repo", str(corpus), "pool ceiling", "--budget", "0").data
    assert nothing_quoted["memories"]["disclosed"] == [] and len(nothing_quoted["memories"]["indexLines"]) == 2


def test_list_pages_in_path_order(corpus: Path) -> None:
    first = run_cli("list", "--repo", str(corpus), "--limit", "3").data
    second = run_cli("list", "--repo", str(corpus), "--limit", "3", "--cursor", first["nextCursor"]).data
    third = run_cli("list", "--repo", str(corpus), "--limit", "3", "--cursor", second["nextCursor"]).data
    listed = [item["path"] for page in (first, second, third) for item in page["files"]]
    expected = sorted(str(path.relative_to(corpus)) for path in corpus.glob("*/**/*.html"))
    assert listed == expected and third["nextCursor"] is None
    assert [item["path"] for item in run_cli("list", "--repo", str(corpus), "--type", "task").data["files"]] == [
        "areas/inbox/tasks/todo.html"
    ]


def test_neighbors_resolve_and_reinforce(store_root: Path) -> None:
    old = memory_file("Old ceiling", "The ceiling was 64.", superseded_by="/areas/inbox/new-ceiling.html")
    commit_files(
        store_root,
        {
            "archive/2026/areas/inbox/old-ceiling.html": old.replace('content="active"', 'content="archived"'),
            "areas/inbox/new-ceiling.html": memory_file(
                "New ceiling",
                "The ceiling is 96.",
                links=[
                    ("memhtml-supersedes", "/archive/2026/areas/inbox/old-ceiling.html"),
                    ("memhtml-relates-to", "/areas/inbox/pool.html"),
                ],
            ),
            "areas/inbox/pool.html": memory_file(
                "Pool", "The pool is shared.", links=[("memhtml-caused-by", "/areas/inbox/cause.html")]
            ),
            "areas/inbox/cause.html": memory_file("Cause", "Load doubled."),
        },
    )
    near = run_cli("neighbors", "--repo", str(store_root), "areas/inbox/new-ceiling.html").data
    assert [(node["path"], node["hop"], node["rel"]) for node in near["nodes"]] == [
        ("archive/2026/areas/inbox/old-ceiling.html", 1, "supersedes"),
        ("areas/inbox/pool.html", 1, "relates_to"),
    ]
    far = run_cli("neighbors", "--repo", str(store_root), "areas/inbox/new-ceiling.html", "--depth", "2").data
    assert ("areas/inbox/cause.html", 2) in [(node["path"], node["hop"]) for node in far["nodes"]]
    missing = run_cli("neighbors", "--repo", str(store_root), "areas/inbox/none.html")
    assert missing.status == 1 and missing.envelope["code"] == "ERR_PATH_NOT_FOUND"
    resolved = run_cli("resolve", "--repo", str(store_root), "areas/inbox/old-ceiling.html").data
    assert resolved["stopReason"] == "live" and resolved["path"] == "areas/inbox/new-ceiling.html"
    assert [step["via"] for step in resolved["steps"]] == ["archive_move", "supersedes"]
    assert run_cli("resolve", "--repo", str(store_root), "areas/inbox/never.html").data["stopReason"] == "unindexed"
    # A read right before reinforcing must not swallow the signal.
    assert run_cli("read", "--repo", str(store_root), "areas/inbox/pool.html").status == 0
    first = run_cli("reinforce", "--repo", str(store_root), "areas/inbox/pool.html", "--signal", "positive").data
    assert first["bumped"] == ["areas/inbox/pool.html"] and first["cooledDown"] == []
    again = run_cli("reinforce", "--repo", str(store_root), "areas/inbox/pool.html", "--signal", "positive").data
    assert again["bumped"] == [] and again["cooledDown"] == ["areas/inbox/pool.html"]
    ghost = run_cli("reinforce", "--repo", str(store_root), "areas/inbox/ghost.html")
    assert ghost.status == 1 and ghost.envelope["code"] == "ERR_PATH_NOT_FOUND"


def test_state_export_and_import_round_trip(corpus: Path) -> None:
    run_cli("read", "--repo", str(corpus), "projects/payments/pool.html")
    run_cli("reinforce", "--repo", str(corpus), "projects/payments/pool.html", "--signal", "positive")
    exported = run_cli("state", "export", "--repo", str(corpus)).data
    assert exported["rows"] == 1 and exported["written"] is True
    assert [line for line in git(corpus, "show", "--name-only", "--format=%s", "HEAD").split("\n") if line] == [
        "memhtml(state): export 1 access rows to the committed sidecar",
        ".memhtml/state/access.jsonl",
    ]
    again = run_cli("state", "export", "--repo", str(corpus)).data
    assert again["written"] is False and again["commitSha"] is None
    (corpus / ".memhtml/state.duckdb").unlink()
    imported = run_cli("state", "import", "--repo", str(corpus)).data
    assert imported["restored"] == 1
    status = run_cli("index", "status", "--repo", str(corpus)).data
    assert status["hasState"] is True


def test_four_searchers_and_one_writer_never_fail(corpus: Path) -> None:
    searchers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import subprocess, sys\n"
                "for _ in range(6):\n"
                f"    done = subprocess.run([sys.executable, '-m', 'memhtml', 'search', '--repo', {str(corpus)!r}, 'pool'],"
                " capture_output=True, text=True)\n"
                "    assert done.returncode == 0, done.stdout + done.stderr\n",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys\n"
            "for n in range(6):\n"
            f"    done = subprocess.run([sys.executable, '-m', 'memhtml', 'write', '--repo', {str(corpus)!r}, '--title',"
            " f'Pool note {n}', '--type', 'semantic', '--claim', f'Pool note number {n}.'], capture_output=True, text=True)\n"
            "    assert done.returncode == 0, done.stdout + done.stderr\n",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for process in [*searchers, writer]:
        _, errors = process.communicate(timeout=240)
        assert process.returncode == 0, errors
    assert len(paths(search(corpus, "pool note"))) == 6


def test_the_sql_ranking_agrees_with_the_reference_math(store_root: Path) -> None:
    """BM25 order and fused scores recomputed independently from the texts, with the domain functions."""
    from memhtml.domain.ranking import ARM_WEIGHTS, bm25_idf, bm25_term_score, rrf_fuse
    from memhtml.domain.tokens import document_terms, parse_query
    from memhtml.index.database import open_database
    from memhtml.index.scope import Scope
    from memhtml.index.search import RECENCY_BAND_RATIO, fused_search

    claims = {
        "areas/inbox/a.html": ("Heron nests by the river heron heron.", "2026-01-01T00:00:00Z"),
        "areas/inbox/b.html": ("A heron was seen near the old mill.", "2026-03-01T00:00:00Z"),
        "areas/inbox/c.html": ("Herons and egrets share the heron colony by the heron river.", "2026-02-01T00:00:00Z"),
        "areas/inbox/d.html": ("The river flooded the lower field.", "2026-04-01T00:00:00Z"),
    }
    commit_files(
        store_root, {path: memory_file(path[-6:-5].upper(), claim, at=at) for path, (claim, at) in claims.items()}
    )
    assert run_cli("index", "rebuild", "--repo", str(store_root)).status == 0
    query = parse_query("heron river")
    texts = {path: f"{path[-6:-5].upper()}\n{claim}\n{claim}" for path, (claim, _) in claims.items()}
    terms = {path: document_terms(text) for path, text in texts.items()}
    lengths = {path: sum(counts.values()) for path, counts in terms.items()}
    average = sum(lengths.values()) / len(lengths)

    def bm25(path: str) -> float:
        total = 0.0
        for term in query.terms:
            df = sum(1 for counts in terms.values() if counts.get(term))
            if terms[path].get(term):
                total += bm25_term_score(bm25_idf(len(terms), df), terms[path][term], lengths[path], average)
        return total

    # All terms where some memory has them all: a and c have both words, b and d one each.
    expected_fts = sorted(["areas/inbox/a.html", "areas/inbox/c.html"], key=lambda path: (-bm25(path), path))
    with open_database(store_root, read_only=True) as database:
        hits, arms = fused_search(database, query, Scope(), pool=10)
    assert [hit.path for hit in hits if "fts" in hit.arm_ranks] == expected_fts
    # Recency orders the matches within the band of the best BM25; here both are in it, at different times.
    assert min(bm25(path) for path in expected_fts) >= RECENCY_BAND_RATIO * max(bm25(path) for path in expected_fts)
    assert "recency" in arms
    by_arm: dict[str, list[tuple[int, str]]] = {}
    for hit in hits:
        for arm, rank in hit.arm_ranks.items():
            by_arm.setdefault(arm, []).append((rank, hit.path))
    ranked = {arm: [path for _, path in sorted(pairs)] for arm, pairs in by_arm.items()}
    expected = rrf_fuse(ranked, ARM_WEIGHTS)
    assert [(hit.path, round(hit.score, 9)) for hit in hits] == [(path, round(score, 9)) for path, score in expected]


def test_recency_orders_near_equal_matches_and_never_promotes_a_weaker_newer_one(store_root: Path) -> None:
    from memhtml.domain.tokens import parse_query
    from memhtml.index.database import open_database
    from memhtml.index.scope import Scope
    from memhtml.index.search import fused_search

    claims = {
        "areas/inbox/closed.html": ("The heron office closed for the winter.", "2026-01-01T00:00:00Z"),
        "areas/inbox/reopened.html": ("The heron office reopened for the spring.", "2026-03-01T00:00:00Z"),
        "areas/inbox/sighting.html": ("A heron flew over the harbour wall.", "2026-05-01T00:00:00Z"),
    }
    commit_files(store_root, {path: memory_file("Note", claim, at=at) for path, (claim, at) in claims.items()})
    assert run_cli("index", "rebuild", "--repo", str(store_root)).status == 0
    # No memory has all three words, so any of them will do: the sighting matches on `heron` alone.
    with open_database(store_root, read_only=True) as database:
        hits, _ = fused_search(database, parse_query("heron office zebra"), Scope(), pool=10)
    ranks = {hit.path: hit.arm_ranks for hit in hits}
    assert set(ranks) == set(claims)
    assert ranks["areas/inbox/reopened.html"]["recency"] == 1
    assert ranks["areas/inbox/closed.html"]["recency"] == 2
    assert "recency" not in ranks["areas/inbox/sighting.html"]  # newest, but far weaker: no recency vote
    assert [hit.path for hit in hits][:2] == ["areas/inbox/reopened.html", "areas/inbox/closed.html"]
