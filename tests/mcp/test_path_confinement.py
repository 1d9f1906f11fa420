"""The MCP door confines paths as the CLI does: every tool argument that names a memory, every op's
`path` in a batch, and both resource templates, against the same hostile values and the same codes.

Resource URIs are percent-decoded once before the path is judged, so an encoded `..` is refused as
the plain one is, and a doubly encoded one is refused as a percent-encoded step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from memhtml.contracts.errors import MemhtmlError
from memhtml.mcp.resources import read_resource
from memhtml.mcp.server import call_tool
from tests.cli.test_path_confinement import (
    FILESYSTEM_CASES,
    INVALID_FLAG,
    INVALID_MEMORY,
    PNF,
    SECRET,
    STRING_CASES,
    Corpus,
    make_corpus,
    snapshot,
    state_paths,
    tree_state,
)
from tests.conftest import git

# CLI door names (as the CLI matrix spells them) onto the tools that take the same path.
TOOL_DOORS = {
    "read": "memory_read",
    "correct": "memory_correct",
    "link-src": "memory_link",
    "link-dst": "memory_link",
    "neighbors": "memory_neighbors",
    "resolve": "memory_resolve",
    "archive": "memory_archive",
    "reinforce": "memory_reinforce",
    "task-status": "task_status",
    "write": "memory_write",
    "apply": "memory_write_batch",
}


def tool_calls(corpus: Corpus, path: str, serial: int) -> dict[str, tuple[str, dict[str, Any]]]:
    body = f"Placed fact number {serial}."
    op = {"title": "Placed", "memory_type": "semantic", "body": body, "path": path, "strict_path": True}
    return {
        "read": ("memory_read", {"path": path}),
        "correct": ("memory_correct", {"target_path": path, "title": "Pool v2", "reason": "r", "body": "Nine."}),
        "link-src": ("memory_link", {"src_path": path, "rel": "relates_to", "dst_path": corpus.other}),
        "link-dst": ("memory_link", {"src_path": corpus.memory, "rel": "relates_to", "dst_path": path}),
        "neighbors": ("memory_neighbors", {"path": path}),
        "resolve": ("memory_resolve", {"path": path}),
        "archive": ("memory_archive", {"path": path, "reason": "retire"}),
        "reinforce": ("memory_reinforce", {"paths": [path], "signal": "positive"}),
        "task-status": ("task_status", {"path": path, "status": "doing"}),
        "write": ("memory_write", op),
        "apply": ("memory_write_batch", {"ops": [op]}),
    }


def resource_uris(corpus: Corpus, path: str) -> list[str]:
    head = git(corpus.root, "rev-parse", "HEAD").strip()
    return [
        "memhtml://file/" + path,
        "memhtml://file/" + quote(path, safe=""),
        f"memhtml://at/{head}/" + path,
        f"memhtml://at/{head}/" + quote(path, safe=""),
    ]


def check_tool(corpus: Corpus, tool: str, arguments: dict[str, Any], expected: tuple[int, str | None]) -> list[str]:
    before = (snapshot(corpus.outside), tree_state(corpus.root))
    result = call_tool(corpus.root, tool, arguments)
    content = result.structured_content
    assert isinstance(content, dict)
    got = (1, content.get("code")) if result.is_error else (0, None)
    problems = []
    label = f"{tool} {arguments!r}"
    if got[1] != expected[1] or (got[0] == 0) != (expected[0] == 0):
        problems.append(f"{label}: answered {got}, expected {expected}: {str(content)[:300]}")
    if result.is_error and not content.get("suggestions"):
        problems.append(f"{label}: refused without suggestions")
    if SECRET in str(content) or any(SECRET in str(block) for block in result.content):
        problems.append(f"{label}: the outside secret appeared in the answer")
    if (snapshot(corpus.outside), tree_state(corpus.root)) != before:
        problems.append(f"{label}: the store or the outside changed")
    return problems


def check_resource(corpus: Corpus, uri: str, expected_code: str | None) -> list[str]:
    before = (snapshot(corpus.outside), tree_state(corpus.root))
    problems = []
    try:
        text = read_resource(corpus.root, uri).contents[0].text  # type: ignore[union-attr]
    except MemhtmlError as error:
        code = getattr(error, "envelope_code", error.code)
        if code != expected_code:
            problems.append(f"{uri!r}: refused with {code}, expected {expected_code}")
        text = error.message + " ".join(error.suggestions)
    else:
        if expected_code is not None:
            problems.append(f"{uri!r}: answered, expected {expected_code}")
    if SECRET in text:
        problems.append(f"{uri!r}: the outside secret appeared in the answer")
    if (snapshot(corpus.outside), tree_state(corpus.root)) != before:
        problems.append(f"{uri!r}: the store or the outside changed")
    return problems


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    return make_corpus(tmp_path)


def test_every_tool_and_resource_refuses_every_hostile_value(corpus: Corpus) -> None:
    problems: list[str] = []
    tried = 0
    for serial, (label, value) in enumerate(STRING_CASES):
        path = value(corpus)
        for door, (tool, arguments) in tool_calls(corpus, path, serial).items():
            expected = (1, INVALID_MEMORY) if door in ("write", "apply") else (1, INVALID_FLAG)
            tried += 1
            problems += [f"[{label}] {line}" for line in check_tool(corpus, tool, arguments, expected)]
        for uri in resource_uris(corpus, path):
            tried += 1
            problems += [f"[{label}] {line}" for line in check_resource(corpus, uri, INVALID_FLAG)]
    for serial, (label, value, expectations) in enumerate(FILESYSTEM_CASES, start=len(STRING_CASES)):
        path = value(corpus)
        for door, (tool, arguments) in tool_calls(corpus, path, serial).items():
            if door in expectations:
                tried += 1
                problems += [f"[{label}] {line}" for line in check_tool(corpus, tool, arguments, expectations[door])]
        if label in ("committed-link-out", "file-link-out", "through-directory-link", "directory", "missing"):
            for uri in resource_uris(corpus, path):
                tried += 1
                problems += [f"[{label}] {line}" for line in check_resource(corpus, uri, PNF)]
    assert tried >= 15 * len(STRING_CASES)
    assert not problems, "\n".join(problems)
    assert state_paths(corpus.root) <= corpus.legit


def test_a_doubly_encoded_step_is_refused_after_the_one_decoding(corpus: Corpus) -> None:
    for uri in ("memhtml://file/areas%252f..%252f..%252foutside.html", "memhtml://file/areas/%252e%252e/x.html"):
        assert check_resource(corpus, uri, INVALID_FLAG) == []
    assert check_resource(corpus, "memhtml://file/" + quote(corpus.memory, safe=""), None) == []
