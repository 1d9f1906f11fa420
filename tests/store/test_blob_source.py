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


def _drop_loose_object(root: Path, sha: str) -> None:
    (root / ".git" / "objects" / sha[:2] / sha[2:]).unlink()


@pytest.mark.parametrize("reader", [GitBlobSource, GitCorpusReader], ids=["worker's source", "reader"])
def test_committed_blobs_take_a_file_from_disk_only_when_it_holds_the_blob_s_exact_bytes(
    blobs: tuple[Path, dict[str, bytes]], reader: type[GitBlobSource] | type[GitCorpusReader]
) -> None:
    import os

    root, expected = blobs
    listed = [line for line in git(root, "ls-tree", "HEAD").split("\n") if line]
    entries = [(line.split("\t")[1], line.split()[2]) for line in listed]
    assert {sha for _, sha in entries} == set(expected)
    # Six files of distinct, non-empty contents, each given a different state on disk.
    clean, edited, deleted, fifo, linked, directory = [(name, sha) for name, sha in entries if expected[sha]][:6]
    (root / edited[0]).write_bytes(b"an edit the commit does not hold\n")
    (root / deleted[0]).unlink()
    (root / fifo[0]).unlink()
    os.mkfifo(root / fifo[0])  # opened without blocking and never read: git answers for it
    (root / linked[0]).unlink()
    (root / linked[0]).symlink_to(root / clean[0])
    (root / directory[0]).unlink()
    (root / directory[0]).mkdir()
    source = reader(root)
    try:
        assert source.committed_blobs(entries) == expected  # HEAD's bytes for every entry, whatever is on disk
        # Without its object a clean file is still read, from disk; an edited one is never made up from disk.
        _drop_loose_object(root, clean[1])
        _drop_loose_object(root, edited[1])
        assert source.committed_blobs([clean, edited]) == {clean[1]: expected[clean[1]]}
        assert source.blobs([clean[1], edited[1]]) == {}  # git itself has neither object now
    finally:
        GitBlobSource(root).close()
