"""Every path a command commits leaves git's index with the file's stat data, so a later `git status`
(ours run with optional locks off and never write what they learn) stats the file instead of reading
and hashing it again, every time, for every memory ever written."""

from __future__ import annotations

import json
from pathlib import Path

from memhtml.store.gitcmd import ZERO_SHA
from memhtml.store.gitindex import index_locked, sync_index_entries
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


def test_a_clean_filter_never_makes_a_written_path_look_staged(store_root: Path) -> None:
    # A filter that changes every byte it cleans: git's id for the file is no longer the committed blob,
    # so the entry must hold the committed blob as is (and git reports the file as modified, which it
    # is, as git sees it), never the filtered one as a staged change.
    git(store_root, "config", "filter.shout.clean", "tr a-z A-Z")
    (store_root / ".git" / "info" / "attributes").write_text("*.html filter=shout\n", encoding="utf-8")
    written = run_cli("write", "--repo", str(store_root), "--title", "Quiet", "--type", "semantic", "--claim", "Quiet.")
    assert written.status == 0, written.stdout
    path = written.data["path"]
    assert isinstance(path, str)
    assert (
        git(store_root, "ls-files", "-s", "--", path).split()[1] == git(store_root, "rev-parse", f"HEAD:{path}").strip()
    )
    assert git(store_root, "diff", "--cached", "--name-only") == ""


def sync_real_index(root: Path, records: bytes) -> bool:
    """Bring the index entries of `records` in line as a writer does: under git's index lock."""
    with index_locked(root / ".git"):
        return sync_index_entries(root, root / ".git", records)


def committed_file(root: Path, path: str, text: str) -> str:
    """Commit `text` at `path` with plain git; its blob id."""
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text, encoding="utf-8")
    git(root, "add", "--", path)
    git(root, "commit", "-qm", f"add {path}")
    return git(root, "rev-parse", f"HEAD:{path}").strip()


def test_an_executable_file_keeps_the_committed_mode(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    blob = committed_file(tmp_path, "areas/inbox/mode.html", "mode\n")
    (tmp_path / "areas/inbox/mode.html").chmod(0o755)
    assert sync_real_index(tmp_path, f"100644 {blob}\tareas/inbox/mode.html\0".encode())
    assert git(tmp_path, "ls-files", "-s", "--", "areas/inbox/mode.html").split()[0] == "100644"


def test_a_removed_path_still_on_disk_leaves_the_index(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    committed_file(tmp_path, "areas/inbox/gone.html", "gone\n")
    assert sync_real_index(tmp_path, f"0 {ZERO_SHA}\tareas/inbox/gone.html\0".encode())
    assert git(tmp_path, "ls-files", "--", "areas/inbox/gone.html") == ""
    assert (tmp_path / "areas/inbox/gone.html").exists()


def test_a_path_whose_directory_the_index_holds_as_a_file_replaces_it(tmp_path: Path) -> None:
    # The user's index holds `notes` as a file (staged, then the file became a directory on disk);
    # `--index-info` replaces such an entry, and so must the write from the files.
    git(tmp_path, "init", "-q")
    committed_file(tmp_path, "kept.html", "kept\n")
    blob = git(tmp_path, "rev-parse", "HEAD:kept.html").strip()
    git(tmp_path, "update-index", "--add", "--cacheinfo", f"100644,{blob},notes")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.html").write_text("kept\n", encoding="utf-8")
    assert sync_real_index(tmp_path, f"100644 {blob}\tnotes/a.html\0".encode())
    assert git(tmp_path, "ls-files", "--", "notes", "notes/a.html").split() == ["notes/a.html"]
    assert entries_without_stat_data(tmp_path) == []


def test_a_path_git_will_not_hash_is_recorded_as_committed(tmp_path: Path) -> None:
    # `update-index` refuses to read a file beyond a symbolic link; the record is then written as is.
    git(tmp_path, "init", "-q")
    blob = committed_file(tmp_path, "real/a.html", "a\n")
    (tmp_path / "link").symlink_to("real")
    assert sync_real_index(tmp_path, f"100644 {blob}\tlink/a.html\0".encode())
    assert git(tmp_path, "ls-files", "-s", "--", "link/a.html").split()[1] == blob
