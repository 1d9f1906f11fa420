"""An open started ahead of the command (`open_ahead`, the executable only) is the one the command's first
open of that mode takes; an open of another mode closes it first; nothing is created or held by one the
command never takes past the process's exit (real DuckDB files, real second processes)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from memhtml.contracts import lifetime
from memhtml.contracts.errors import DamagedIndex
from memhtml.index import database as database_module
from memhtml.index.database import database_paths, open_ahead, open_database
from tests.conftest import another_process_takes_the_index


@pytest.fixture
def ends_by_exit(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(lifetime, "_ends_by_exit", [True])
    monkeypatch.setattr(lifetime, "_deferred", [])
    monkeypatch.setattr(database_module, "_ahead", {})
    yield
    for ahead in list(database_module._ahead.values()):
        ahead.close()
    database_module.close_left_connections()


@pytest.fixture
def index_root(tmp_path: Path) -> Path:
    with open_database(tmp_path) as database:
        database.run("UPDATE index_state SET updated_at = 'made' WHERE id = 1")
    return tmp_path


def counted_opens(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    modes: list[bool] = []
    real = database_module._open_planes

    def counting(index_file: Path, state_file: Path, read_only: bool, lock_wait: float, *, shared: bool):  # type: ignore[no-untyped-def]
        modes.append(read_only)
        return real(index_file, state_file, read_only, lock_wait, shared=shared)

    monkeypatch.setattr(database_module, "_open_planes", counting)
    return modes


@pytest.mark.usefixtures("ends_by_exit")
@pytest.mark.parametrize("read_only", [False, True], ids=["read-write", "read-only"])
def test_the_first_open_of_the_same_mode_takes_the_open_started_ahead(
    index_root: Path, monkeypatch: pytest.MonkeyPatch, read_only: bool
) -> None:
    modes = counted_opens(monkeypatch)
    open_ahead(index_root, read_only=read_only)
    ran: list[str] = []
    with open_database(
        index_root.parent / index_root.name, read_only=read_only, meanwhile=lambda: ran.append("meanwhile")
    ) as database:
        assert database.value("SELECT updated_at FROM index_state") == "made"
        assert not another_process_takes_the_index(index_root)
    assert modes == [read_only]  # one open: the one started ahead
    assert ran == ["meanwhile"] and database_module._ahead == {}


@pytest.mark.usefixtures("ends_by_exit")
def test_an_open_of_another_mode_closes_the_one_started_ahead_first(
    index_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modes = counted_opens(monkeypatch)
    open_ahead(index_root, read_only=False)
    with open_database(index_root, read_only=True) as database:
        assert database.value("SELECT updated_at FROM index_state") == "made"
    assert modes == [False, True]
    assert database_module._ahead == {}


@pytest.mark.usefixtures("ends_by_exit")
def test_nothing_is_opened_ahead_for_files_that_do_not_exist(tmp_path: Path) -> None:
    open_ahead(tmp_path / "no-store", read_only=False)
    assert database_module._ahead == {}
    assert not (tmp_path / "no-store").exists()


def test_a_process_that_lives_on_never_opens_ahead(index_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(database_module, "_ahead", {})
    assert not lifetime.ends_by_exit()
    open_ahead(index_root, read_only=False)
    assert database_module._ahead == {}
    assert another_process_takes_the_index(index_root)


@pytest.mark.usefixtures("ends_by_exit")
def test_a_failed_preparation_closes_the_open_started_ahead(index_root: Path) -> None:
    open_ahead(index_root, read_only=False)

    def failing() -> None:
        raise OSError("the model could not be read")

    with pytest.raises(OSError, match="model"), open_database(index_root, meanwhile=failing):
        pass
    # Closed, and so (this process ending by exit) left for the exit with the other closed connections.
    assert database_module._ahead == {}
    database_module.close_left_connections()
    assert another_process_takes_the_index(index_root)


@pytest.mark.usefixtures("ends_by_exit")
def test_the_failure_of_an_open_started_ahead_is_raised_by_the_open_that_takes_it(index_root: Path) -> None:
    index_file, _ = database_paths(index_root)
    with index_file.open("r+b") as damaged:
        damaged.seek(0)
        damaged.write(b"\0" * 4096)
    open_ahead(index_root, read_only=True)
    with pytest.raises(DamagedIndex), open_database(index_root, read_only=True):
        pass


UNTAKEN_PROBE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from memhtml.cli import entry
    from memhtml.contracts import lifetime
    from memhtml.index import database

    lifetime.end_by_exit()
    database.open_ahead(Path(sys.argv[1]), read_only=False)
    entry._end_process(3)  # the command failed before it needed the index
    """
)


def test_an_open_started_ahead_and_never_taken_ends_with_the_process(index_root: Path) -> None:
    # Another process holds the file, so the open ahead is still retrying when the command ends: the
    # process ends at once with its own status, and lets go of nothing it would have to wait for.
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time, _duckdb; c = _duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(30)",
            str(database_paths(index_root)[0]),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        done = subprocess.run(
            [sys.executable, "-c", UNTAKEN_PROBE, str(index_root)],
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
        assert done.returncode == 3, done.stderr[-2000:]
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.usefixtures("ends_by_exit")
def test_what_keeps_an_open_ahead_from_starting_is_left_to_the_commands_own_open(
    index_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(self: Path, *_: object, **__: object) -> bool:
        raise PermissionError(13, "Permission denied", str(self))

    with monkeypatch.context() as patched:
        patched.setattr(Path, "is_file", refused)
        open_ahead(index_root, read_only=False)  # returns: a head start, never a failure
    assert database_module._ahead == {}
    with open_database(index_root, read_only=True) as database:
        assert database.value("SELECT updated_at FROM index_state") == "made"
