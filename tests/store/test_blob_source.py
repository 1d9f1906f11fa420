"""The blob source worker processes read through: one `git cat-file --batch` kept open per process, the
same bytes as a one-shot read, missing objects left out, and a git process that dies is a typed,
retryable failure after which the next read starts a new one."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from memhtml.contracts.errors import GitFailure
from memhtml.store import gitread
from memhtml.store.gitread import GitBlobSource, GitCorpusReader
from tests.conftest import git


@pytest.fixture
def blobs(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A repository with 1,200 small blobs (more than two batches of requests), one empty."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    contents = {f"f{number:04d}.txt": f"blob number {number}\n".encode() * (number % 5) for number in range(1200)}
    for name, data in contents.items():
        (root / name).write_bytes(data)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "blobs")
    listed = git(root, "ls-tree", "HEAD").split("\n")
    ids = {line.split("\t")[1]: line.split()[2] for line in listed if line}
    return root, {ids[name]: data for name, data in contents.items()}


def test_it_reads_what_a_one_shot_read_reads_and_leaves_out_missing_objects(
    blobs: tuple[Path, dict[str, bytes]],
) -> None:
    root, expected = blobs
    missing = "0" * 40
    wanted = [*expected, missing]
    source = pickle.loads(pickle.dumps(GitCorpusReader(root).blob_source()))  # as a worker receives it
    try:
        assert source.blobs(wanted) == expected
        assert source.blobs(reversed(wanted)) == expected  # the same process answers again
        assert GitCorpusReader(root).blobs(wanted) == expected
    finally:
        source.close()
    assert root.resolve() not in gitread._OPEN_CAT_FILES and root not in gitread._OPEN_CAT_FILES


def test_a_git_process_that_ended_is_replaced_and_one_that_ends_mid_answer_fails_retryably(
    blobs: tuple[Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    root, expected = blobs
    source = GitBlobSource(root)
    some = list(expected)[:3]
    wanted = {sha: expected[sha] for sha in some}
    try:
        assert source.blobs(some) == wanted
        ended = gitread._OPEN_CAT_FILES[root]
        ended.kill()
        ended.wait()
        assert source.blobs(some) == wanted  # found ended before the request: started again
        assert gitread._OPEN_CAT_FILES[root] is not ended
        source.close()

        def truncating(_: Path) -> subprocess.Popen[bytes]:
            # Answers the first request with a header promising more bytes than it writes, then exits.
            script = 'read name; printf "%s blob 100\\nabc" "$name"'
            return subprocess.Popen(["sh", "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

        monkeypatch.setattr(gitread, "_start_cat_file", truncating)
        with pytest.raises(GitFailure) as failure:
            source.blobs(some)
        assert failure.value.retryable
        assert root not in gitread._OPEN_CAT_FILES  # the broken process is not kept
        monkeypatch.undo()
        assert source.blobs(some) == wanted
    finally:
        source.close()
