"""Every path a command commits leaves git's index with the file's stat data, so a later `git status`
(ours run with optional locks off and never write what they learn) stats the file instead of reading
and hashing it again, every time, for every memory ever written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, run_cli


def entries_without_stat_data(root: Path) -> list[str]:
    """The paths whose index entry records no modification time (what `update-index --index-info`
    leaves), read from git's own debug listing."""
    missing: list[str] = []
    path = ""
    for line in git(root, "ls-files", "--debug").splitlines():
        if not line.startswith(" "):
            path = line
        elif line.strip() == "mtime: 0:0":
            missing.append(path)
    return missing


def test_init_write_apply_and_archive_leave_stat_data_in_gits_index(store_root: Path) -> None:
    assert entries_without_stat_data(store_root) == []
    written = run_cli("write", "--repo", str(store_root), "--title", "Kept", "--type", "semantic", "--claim", "Kept.")
    assert written.status == 0, written.stdout
    operations = "".join(
        json.dumps({"op": "write", "title": f"Batch {n}", "type": "semantic", "body": f"Batch fact {n} holds."}) + "\n"
        for n in range(3)
    )
    batch = store_root.parent / "batch.jsonl"
    batch.write_text(operations, encoding="utf-8")
    applied = run_cli("apply", "--repo", str(store_root), "--file", str(batch))
    assert applied.status == 0, applied.stdout
    path = written.data["path"]
    assert isinstance(path, str)
    archived = run_cli("archive", "--repo", str(store_root), path, "--reason", "superseded")
    assert archived.status == 0, archived.stdout
    tracked = git(store_root, "ls-files", "--", "areas", "archive").split()
    assert len([name for name in tracked if name.endswith(".html")]) == 4  # three in the batch, one archived
    assert entries_without_stat_data(store_root) == []
    assert git(store_root, "status", "--porcelain") == ""
