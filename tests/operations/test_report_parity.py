"""What `index rebuild`, `index status` and `status` report: the chunks and links a rebuild indexed, the
vector coverage floor the configuration sets, and the state and embedding fields."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memhtml.domain.chunking import CHUNK_MAX_CHARS
from tests.conftest import git, run_cli

SENTENCE_CHARS = 100
# The long memory's body: its claim and fifty more sentences of exactly 100 characters, joined by one
# space each. A chunk packs whole sentences up to the cap, so it holds 17 of them (1,716 characters;
# an 18th would make 1,817), and the 51 sentences make 3 chunks.
LONG_SENTENCES = 51
LONG_CHUNKS = math.ceil(LONG_SENTENCES / ((CHUNK_MAX_CHARS + 1) // (SENTENCE_CHARS + 1)))
FLOOR = "MEMHTML_VECTOR_COVERAGE_FLOOR"


def _sentence(number: int) -> str:
    start = f"Step {number:04d} of the long runbook "
    return start + "z" * (SENTENCE_CHARS - 1 - len(start)) + "."


def _write(store_root: Path, title: str, claim: str, *extra: str, env: dict[str, str] | None = None) -> str:
    answer = run_cli(
        "write", "--repo", str(store_root), "--title", title, "--type", "semantic", "--claim", claim, *extra, env=env
    )
    assert answer.status == 0, answer.stdout + answer.stderr
    return str(answer.data["path"])


def _write_long(store_root: Path, title: str = "Long runbook") -> str:
    body = " ".join(_sentence(number) for number in range(1, LONG_SENTENCES))
    return _write(store_root, title, _sentence(0), "--body", body)


def _link(store_root: Path, src: str, rel: str, dst: str) -> None:
    answer = run_cli("link", "--repo", str(store_root), src, rel, dst)
    assert answer.status == 0, answer.stdout + answer.stderr


def _rebuild(store_root: Path, *flags: str, embed: str = "hash") -> dict[str, object]:
    answer = run_cli("index", "rebuild", "--repo", str(store_root), *flags, env={"MEMHTML_EMBED": embed})
    assert answer.status == 0, answer.stdout + answer.stderr
    return answer.data


def test_a_rebuild_counts_the_chunks_and_links_of_every_indexed_memory_with_embeddings_on_or_off(
    store_root: Path,
) -> None:
    queue = _write(store_root, "Queue order", "The queue drains in order.")
    cache = _write(store_root, "Cache policy", "The cache evicts the oldest entry.")
    runbook = _write_long(store_root)
    links = [(queue, "relates_to", cache), (cache, "supports", runbook), (queue, "leads_to", runbook)]
    for src, rel, dst in links:
        _link(store_root, src, rel, dst)
    # An archived memory stays indexed, with the links it asserts.
    archived = run_cli("archive", "--repo", str(store_root), queue, "--reason", "retired")
    assert archived.status == 0, archived.stdout + archived.stderr
    chunks = 1 + 1 + LONG_CHUNKS
    for embed in ("hash", "off"):
        for flags in ((), ("--no-embed",)):
            report = _rebuild(store_root, *flags, embed=embed)
            assert report["filesIndexed"] == 3
            assert report["chunksIndexed"] == chunks, (embed, flags)
            assert report["edgesIndexed"] == len(links), (embed, flags)
    # Every text here is distinct, so the vectors kept are one per chunk counted.
    report = _rebuild(store_root)
    assert report["embeddingsPreserved"] == chunks


def test_chunks_of_a_text_two_memories_share_count_for_each_memory(store_root: Path) -> None:
    first = _write_long(store_root)
    archived = run_cli("archive", "--repo", str(store_root), first, "--reason", "retired")
    assert archived.status == 0, archived.stdout + archived.stderr
    again = _write_long(store_root)
    assert again != first
    report = _rebuild(store_root)
    assert report["filesIndexed"] == 2
    assert report["chunksIndexed"] == 2 * LONG_CHUNKS
    assert report["embeddingsPreserved"] == LONG_CHUNKS  # one vector per chunk of the shared text


def test_a_link_in_the_dirty_tree_is_counted_with_the_file_it_is_in(store_root: Path) -> None:
    queue = _write(store_root, "Queue order", "The queue drains in order.")
    cache = _write(store_root, "Cache policy", "The cache evicts the oldest entry.")
    _link(store_root, queue, "relates_to", cache)
    source = store_root / queue
    committed = f'<link rel="memhtml-relates-to" href="/{cache}">'
    html = source.read_text(encoding="utf-8")
    assert committed in html
    source.write_text(html.replace(committed, f'{committed}\n<link rel="memhtml-supports" href="/{cache}">'))
    assert git(store_root, "status", "--porcelain").strip()
    report = _rebuild(store_root)
    assert report["dirty"] == 1
    assert report["filesIndexed"] == 2
    assert report["chunksIndexed"] == 2
    assert report["edgesIndexed"] == 2


def _half_embedded(store_root: Path) -> None:
    """Two memories, only one of them with a vector: a vector coverage of 0.5."""
    _write(store_root, "Queue order", "The queue drains in order.")
    _write(store_root, "Cache policy", "The cache evicts the oldest entry.", env={"MEMHTML_EMBED": "off"})


def _status_pair(store_root: Path, env: dict[str, str] | None = None) -> tuple[dict[str, object], dict[str, object]]:
    index = run_cli("index", "status", "--repo", str(store_root), env=env)
    assert index.status == 0, index.stdout + index.stderr
    overall = run_cli("status", "--repo", str(store_root), env=env)
    assert overall.status == 0, overall.stdout + overall.stderr
    return index.data, overall.data


def test_the_coverage_floor_comes_from_the_configuration(store_root: Path) -> None:
    _half_embedded(store_root)
    index, overall = _status_pair(store_root)
    assert index["vectorCoverage"] == overall["vectorCoverage"] == 0.5
    assert index["vectorCoverageFloor"] == overall["vectorCoverageFloor"] == 0.95
    assert index["vectorCoverageLow"] is True
    index, overall = _status_pair(store_root, {FLOOR: "0.5"})
    assert index["vectorCoverageFloor"] == overall["vectorCoverageFloor"] == 0.5
    assert index["vectorCoverageLow"] is False  # at the floor is not below it
    index, _ = _status_pair(store_root, {FLOOR: "0.6"})
    assert index["vectorCoverageLow"] is True


@pytest.mark.parametrize(("value", "floor"), [("1", 1), (".5", 0.5), ("1e-1", 0.1), (" 0.25 ", 0.25), ("", 0.95)])
def test_a_floor_is_a_decimal_above_zero_and_at_most_one(store_root: Path, value: str, floor: float) -> None:
    index, overall = _status_pair(store_root, {FLOOR: value})
    assert index["vectorCoverageFloor"] == overall["vectorCoverageFloor"] == floor


@pytest.mark.parametrize("value", ["0", "1.5", "-0.1", "abc", "nan", "inf", "95%", "0x1", "1_0", "٠.٥"])
@pytest.mark.parametrize("command", [("status",), ("index", "status")])
def test_a_bad_floor_is_refused_before_anything_is_opened(tmp_path: Path, value: str, command: tuple[str, ...]) -> None:
    root = tmp_path / "nowhere"
    answer = run_cli(*command, "--repo", str(root), env={FLOOR: value})
    assert answer.status == 2, answer.stdout + answer.stderr
    assert answer.envelope["code"] == "ERR_INVALID_FLAG"
    assert FLOOR in answer.envelope["error"]
    assert answer.envelope["suggestions"]
    assert not root.exists()


def test_a_bad_floor_is_refused_by_every_command(tmp_path: Path) -> None:
    answer = run_cli("search", "--repo", str(tmp_path / "nowhere"), "queue", env={FLOOR: "abc"})
    assert answer.status == 2, answer.stdout + answer.stderr
    assert answer.envelope["code"] == "ERR_INVALID_FLAG"


def test_search_keeps_the_vector_arm_at_a_lowered_floor(store_root: Path) -> None:
    _half_embedded(store_root)
    default = run_cli("search", "--repo", str(store_root), "queue order")
    assert default.status == 0, default.stdout + default.stderr
    assert default.data["degraded"] is True
    lowered = run_cli("search", "--repo", str(store_root), "queue order", env={FLOOR: "0.5"})
    assert lowered.status == 0, lowered.stdout + lowered.stderr
    assert lowered.data["degraded"] is False
    assert "vector" in lowered.data["arms"]


def test_the_state_plane_is_attached_before_anything_was_read(store_root: Path) -> None:
    _write(store_root, "Queue order", "The queue drains in order.")
    index, overall = _status_pair(store_root)
    assert index["hasState"] is True
    assert overall["hasState"] is True


def test_with_embeddings_off_no_model_is_configured_and_the_index_keeps_naming_its_own(store_root: Path) -> None:
    off = {"MEMHTML_EMBED": "off"}
    _write(store_root, "Queue order", "The queue drains in order.", env=off)
    index, overall = _status_pair(store_root, off)
    assert index["configuredEmbedModel"] is None
    assert index["embedModel"] is None and index["embedDim"] is None  # no vector was ever written
    assert index["embedModelMatches"] is True
    assert overall["embedModel"] is None and overall["embedderUp"] is False
    _rebuild(store_root)  # vectors in the hash embedder's space
    index, overall = _status_pair(store_root, off)
    assert index["configuredEmbedModel"] is None
    assert (index["embedModel"], index["embedDim"]) == ("fake-hash@1024", 1024)
    assert index["embedModelMatches"] is False
    assert overall["embedModel"] == "fake-hash@1024" and overall["embedderUp"] is False
    index, _ = _status_pair(store_root)
    assert (index["configuredEmbedModel"], index["embedModelMatches"]) == ("fake-hash@1024", True)


@pytest.mark.parametrize(("name", "value"), [("MEMHTML_VECTOR_COVERAGE_FLOOR", "1.5"), ("MEMHTML_EMBED", "bert")])
def test_the_mcp_server_refuses_a_bad_setting_before_it_serves(tmp_path: Path, name: str, value: str) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "memhtml.mcp", "--repo", str(tmp_path / "store")],
        env={**os.environ, name: value},
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2, completed.stderr
    assert "ERR_INVALID_FLAG" in completed.stderr and "Traceback" not in completed.stderr
    assert not (tmp_path / "store").exists()
