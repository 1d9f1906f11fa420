"""The safety notary on every write door (write, apply, correct, task add): hostile input is refused
before anything is opened, rendered or committed, so HEAD, the tree and the working tree stay as they
were; `redact` and `strip_invisible` store the rest and say what they changed.

Secret-shaped values are assembled from pieces, so this file holds no literal credential.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memhtml.contracts.errors import MemhtmlError, UsageError, envelope_code
from memhtml.operations.apply import ApplyOptions, apply
from memhtml.operations.batchinput import Cleaning
from memhtml.operations.init import init
from memhtml.operations.lifecycle import archive, correct, task_add, task_request
from memhtml.operations.write import WriteRequest, place_memory, write

NOW = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)
GITHUB = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
ZWSP = "\u200b"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    init(store)
    return store


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def snapshot(root: Path) -> tuple[str, str, str, list[str]]:
    """HEAD, its tree, the working tree's status and every file of the corpus on disk (outside .git and
    the disposable, ignored index under .memhtml/, which a batch opens to answer per op)."""
    files = sorted(
        str(path.relative_to(root)) for path in root.rglob("*") if not {".git", ".memhtml"} & set(path.parts)
    )
    return git(root, "rev-parse", "HEAD"), git(root, "ls-tree", "-r", "HEAD"), git(root, "status", "--porcelain"), files


def history(root: Path) -> str:
    """Every commit message and every blob ever committed."""
    return git(root, "log", "--all", "-p", "--format=%B")


def memory(**fields: Any) -> WriteRequest:
    values: dict[str, Any] = {"title": "Deploy notes", "memory_type": "semantic", "claim": "The deploy runs nightly."}
    return WriteRequest(**(values | fields))


def refused(call: Callable[[], object]) -> MemhtmlError:
    with pytest.raises(MemhtmlError) as caught:
        call()
    return caught.value


def stored_text(root: Path, path: str) -> str:
    return (root / path).read_text(encoding="utf-8")


# ---------------------------------------------------------------- every door refuses, nothing changes

HOSTILE: dict[str, tuple[dict[str, Any], str]] = {
    "secret in the claim": ({"claim": f"The CI token is {GITHUB} now."}, "ERR_SECRET_DETECTED"),
    "secret in the title": ({"title": f"key {AWS}"}, "ERR_SECRET_DETECTED"),
    "secret in a tag": ({"tags": ["ops", f"password={'Summer2024!'}"]}, "ERR_SECRET_DETECTED"),
    "zero-width space in the claim": ({"claim": f"The deploy{ZWSP} runs nightly."}, "ERR_INVISIBLE_CHARACTERS"),
    "bidi override in the title": ({"title": "Deploy \u202enotes"}, "ERR_INVISIBLE_CHARACTERS"),
    "NUL in the title": ({"title": "Deploy\x00notes"}, "ERR_INVALID_MEMORY"),
    "escape sequence in the title": ({"title": "Deploy \x1b[31mnotes"}, "ERR_INVALID_MEMORY"),
    "lone surrogate in the claim": ({"claim": "The deploy \ud800 runs."}, "ERR_INVALID_MEMORY"),
}


def _write(root: Path, fields: dict[str, Any]) -> object:
    return write(root, memory(**fields), NOW)


def _apply(root: Path, fields: dict[str, Any]) -> object:
    op: dict[str, Any] = {
        "op": "write",
        "title": "Deploy notes",
        "type": "semantic",
        "body": "The deploy runs nightly.",
    }
    op |= {"title": fields["title"]} if "title" in fields else {}
    op |= {"body": fields["claim"]} if "claim" in fields else {}
    op |= {"tags": fields["tags"]} if "tags" in fields else {}
    stream = json.dumps({"op": "write", "title": "Fine", "type": "semantic", "body": "A fine fact."}) + "\n"
    return apply(root, stream + json.dumps(op) + "\n", ApplyOptions(), NOW)


def _correct(root: Path, fields: dict[str, Any]) -> object:
    return correct(root, "areas/inbox/target.html", memory(memory_type="", **fields), "changed", NOW)


def _task_add(root: Path, fields: dict[str, Any]) -> object:
    title = fields.get("title", "Rotate the key")
    claim = fields.get("claim")
    return task_add(root, task_request(title, claim, [], "todo", tags=fields.get("tags", [])), NOW)


DOORS: dict[str, Callable[[Path, dict[str, Any]], object]] = {
    "write": _write,
    "apply": _apply,
    "correct": _correct,
    "task add": _task_add,
}


@pytest.mark.parametrize("door", list(DOORS))
def test_every_door_refuses_hostile_input_and_changes_nothing(root: Path, door: str) -> None:
    write(root, memory(title="Target", claim="The target fact.", path="areas/inbox/target.html"), NOW)
    before = snapshot(root)
    for name, (fields, code) in HOSTILE.items():
        error = refused(functools.partial(DOORS[door], root, fields))
        assert envelope_code(error) == code, (door, name, error.message)
        assert not error.retryable
        assert snapshot(root) == before, (door, name)
    assert GITHUB not in history(root) and AWS not in history(root)


def test_a_refusal_names_kind_field_and_offset_and_never_the_secret(root: Path) -> None:
    claim = f"The CI token is {GITHUB} and password={'Summer2024!'} too."
    error = refused(lambda: write(root, memory(claim=claim), NOW))
    assert error.code == "ERR_SECRET_DETECTED"
    assert f"github-token (`ghp_…` {len(GITHUB)} characters) in claim at offset 16" in error.message
    assert "secret-value (11 characters) in claim at offset" in error.message
    everything = error.message + " ".join(error.suggestions)
    assert GITHUB[4:12] not in everything and "Summer2024" not in everything
    assert any("--redact" in suggestion for suggestion in error.suggestions)
    invisible = refused(lambda: write(root, memory(bodies=["ok", f"a{ZWSP}b\u202ec"]), NOW))
    assert invisible.code == "ERR_INVISIBLE_CHARACTERS"
    assert "U+200B ZERO WIDTH SPACE in body 2 at offset 1" in invisible.message
    assert "U+202E RIGHT-TO-LEFT OVERRIDE in body 2 at offset 3" in invisible.message


def test_refusals_come_before_any_io(tmp_path: Path) -> None:
    """Screened before the store is opened: a root that is no store is never even looked at."""
    missing = tmp_path / "nowhere"
    assert refused(lambda: write(missing, memory(claim=GITHUB), NOW)).code == "ERR_SECRET_DETECTED"
    request = task_request(f"rotate {AWS}", None, [], "todo")
    assert refused(lambda: task_add(missing, request, NOW)).code == "ERR_SECRET_DETECTED"
    error = refused(lambda: correct(missing, "areas/inbox/x.html", memory(claim=GITHUB), None, NOW))
    assert error.code == "ERR_SECRET_DETECTED"
    assert refused(lambda: write(missing, memory(bodies=["x" * 300_000]), NOW)).code == "ERR_INVALID_MEMORY"
    assert not missing.exists()


def test_the_render_path_refuses_what_a_door_did_not_screen() -> None:
    """`render_checked` is every door's render path: even a request that asks for redaction is refused
    there unless a door screened (and so cleaned) it first."""
    for request in (memory(claim=GITHUB), memory(claim=GITHUB, redact=True), memory(title=f"a{ZWSP}b")):
        with pytest.raises(MemhtmlError):
            place_memory(request, NOW)


# ---------------------------------------------------------------- redact and strip


def test_write_redact_stores_the_rest_with_markers(root: Path) -> None:
    request = memory(title=f"Key {AWS}", claim=f"The CI token is {GITHUB} now.", redact=True)
    report = write(root, request, NOW)
    assert (report.stored, report.outcome) == (True, "written")
    text = stored_text(root, report.path)
    assert "The CI token is [REDACTED:github-token] now." in text
    assert "<title>Key [REDACTED:aws-access-key-id]</title>" in text
    assert report.as_data()["redacted"] == [
        {"kind": "aws-access-key-id", "field": "title"},
        {"kind": "github-token", "field": "claim"},
    ]
    assert git(root, "log", "-1", "--format=%s") == "memhtml(write): Key [REDACTED:aws-access-key-id]\n"
    assert GITHUB not in history(root) and AWS not in history(root)
    assert "redacted" not in write(root, memory(title="Plain", claim="A plain fact."), NOW).as_data()


URL_PASSWORD = "Xy7kP2mQ" + "9rT4vB8n"


def test_a_password_in_a_url_query_is_refused(root: Path) -> None:
    before = snapshot(root)
    caught = refused(
        lambda: write(root, memory(claim=f"Log in at https://api.example.com/login?password={URL_PASSWORD}."), NOW)
    )
    assert envelope_code(caught) == "ERR_SECRET_DETECTED"
    assert snapshot(root) == before and URL_PASSWORD not in history(root)


def test_redacting_a_url_password_stores_it_and_the_marker_is_not_read_as_a_secret(root: Path) -> None:
    claim = f"Clone https://deploy:{URL_PASSWORD}@git.example.com/repo.git for the release."
    report = write(root, memory(claim=claim, redact=True), NOW)
    assert (report.stored, report.outcome) == (True, "written")
    assert "https://deploy:[REDACTED:url-password]@git.example.com" in stored_text(root, report.path)
    assert URL_PASSWORD not in history(root)


def test_write_strip_invisible_stores_the_text_without_them(root: Path) -> None:
    report = write(root, memory(claim=f"The deploy{ZWSP} runs\u202e nightly.", strip_invisible=True), NOW)
    text = stored_text(root, report.path)
    assert "The deploy runs nightly." in text and ZWSP not in text and "\u202e" not in text
    assert report.as_data()["stripped"] == [
        {"character": "U+200B", "field": "claim"},
        {"character": "U+202E", "field": "claim"},
    ]


def test_correct_redacts_its_texts_and_its_reason(root: Path) -> None:
    write(root, memory(title="Target", claim="The target fact.", path="areas/inbox/target.html"), NOW)
    reason = f"rotated {GITHUB}"
    request = memory(memory_type="", title="Target", claim=f"The key is {AWS}.", redact=True)
    answer = correct(root, "areas/inbox/target.html", request, reason, NOW)
    assert answer["stored"] is True
    assert "The key is [REDACTED:aws-access-key-id]." in stored_text(root, answer["path"])
    assert answer["redacted"] == [
        {"kind": "aws-access-key-id", "field": "claim"},
        {"kind": "github-token", "field": "reason"},
    ]
    assert "Memhtml-Reason: rotated [REDACTED:github-token]" in git(root, "log", "-1", "--format=%B")
    assert GITHUB not in history(root) and AWS not in history(root)


def test_task_add_redacts(root: Path) -> None:
    request = task_request(f"Rotate {GITHUB}", None, [], "todo", redact=True)
    answer = task_add(root, request, NOW)
    assert answer["redacted"] == [
        {"kind": "github-token", "field": "title"},
        {"kind": "github-token", "field": "claim"},
    ]
    assert GITHUB not in history(root)


def test_archive_and_a_correction_reason_are_screened_too(root: Path) -> None:
    write(root, memory(title="Target", claim="The target fact.", path="areas/inbox/target.html"), NOW)
    before = snapshot(root)
    assert refused(lambda: archive(root, "areas/inbox/target.html", f"leaked {GITHUB}", NOW)).code == (
        "ERR_SECRET_DETECTED"
    )
    error = refused(lambda: correct(root, "areas/inbox/target.html", memory(memory_type=""), f"x{ZWSP}", NOW))
    assert error.code == "ERR_INVISIBLE_CHARACTERS"
    assert snapshot(root) == before


# ---------------------------------------------------------------- batches


def _ops(*ops: dict[str, Any]) -> str:
    return "".join(json.dumps({"op": "write", "type": "semantic"} | op) + "\n" for op in ops)


BATCH = _ops(
    {"title": "First", "body": "The first fact."},
    {"title": "Leaky", "body": f"The token is {GITHUB}."},
    {"title": "Third", "body": "The third fact."},
)


def test_an_atomic_batch_with_one_secret_stores_nothing_and_names_the_op(root: Path) -> None:
    before = snapshot(root)
    error = refused(lambda: apply(root, BATCH, ApplyOptions(), NOW))
    assert envelope_code(error) == "ERR_SECRET_DETECTED"
    assert "op 1 (line 2)" in error.message and GITHUB not in error.message
    assert error.data is not None
    results: list[dict[str, Any]] = error.data["results"]  # type: ignore[assignment]
    assert [(result["outcome"], result["code"]) for result in results] == [
        ("skipped", None),
        ("refused", "ERR_SECRET_DETECTED"),
        ("skipped", None),
    ]
    assert snapshot(root) == before


def test_continue_on_error_stores_the_others(root: Path) -> None:
    answer = apply(root, BATCH, ApplyOptions(continue_on_error=True), NOW)
    assert answer.partial is True
    results = answer.data["results"]
    assert [(result["outcome"], result["code"]) for result in results] == [
        ("written", None),
        ("refused", "ERR_SECRET_DETECTED"),
        ("written", None),
    ]
    assert "github-token (`ghp_…`" in results[1]["error"]
    assert GITHUB not in history(root) and git(root, "rev-list", "--count", "HEAD") == "2\n"


def test_batch_redaction_per_op_and_for_the_whole_batch(root: Path) -> None:
    per_op = _ops(
        {"title": "Leaky", "body": f"The token is {GITHUB}.", "redact": True},
        {"title": "Hidden", "body": f"Zero{ZWSP}width.", "strip_invisible": True},
    )
    results = apply(root, per_op, ApplyOptions(), NOW).data["results"]
    assert results[0]["redacted"] == [{"kind": "github-token", "field": "body"}]
    assert results[1]["stripped"] == [{"character": "U+200B", "field": "body"}]
    assert "The token is [REDACTED:github-token]." in stored_text(root, results[0]["path"])
    assert "Zerowidth." in stored_text(root, results[1]["path"])
    whole = _ops(
        {"title": "Key", "body": f"The key is {AWS}."}, {"title": "Again", "body": f"Also {AWS}.", "redact": False}
    )
    error = refused(lambda: apply(root, whole, ApplyOptions(cleaning=Cleaning(redact=True)), NOW))
    assert envelope_code(error) == "ERR_SECRET_DETECTED"  # an op's own `redact: false` wins
    answer = apply(root, whole, ApplyOptions(cleaning=Cleaning(redact=True), continue_on_error=True), NOW)
    assert answer.data["results"][0]["redacted"] == [{"kind": "aws-access-key-id", "field": "body"}]
    assert GITHUB not in history(root) and AWS not in history(root)


def test_a_non_boolean_redact_is_a_stream_error(root: Path) -> None:
    error = refused(lambda: apply(root, _ops({"title": "T", "body": "B.", "redact": "yes"}), ApplyOptions(), NOW))
    assert isinstance(error, UsageError) and "line 1" in error.message and "`redact`" in error.message


# ---------------------------------------------------------------- markup


INJECTIONS = [
    "<p><mark>x</mark><script>alert(1)</script></p>",
    '<p><mark>x</mark><img src="x" onerror="alert(1)"></p>',
    '<p onclick="alert(1)"><mark>x</mark></p>',
    "<p><mark>x</mark></p><style>p{}</style>",
    '<p><mark>x</mark><iframe src="https://evil.example"></iframe></p>',
    '<p><mark>x</mark><object data="x.swf"></object></p>',
    '<p><mark>x</mark><embed src="x.swf"></p>',
    '<p><mark>x</mark> <a href="javascript:alert(1)">y</a></p>',
    '<p><mark>x</mark> <a href="JaVaScRiPt:alert(1)">y</a></p>',
    '<p><mark>x</mark> <a href=" java\tscript:alert(1)">y</a></p>',
    '<p><mark>x</mark> <a href="&#106;avascript:alert(1)">y</a></p>',
    '<p><mark>x</mark> <a href="javascript&colon;alert(1)">y</a></p>',
    '<p><mark>x</mark> <a href="ｊａｖａｓｃｒｉｐｔ:alert(1)">y</a></p>',
    '<p><mark>x</mark> <a href="vbscript:msgbox(1)">y</a></p>',
    '<p><mark>x</mark> <a href="data:text/html;base64,PHNjcmlwdD4=">y</a></p>',
    '<p><mark>x</mark><img src="data:image/svg+xml,x"></p>',
    '<p><mark>x</mark><form action="javascript:x"><button formaction="javascript:y">b</button></form></p>',
    '<p><mark>x</mark><svg><a xlink:href="javascript:x"><text>y</text></a></svg></p>',
    '<p><mark>x</mark><math><mi href="javascript:x">y</mi></math></p>',
    '<p><mark>x</mark><base href="https://evil.example/"></p>',
    '<p><mark>x</mark><meta http-equiv="refresh" content="0;url=javascript:x"></p>',
    "<p><mark>x</mark><template><script>alert(1)</script></template></p>",
    '<p><mark>x</mark><noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript></p>',
]


@pytest.mark.parametrize("article", INJECTIONS)
def test_html_injection_in_caller_markup_is_refused(article: str) -> None:
    with pytest.raises(MemhtmlError) as caught:
        place_memory(memory(claim=None, article_html=article), NOW)
    assert caught.value.code == "ERR_INVALID_MEMORY"
    assert caught.value.message.startswith("invalid memory: ")


def test_an_injection_refusal_lists_every_violation_and_stores_nothing(root: Path) -> None:
    article = (
        '<p><mark>x</mark> <a href="javascript:a()">y</a><iframe></iframe><img src="vbscript:b" onerror="c()"></p>'
    )
    before = snapshot(root)
    error = refused(lambda: write(root, memory(claim=None, article_html=article), NOW))
    assert error.message == (
        "invalid memory: onerror handler on <img>: a memory file does not execute; "
        "javascript: URL in the href of <a>: a memory file does not execute; "
        "<iframe> is forbidden: a memory file does not embed other documents; "
        "vbscript: URL in the src of <img>: a memory file does not execute"
    )
    ops = _ops({"title": "Markup", "article_html": article})
    assert envelope_code(refused(lambda: apply(root, ops, ApplyOptions(), NOW))) == "ERR_INVALID_MEMORY"
    assert snapshot(root) == before


def test_a_secret_spelled_with_character_references_is_refused_even_with_redact(root: Path) -> None:
    spelled = GITHUB.replace("_", "&#95;")
    article = f"<p><mark>The token is {spelled}.</mark></p>"
    for redact in (False, True):
        error = refused(functools.partial(write, root, memory(claim=None, article_html=article, redact=redact), NOW))
        assert error.code == "ERR_SECRET_DETECTED" and "article_html" in error.message
    hidden = "<p><mark>a&#x200B;b</mark></p>"
    assert refused(lambda: write(root, memory(claim=None, article_html=hidden), NOW)).code == "ERR_INVISIBLE_CHARACTERS"
    assert GITHUB not in history(root)


# ---------------------------------------------------------------- sizes


def test_a_memory_too_large_to_render_is_refused_and_a_batch_refuses_only_that_op(root: Path) -> None:
    error = refused(lambda: write(root, memory(bodies=["word " * 60_000]), NOW))
    assert error.code == "ERR_INVALID_MEMORY" and "262144 bytes (256 KiB)" in error.message
    # 100k `&` are a short line and a short text but a 500 kB file (each is written `&amp;`)
    ops = _ops({"title": "Big", "body": "Amp. " + "&" * 100_000}, {"title": "Small", "body": "A small fact."})
    results = apply(root, ops, ApplyOptions(continue_on_error=True), NOW).data["results"]
    assert [result["outcome"] for result in results] == ["refused", "written"]
    assert "its file would be" in results[0]["error"]


def test_an_apply_line_over_one_mebibyte_is_a_usage_error_before_any_io(tmp_path: Path) -> None:
    ops = _ops({"title": "Fine", "body": "A fact."}, {"title": "Huge", "body": "x" * (1024 * 1024)})
    error = refused(lambda: apply(tmp_path / "nowhere", ops, ApplyOptions(), NOW))
    assert isinstance(error, UsageError) and error.envelope_code == "ERR_INVALID_FLAG"
    assert error.message.startswith("memhtml apply: line 2: ") and "1 MiB" in error.message


def test_the_command_line_refuses_oversized_values_and_takes_the_new_flags() -> None:
    from memhtml.cli.grammar import parse_command_line

    def parse(*argv: str) -> dict[str, list[str]]:
        return parse_command_line(list(argv), refuse_env_root=False, stdout_is_tty=False).values

    body = "y" * 100_000
    with pytest.raises(UsageError) as caught:
        parse("write", "--title", "t", "--claim", "c.", "--type", "semantic", *(["--body", body] * 3))
    assert caught.value.envelope_code == "ERR_INVALID_FLAG" and "256 KiB" in caught.value.message
    assert parse("write", "--title", "t", "--claim", "c.", "--type", "semantic", "--redact")["redact"] == ["true"]
    assert parse("correct", "areas/inbox/a.html", "--title", "t", "--claim", "c.", "--strip-invisible")[
        "strip-invisible"
    ] == ["true"]
    assert parse("task", "add", "--title", "t", "--redact")["redact"] == ["true"]
    assert parse("apply", "--redact", "--strip-invisible")["strip-invisible"] == ["true"]


# ---------------------------------------------------------------- no false refusals


def test_ordinary_text_that_looks_close_is_still_written(root: Path) -> None:
    benign = [
        "The content hash is sha256:" + "3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b" + ".",
        "Commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed request 123e4567-e89b-12d3-a456-426614174000.",
        "The demo account uses password=hunter and token=${GITHUB_TOKEN} from the environment.",
        "Persian می\u200cخواهم and the family emoji \U0001f468\u200d\U0001f469\u200d\U0001f467 stay as written.",
        "Links like https://example.com/docs and mailto:ops@example.com are fine.",
    ]
    for number, claim in enumerate(benign):
        report = write(root, memory(title=f"Benign {number}", claim=claim), NOW)
        assert report.stored and "redacted" not in report.as_data()
    article = '<p><mark>See the <a href="https://example.com/runbook">runbook</a>.</mark></p>'
    assert write(root, memory(title="Linked", claim=None, article_html=article), NOW).stored
