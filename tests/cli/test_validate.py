"""`memhtml validate` end to end: real executable, real git, files edited by hand in the working tree
and staged in the git index."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memhtml.contracts.limits import MAX_MEMORY_BYTES
from tests.conftest import Answer, git, memory_files, run_cli

GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
PASSWORD = "pa55-W0rd-" + "Zq8xLm3"
POOL = "resources/db/pool-ceiling.html"
BODY = "Measured under load in staging."


def write(root: Path, title: str, *extra: str) -> str:
    answer = run_cli("write", "--repo", str(root), "--title", title, *extra)
    assert answer.status == 0, answer.stdout + answer.stderr
    path = answer.data["path"]
    assert isinstance(path, str)
    return path


_WRITTEN: dict[Path, str] = {}  # each store's first memory, as written


def valid_text(root: Path) -> str:
    """The text of a memory as the write path stored it (written once per store, kept as written)."""
    if root not in _WRITTEN:
        write(root, "Pool ceiling", "--claim", "The connection pool ceiling is 64.", "--type", "semantic",
              "--tag", "db", "--body", BODY)  # fmt: skip
        _WRITTEN[root] = (root / POOL).read_text(encoding="utf-8")
    return _WRITTEN[root]


def put(root: Path, relative: str, content: str | bytes) -> None:
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8")


def with_body(root: Path, body: str) -> str:
    """A valid memory whose body paragraph is `body` (markup allowed): a hand edit."""
    return valid_text(root).replace(BODY, body)


def validate(root: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Answer:
    return run_cli("validate", "--repo", str(root), *args, cwd=cwd, env=env)


def reasons(answer: Answer, path: str) -> list[str]:
    return [item["reason"] for item in answer.envelope["data"]["violations"] if item["path"] == path]


def violations(answer: Answer) -> list[dict[str, Any]]:
    found = answer.envelope["data"]["violations"]
    assert isinstance(found, list)
    return found


# ---------------------------------------------------------------- the working tree


class _FailingPool:
    """A pool that cannot take work (`submit` raises) or whose workers die (`result` raises)."""

    def __init__(self, failing_at: str) -> None:
        self.failing_at = failing_at
        self.submitted = 0

    def submit(self, function: Any, *arguments: Any) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        self.submitted += 1
        if self.failing_at == "submit":
            raise RuntimeError("cannot schedule new futures after shutdown")

        class Dead:
            def result(self) -> Any:
                raise BrokenProcessPool("a worker died")

        return Dead()


@pytest.mark.parametrize("pool_kind", ["workers", "refusing pool", "dying workers"])
def test_a_large_store_is_judged_in_workers_exactly_as_in_one_process(
    store_root: Path, monkeypatch: pytest.MonkeyPatch, pool_kind: str
) -> None:
    from contextlib import contextmanager

    from memhtml.contracts.errors import InvalidMemory
    from memhtml.index import parallel
    from memhtml.operations import validation

    text = valid_text(store_root)
    for number in range(25):  # stale content hashes: a warning each
        put(store_root, f"areas/inbox/edited-{number}.html", with_body(store_root, f"Measured again, run {number}."))
    put(store_root, "areas/inbox/leaky.html", with_body(store_root, f"Use token {GITHUB} here."))
    put(store_root, "resources/db/no-claim.html", text.replace("<mark>", "").replace("</mark>", ""))

    def report() -> dict[str, Any]:
        with pytest.raises(InvalidMemory) as refused:
            validation.validate(store_root, [], staged=False)
        assert refused.value.data is not None
        return dict(refused.value.data)

    one_process = report()
    assert one_process["checked"] == 1 + 25 + 2 and one_process["invalid"] == 2
    assert len(one_process["warnings"]) == 25 + 1  # the 25 edits, and the unmarked file's stale hash
    used: list[object] = []
    real_pool = validation.projection_pool

    @contextmanager
    def watched_pool(file_count: int) -> Any:
        with real_pool(file_count) as pool:
            failing_at = "submit" if pool_kind == "refusing pool" else "result"
            chosen = pool if pool_kind == "workers" else _FailingPool(failing_at)
            used.append(chosen)
            yield chosen

    monkeypatch.setattr(parallel, "PARALLEL_MINIMUM_FILES", 1)
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 2)  # a pool on a one-core machine too
    monkeypatch.setattr(validation, "CHUNK_FILES", 3)  # ten slices, two read ahead
    monkeypatch.setattr(parallel, "CHUNKS_AHEAD", 2)
    monkeypatch.setattr(validation, "projection_pool", watched_pool)
    assert report() == one_process
    assert len(used) == 1 and used[0] is not None
    if isinstance(used[0], _FailingPool):
        assert used[0].submitted == 10  # every slice was offered to the pool, and judged here instead


def test_a_store_written_through_the_doors_is_valid(store_root: Path) -> None:
    valid_text(store_root)
    write(store_root, "Deploy runbook", "--claim", "Drain the VIP before reverting.", "--type", "procedural", "--tag", "deploy",
          "--entity", "service:checkout-api", "--importance", "8", "--confidence", "0.9",
          "--body", "The revert alone leaves connections pinned.")  # fmt: skip
    article = (
        "<p><mark>The cache TTL is 300 seconds.</mark> Set in <code>cache.yml</code>.</p>"
        '<figure><pre><code data-lang="yaml">ttl: 300</code></pre></figure>'
        "<dl><dt>tier</dt><dd>1</dd></dl>"
    )
    write(store_root, "Cache TTL", "--type", "semantic", "--article-html", article, "--event-at", "2026-01-02")
    archived = write(store_root, "Old fact", "--claim", "The old fact was true.", "--type", "semantic")
    assert run_cli("archive", archived, "--reason", "retired", "--repo", str(store_root)).status == 0
    task = run_cli("task", "add", "--title", "Rotate the key", "--due", "2026-12-01", "--repo", str(store_root))
    assert task.status == 0
    answer = validate(store_root)
    assert answer.status == 0, answer.stdout + answer.stderr
    assert answer.envelope["type"] == "validate.report"
    data = answer.data
    assert data["violations"] == [] and data["invalid"] == 0 and data["warnings"] == []
    assert data["checked"] == len(memory_files(store_root)) >= 5
    assert data["source"] == "worktree"


def test_every_violation_of_every_file_is_listed(store_root: Path) -> None:
    text = valid_text(store_root)
    put(store_root, "areas/inbox/no-claim.html",
        text.replace("<mark>", "").replace("</mark>", "").replace(BODY, "Hidden\u202etext. <script>x()</script>"))  # fmt: skip
    put(store_root, "resources/db/leaky.html",
        with_body(store_root, f'Use token {GITHUB} and \u0007 bell. <a href="javascript:go()">go</a>'))  # fmt: skip
    answer = validate(store_root)
    assert answer.status == 1, answer.stdout + answer.stderr
    envelope = answer.envelope
    assert envelope["code"] == "ERR_INVALID_MEMORY" and "violations in 2 of 3" in envelope["error"]
    data = envelope["data"]
    assert data["invalid"] == 2 and data["checked"] == 3
    first = reasons(answer, "areas/inbox/no-claim.html")
    assert any(reason.startswith("invisible character U+202E RIGHT-TO-LEFT OVERRIDE at line") for reason in first)
    assert "no <mark>: the claim span is required" in first
    assert any(reason.startswith("<script> is forbidden") for reason in first)
    second = reasons(answer, "resources/db/leaky.html")
    assert any(reason.startswith("secret detected: github-token") for reason in second)
    assert any(reason.startswith("control character U+0007 at line") for reason in second)
    assert any(reason.startswith("javascript: URL in the href of <a>") for reason in second)
    codes = {item["code"] for item in violations(answer)}
    assert codes == {"ERR_INVALID_MEMORY", "ERR_SECRET_DETECTED", "ERR_INVISIBLE_CHARACTERS"}
    assert all(isinstance(item["line"], int) for item in violations(answer) if "at line" in item["reason"])


def test_a_secret_is_named_by_kind_and_length_never_by_value(store_root: Path) -> None:
    put(store_root, "resources/db/creds.html", with_body(store_root, f"Login with password={PASSWORD} today."))
    put(store_root, "resources/db/token.html", with_body(store_root, f"<!-- {GITHUB} --> Fine."))
    answer = validate(store_root)
    assert answer.status == 1
    assert GITHUB not in answer.stdout + answer.stderr and GITHUB[4:] not in answer.stdout
    assert PASSWORD not in answer.stdout + answer.stderr
    assert any("secret-value" in reason for reason in reasons(answer, "resources/db/creds.html"))
    token = reasons(answer, "resources/db/token.html")  # a comment is committed text too
    assert any(f"github-token (`ghp_…` {len(GITHUB)} characters)" in reason for reason in token)


def test_character_references_are_judged_as_they_decode(store_root: Path) -> None:
    spelled = "ghp&#95;" + GITHUB[4:]
    put(store_root, "resources/db/spelled.html", with_body(store_root, f"Token {spelled} and a&#x200B;b."))
    answer = validate(store_root, "resources/db/spelled.html")
    assert answer.status == 1, answer.stdout
    found = reasons(answer, "resources/db/spelled.html")
    assert any(r.startswith("secret detected: github-token") and "character reference" in r for r in found)
    assert "invisible character U+200B ZERO WIDTH SPACE (written as a character reference)" in found
    assert GITHUB[4:] not in answer.stdout


def test_files_that_are_not_memories_are_skipped_not_refused(store_root: Path) -> None:
    valid_text(store_root)
    put(store_root, "resources/db/notes.txt", f"token={GITHUB}")
    put(store_root, "notes/outside.html", "<p>not a memory</p>")
    answer = validate(store_root, "resources/db/notes.txt", "README.html", "notes/outside.html", POOL)
    assert answer.status == 0, answer.stdout
    data = answer.data
    assert data["checked"] == 1 and data["violations"] == []
    skipped = {item["path"]: item["reason"] for item in data["skipped"]}
    assert skipped["resources/db/notes.txt"].startswith("not an .html file")
    assert skipped["README.html"].startswith("outside the PARA buckets")
    assert skipped["notes/outside.html"].startswith("outside the PARA buckets")
    walked = validate(store_root, ".").data  # the whole tree: only .html files are considered
    assert {item["path"] for item in walked["skipped"]} == {"README.html", "notes/outside.html"}
    assert walked["checked"] == len(memory_files(store_root))


def test_an_html_file_in_a_bucket_on_an_unusable_path_is_a_violation(store_root: Path) -> None:
    text = valid_text(store_root)
    put(store_root, "resources/.drafts/pool.html", text)
    put(store_root, "resources/index.html", text)
    answer = validate(store_root)
    assert answer.status == 1
    assert reasons(answer, "resources/.drafts/pool.html") == [
        "not a usable memory path: it has a hidden segment (one starting with `.`)"
    ]
    assert reasons(answer, "resources/index.html") == [
        "not a usable memory path: `index.html` is reserved for generated artifacts"
    ]


def test_a_directory_argument_checks_only_what_is_under_it(store_root: Path) -> None:
    put(store_root, "areas/inbox/broken.html", with_body(store_root, "<style>p{}</style>"))
    resources = validate(store_root, "resources/")
    assert resources.status == 0 and resources.data["checked"] == 1
    areas = validate(store_root, "areas")
    assert areas.status == 1 and [item["path"] for item in violations(areas)] == ["areas/inbox/broken.html"]
    absolute = validate(store_root, str(store_root / "areas" / "inbox"))
    assert absolute.status == 1 and absolute.envelope["data"]["checked"] == 1


def test_size_and_encoding_are_checked(store_root: Path) -> None:
    put(store_root, "resources/db/huge.html", with_body(store_root, "word " * (MAX_MEMORY_BYTES // 5 + 10)))
    put(store_root, "resources/db/latin1.html", with_body(store_root, "caf\xe9").encode("latin-1"))
    answer = validate(store_root)
    assert answer.status == 1
    assert any(reason.startswith("too large: ") for reason in reasons(answer, "resources/db/huge.html"))
    assert any(reason.startswith("not valid UTF-8 text") for reason in reasons(answer, "resources/db/latin1.html"))


def test_a_hand_edit_that_leaves_the_hash_stale_is_a_warning_only(store_root: Path) -> None:
    put(store_root, "resources/db/edited.html", with_body(store_root, "Measured again in March."))
    answer = validate(store_root, "resources/db/edited.html")
    assert answer.status == 0
    assert [item["reason"].split(" states ")[0] for item in answer.data["warnings"]] == [
        '<meta name="memhtml-content-hash">'
    ]


@pytest.mark.parametrize(
    "path",
    ["../outside.html", "/etc/passwd", ".git/config", ".GIT/hooks", ".memhtml/state", "resources/../../x.html",
     "resources/./../areas", " "],
)  # fmt: skip
def test_paths_outside_the_store_are_refused_before_any_io(tmp_path: Path, path: str) -> None:
    # The repo does not even exist: answering exit 2 rather than ERR_GIT shows nothing was opened.
    answer = validate(tmp_path / "no-store", path)
    assert answer.status == 2, answer.stdout
    assert answer.envelope["code"] == "ERR_INVALID_FLAG" and answer.envelope["suggestions"]
    assert "is refused" in answer.envelope["error"]


def test_symbolic_links_out_of_the_store_are_refused(store_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.html").write_text(valid_text(store_root), encoding="utf-8")
    (store_root / "resources" / "out.html").symlink_to(outside / "x.html")
    (store_root / "resources" / "elsewhere").symlink_to(outside)
    (store_root / "resources" / "git").symlink_to(store_root / ".git")
    for path in ("resources/out.html", "resources/elsewhere/x.html", "resources/elsewhere", "resources/git"):
        answer = validate(store_root, path)
        assert answer.status == 2, (path, answer.stdout)
        assert answer.envelope["code"] == "ERR_INVALID_FLAG"
    # Walked, a link is never followed; one named like a memory is a violation (git would commit a link).
    walked = validate(store_root, "resources")
    assert walked.status == 1
    assert [item["path"] for item in violations(walked)] == ["resources/out.html"]
    assert reasons(walked, "resources/out.html") == ["a symbolic link: a memory is a plain file"]


def test_a_missing_path_is_not_found(store_root: Path) -> None:
    answer = validate(store_root, "resources/nope.html")
    assert answer.status == 1 and answer.envelope["code"] == "ERR_PATH_NOT_FOUND"


def test_a_directory_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    answer = validate(tmp_path)
    assert answer.status == 1 and answer.envelope["code"] == "ERR_GIT"


# ---------------------------------------------------------------- the git index


def test_staged_reads_the_staged_blob_not_the_working_tree(store_root: Path) -> None:
    path = "resources/db/edited.html"
    good = with_body(store_root, "Measured again in March.")
    bad = with_body(store_root, "<script>alert(1)</script>")
    put(store_root, path, bad)
    git(store_root, "add", path)
    put(store_root, path, good)  # the working tree is fixed, the index still holds the bad version
    staged = validate(store_root, "--staged")
    assert staged.status == 1, staged.stdout
    assert staged.envelope["data"]["source"] == "index"
    assert [item["path"] for item in violations(staged)] == [path]
    assert validate(store_root, path).status == 0
    git(store_root, "add", path)
    put(store_root, path, bad)  # and the other way round
    assert validate(store_root, "--staged").status == 0
    assert validate(store_root, path).status == 1


def test_staged_skips_deletions_and_judges_a_rename_at_its_new_path(store_root: Path) -> None:
    put(store_root, "resources/db/bad.html", with_body(store_root, "<script>x()</script>"))
    git(store_root, "add", "-A")
    git(store_root, "commit", "-q", "-m", "a bad file, committed before any hook")
    git(store_root, "rm", "-q", "resources/db/bad.html")
    deleted = validate(store_root, "--staged")
    assert deleted.status == 0 and deleted.data["checked"] == 0
    git(store_root, "reset", "-q", "--hard")
    git(store_root, "mv", "resources/db/bad.html", "areas/inbox/moved.html")
    moved = validate(store_root, "--staged")
    assert moved.status == 1 and [item["path"] for item in violations(moved)] == ["areas/inbox/moved.html"]
    # Paths narrow the staged set.
    assert validate(store_root, "--staged", "resources").data["checked"] == 0


def test_staged_reads_the_index_the_caller_names(store_root: Path, tmp_path: Path) -> None:
    path = "resources/db/alt.html"
    put(store_root, path, with_body(store_root, "<script>x()</script>"))
    alternative = {"GIT_INDEX_FILE": ".git/alt-index"}  # relative: git resolves it at the top of the tree
    git_env(store_root, alternative, "read-tree", "HEAD")
    git_env(store_root, alternative, "add", path)
    assert git(store_root, "diff", "--cached", "--name-only") == ""  # the real index has nothing staged
    written = (store_root / ".git" / "alt-index").read_bytes()
    named = validate(store_root, "--staged", cwd=store_root, env=alternative)
    assert named.status == 1 and [item["path"] for item in violations(named)] == [path]
    assert (store_root / ".git" / "alt-index").read_bytes() == written  # read, never written
    assert validate(store_root, "--staged", cwd=store_root).status == 0
    # The same variable seen from another repository's directory (its hook) is about that repository.
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    absolute = {"GIT_INDEX_FILE": str(store_root / ".git" / "alt-index")}
    assert validate(store_root, "--staged", cwd=other, env=absolute).status == 0


def test_validate_writes_nothing(store_root: Path) -> None:
    put(store_root, "resources/db/bad.html", with_body(store_root, "<script>x()</script>"))
    put(store_root, "areas/inbox/staged.html", with_body(store_root, "\u200b"))
    git(store_root, "add", "areas/inbox/staged.html")
    before = snapshot(store_root)
    assert validate(store_root).status == 1
    assert validate(store_root, "--staged").status == 1
    assert snapshot(store_root) == before


def git_env(root: Path, env: dict[str, str], *args: str) -> None:
    import os

    subprocess.run(["git", *args], cwd=root, env={**os.environ, **env}, check=True, capture_output=True)


def snapshot(root: Path) -> dict[str, str]:
    """A digest of every file in the tree and in `.git` (the index, info/exclude, refs, objects)."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def test_the_terminal_listing_names_every_violation(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memhtml.cli.render import render_failure

    monkeypatch.setenv("COLUMNS", "400")  # one line per violation, however wide the test's terminal

    envelope = {
        "error": "2 violations in 1 of 1 memory file",
        "code": "ERR_INVALID_MEMORY",
        "suggestions": [],
        "data": {
            "checked": 1,
            "invalid": 1,
            "violations": [
                {
                    "path": "areas/a.html",
                    "reason": "no <mark>: the claim span is required",
                    "code": "ERR_INVALID_MEMORY",
                },
                {"path": "areas/a.html", "reason": "invisible character U+200B", "code": "ERR_INVISIBLE_CHARACTERS"},
            ],
            "warnings": [],
            "skipped": [{"path": "README.html", "reason": "outside the PARA buckets"}],
        },
    }
    render_failure(envelope)
    shown = " ".join(capsys.readouterr().out.split())
    assert "no <mark>: the claim span is required" in shown and "U+200B" in shown
    assert "ERR_INVISIBLE_CHARACTERS" in shown and "README.html" in shown
