"""A rebuild loads its projections through staging files (`index/staging.py`, `index/bulkload.py`): the
rows it leaves are those the row-wise path of an update stores for the same commits, whatever the
slicing, and no staging file outlives the rebuild."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from memhtml.index import indexer, parallel
from memhtml.index.database import database_paths, open_database
from memhtml.index.indexer import rebuild, update
from memhtml.store.gitread import GitCorpusReader
from tests.conftest import git
from tests.index.test_indexer import snapshot
from tests.index.test_search import commit_files, memory_file

NOW = "2026-11-30T06:00:00Z"

RICH_ARTICLE = (
    '<p><mark>The pool ceiling of {name} is 64</mark> since <time datetime="2026-03-0{day}">March</time>.</p>'
    '<dl><dt>ceiling</dt><dd><data value="64">64</data> connections</dd><dt>owner</dt><dd>team {name}</dd></dl>'
    '<p>See <q cite="https://example.invalid/{name}">pools are shared</q> and <cite>The {name} runbook</cite>;'
    ' <dfn>ceiling</dfn> means INV-2024-00{day} for <code data-lang="python">pool.max</code>.</p>'
    "<p>我今天吃了苹果 in 東京 ＲＴＸ４０９０ v5.8.{day}</p>"
)


def rich_memory(name: str, day: int, title: str | None = None, **head: object) -> str:
    return memory_file(
        title or f"Pool {name}",
        "",
        article=RICH_ARTICLE.format(name=name, day=day),
        tags=("db", f"pool-{name}"),
        entities=("service:db", f"person:{name}"),
        **head,  # type: ignore[arg-type]
    )


def build_history(root: Path) -> None:
    """Commits of rich memories, a copy of one memory at a later path in another commit, a task, a file
    that fails the format check and one that is not UTF-8; the index follows each commit row by row."""
    batches: list[dict[str, str]] = [
        {
            f"resources/db/pool-{name}.html": rich_memory(name, day, confidence=0.125 * day, importance=day)
            for day, name in enumerate(("alpha", "bravo", "charlie"), start=1)
        },
        {
            "projects/payments/retry.html": memory_file(
                "Retry budget",
                "The retry budget of the gateway is 3.",
                links=(("memhtml-relates-to", "/resources/db/pool-alpha.html"),),
            ),
            "areas/ops/task.html": memory_file(
                "Rotate", "Rotate the deploy key.", memory_type="task", task_status="todo"
            ),
        },
        {
            # A second active copy of an article, at a path after the first: listed, not held.
            "resources/db/zz-copy-of-alpha.html": rich_memory(
                "alpha", 1, title="Pool alpha zebracopy", confidence=0.125, importance=1
            ),
            "areas/inbox/broken.html": "<p>no article</p>",
        },
        {
            "areas/inbox/latin1.html": "caf\xe9",
            **{f"areas/inbox/m{number:02d}.html": rich_memory(f"m{number}", number % 9 + 1) for number in range(9)},
        },
    ]
    for number, files in enumerate(batches):
        if "areas/inbox/latin1.html" in files:
            target = root / "areas/inbox/latin1.html"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files.pop("areas/inbox/latin1.html").encode("latin-1"))
            git(root, "add", "--", "areas/inbox/latin1.html")
        commit_files(root, files, message=f"batch {number}")
        with open_database(root) as database:
            update(database, GitCorpusReader(root), NOW)


@pytest.mark.parametrize("slice_files", [2, 5, indexer.REBUILD_SLICE])
def test_a_staged_rebuild_stores_the_rows_of_the_row_wise_path(
    store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slice_files: int
) -> None:
    build_history(store_root)
    followed = snapshot(store_root)
    assert followed["duplicates"], "the scenario lists a second copy"
    assert any(row for row in followed["children"]["file_facets"] if row[3] == 64.0)
    assert any(row[2] is None for row in followed["children"]["file_citations"])  # a <cite> has no href
    copy = tmp_path / "copy"
    shutil.copytree(store_root, copy, symlinks=True)
    for database_file in database_paths(copy):
        database_file.unlink()
    monkeypatch.setattr(indexer, "REBUILD_SLICE", slice_files)
    monkeypatch.setattr(parallel, "CHUNK_FILES", 2)  # several staging files a slice
    with open_database(copy) as database:
        report = rebuild(database, GitCorpusReader(copy), NOW)
    assert snapshot(copy) == followed
    with open_database(copy, read_only=True) as database:
        # The copy's own title word is a term of no held memory: neither path stores it.
        assert database.value("SELECT count(*) FROM terms WHERE term = 'zebracopy'") == 0
        assert database.value("SELECT count(*) FROM terms WHERE term = 'alpha'") == 1
    skipped = {item.path: item.reason for item in report.skipped}
    assert skipped["resources/db/zz-copy-of-alpha.html"] == (
        "duplicate of resources/db/pool-alpha.html: same content hash, both active"
    )
    assert set(skipped) == {"resources/db/zz-copy-of-alpha.html", "areas/inbox/broken.html", "areas/inbox/latin1.html"}
    assert report.files_indexed == 14


def test_doc_ids_follow_path_order_and_postings_are_clustered_by_term(store_root: Path) -> None:
    build_history(store_root)
    for database_file in database_paths(store_root):
        database_file.unlink()
    with open_database(store_root) as database:
        rebuild(database, GitCorpusReader(store_root), NOW)
        paths_by_id = [row[0] for row in database.rows("SELECT path FROM files ORDER BY doc_id")]
        postings = database.rows("SELECT term_id, doc_id FROM postings")  # in stored order
        terms = [row[0] for row in database.rows("SELECT term FROM terms ORDER BY term_id")]
    assert paths_by_id == sorted(paths_by_id)
    assert postings == sorted(postings)
    assert terms == sorted(terms)  # one slice: new terms are numbered in sorted order


def test_no_staging_file_outlives_a_rebuild_that_lands_or_fails(
    store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_history(store_root)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with open_database(store_root) as database:
        rebuild(database, GitCorpusReader(store_root), NOW)
    assert list(scratch.iterdir()) == []

    from memhtml.index import bulkload

    def fail_after_reading(self: bulkload.StagedLoader, *args: object, **files: str) -> list[object]:
        assert all(Path(name).is_file() for name in files.values())  # the slice's staging files were written
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(bulkload.StagedLoader, "_load", fail_after_reading)
    with open_database(store_root) as database, pytest.raises(RuntimeError):
        rebuild(database, GitCorpusReader(store_root), NOW)
    assert list(scratch.iterdir()) == []
    assert snapshot(store_root)["files"], "the failed rebuild left the index it found"


def test_the_readers_object_limit_covers_the_longest_staged_line_in_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB refuses a JSON line longer than its reader's `maximum_object_size` allows, counted in bytes;
    a staged line of CJK text takes three bytes a character. The floor is lowered below the lines here,
    so the limit has to come from them."""
    from memhtml.index import bulkload
    from memhtml.index.staging import stage_items

    article = "东京的连接池上限是六十四。" * 400  # 5,200 characters, 15,600 bytes in UTF-8
    files = {
        "resources/db/tokyo.html": memory_file("Tokyo pool", "", article=f"<p><mark>{article}</mark></p>"),
        "resources/db/plain.html": memory_file("Plain pool", "The pool ceiling is 64."),
    }
    items = [(path, f"{number:040x}", text.encode()) for number, (path, text) in enumerate(sorted(files.items()))]
    chunk = stage_items(items, NOW)
    assert chunk.skipped == [] and chunk.rows_lines and chunk.children_lines
    lines = [line for staged in (chunk.rows_lines, chunk.children_lines) for line in staged.split(b"\n") if line]
    longest_bytes = max(len(line) for line in lines)
    assert longest_bytes > 3 * len(article)  # the article's characters, as UTF-8, are in the line

    assert bulkload.object_size_limit([chunk]) == 16 << 20  # DuckDB's own default: its reader is fastest
    monkeypatch.setattr(bulkload, "_OBJECT_BYTES_FLOOR", 0)
    assert bulkload.object_size_limit([chunk]) > longest_bytes
    assert bulkload.object_size_limit([chunk, chunk._replace(longest_line=0)]) > longest_bytes
    assert bulkload.object_size_limit([]) == 1


def test_a_children_record_carries_every_child_table_a_file_has_rows_in_and_no_other() -> None:
    from memhtml.index.projection import FileProjection
    from memhtml.index.staging import CHILD_COLUMNS, child_key, children_record

    every = FileProjection(
        path="areas/x.html",
        row={},
        tags=["db", "pool"],
        entities=[("service", "db")],
        facets=[("ceiling", "64", 64.0)],
        citations=[("pools are shared", "https://example.invalid/")],
        edges=[("memhtml-relates-to", "areas/y.html", "memory")],
        terms={},
    )
    record = children_record(every)
    assert set(record) == {"path"} | {
        child_key(table, column) for table, cols in CHILD_COLUMNS.items() for column in cols
    }
    assert record[child_key("file_tags", "tag")] == ["db", "pool"]
    assert record[child_key("file_facets", "numeric_value")] == [64.0]
    assert record[child_key("edges", "dst_path")] == ["areas/y.html"]

    only_tags = every._replace(entities=[], facets=[], citations=[], edges=[])
    assert set(children_record(only_tags)) == {"path", child_key("file_tags", "tag")}
    assert children_record(only_tags._replace(tags=[])) == {"path": "areas/x.html"}
