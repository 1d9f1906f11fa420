"""The DuckDB connection of a store: opening both planes (migrated by `index.migrations`), opening ahead
of the command, lock retries and bulk inserts.

This is the only module that imports duckdb. A connection is opened per command and closed promptly,
because DuckDB lets one process hold a database file read-write at a time; lock conflicts are
retried with bounded jittered backoff so a command never fails because another one is running.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, TypeVar

from memhtml.contracts.deferred_signals import signals_deferred

# A signal while the native module loads would abort the process, not interrupt it.
with signals_deferred():
    try:
        # The native module is the whole API used here (`duckdb` re-exports these very objects); the
        # package wrapper around it adds most of that import's time to every command.
        import _duckdb as duckdb
    except ImportError:  # a duckdb build without the top-level native module
        import duckdb  # type: ignore[no-redef]

from memhtml.contracts import lifetime
from memhtml.contracts.errors import DamagedIndex, DamagedStateDatabase, LockTimeout, MemhtmlError, StorageFailure
from memhtml.index import migrations
from memhtml.index.location import refuse_to_open
from memhtml.index.writer_preference import writers_first

_Opened = TypeVar("_Opened")

INDEX_FILENAME: Final[str] = "index.duckdb"
STATE_FILENAME: Final[str] = "state.duckdb"
# The catalog name the index plane has: DuckDB names a file's catalog after its stem, and the shared
# instance attaches it under the same name, so statements read the same either way.
INDEX_ALIAS: Final[str] = "index"
LOCK_RETRY_SECONDS: Final[float] = 20.0
# Below this many rows a list-unnest insert is cheapest; above it a registered NumPy batch is faster
# by more than an order of magnitude.
NUMPY_BATCH_THRESHOLD: Final[int] = 5000
# Up to this many values an insert binds none of them as a list: strings one parameter each, integers
# and vector components written into the statement. The first list a process binds, of any type, makes
# DuckDB's binding import `decimal`, `uuid` and `platform` (a noticeable import), which the rows of
# a write or of an update after one commit (one `files` row, a few tags and terms, a few dozen postings,
# one vector) then never need.
SCALAR_INSERT_VALUES: Final[int] = 2048
# Up to this many values a membership test is written one parameter per value, which lets DuckDB
# probe the column's index or prune by zonemap: a path lookup in a large index is several times faster
# that way than through `IN (SELECT unnest(...))`, a scan. Past ≈100 values planning the parameters costs
# more than the scan, so longer lists stay one list parameter.
EXPANDED_MEMBERSHIP_LIMIT: Final[int] = 64
# Vector components are stored to this many decimal places. DuckDB then stores each as a small integer
# (ALP) instead of a float's full bits (ALPRD): the index file gets smaller, and so does the time of a
# search's statement, which its cold vector scan dominates. Each component
# moves by at most 0.0005, so a cosine with a unit query moves by about 0.0003 and never by more than
# 0.0005 x sqrt(dimensions): 0.008 for the shipped model's 256, 0.0098 for `minilm`'s 384, below half
# the tolerance within which cosines share a vector rank.
VECTOR_DECIMALS: Final[int] = 3
# A read-write open's close checkpoints a file only once its write-ahead log holds more than this;
# below it, the log is left for the next open to replay. A checkpoint rewrites the last segment of every
# column a commit touched, whatever the commit's size: a large share of an `index update` after one
# memory, and about the same after several. An open replays the log it finds cheaply, a little more for
# each update it holds (≈5–9 KiB each), so a checkpoint comes every ≈4 updates and a read never replays
# more than ≈4 updates' log. DuckDB's own `checkpoint_threshold` cannot say this: it weighs each commit
# by an estimate (1–4 MiB for an update that logs 5 KiB) and would checkpoint every one.
LOG_CHECKPOINT_BYTES: Final[int] = 32 * 1024


class Database:
    """One open connection: the index plane as `main`, the state plane attached as `state`."""

    def __init__(
        self,
        connection: duckdb.DuckDBPyConnection,
        read_only: bool,
        *,
        shared: bool = False,
        main_catalog: str | None = None,
        files: Mapping[str, Path] | None = None,
    ) -> None:
        self._connection = connection
        self.read_only = read_only
        self._shared = shared  # attached to the process's one instance: closing detaches the files
        # The database file of each catalog, as the opener attached them: `close` checkpoints the long
        # logs among them without asking DuckDB which files are attached (a statement every read-write
        # command would pay). None for a connection whose closing is its creator's business (`_publish_missing`).
        self._files = dict(files) if files is not None else {}
        # The catalog statements switch back to after `USE state`. An open names it (`INDEX_ALIAS`, as
        # DuckDB names the catalog of `index.duckdb`): asking DuckDB (`current_database()`) is the first
        # statement's cost, paid by every command's open.
        self.main_catalog: str = (
            connection.execute("SELECT current_database()").fetchall()[0][0] if main_catalog is None else main_catalog
        )

    def rows(self, sql: str, parameters: Mapping[str, Any] | Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
        """Run a statement and fetch every row (never leaves an unfinished result behind)."""
        try:
            with interrupts_raised():
                return self._connection.execute(sql, parameters).fetchall()
        except duckdb.Error as error:
            if _reports_damage(error):  # retrying reads the same wrong bytes
                raise DamagedIndex(
                    f"index query failed ({type(error).__name__}): the index file is damaged", ["memhtml index rebuild"]
                ) from error
            raise StorageFailure(f"index query failed ({type(error).__name__})", ["memhtml index rebuild"]) from error

    def value(self, sql: str, parameters: Mapping[str, Any] | Sequence[Any] | None = None) -> Any:
        found = self.rows(sql, parameters)
        return found[0][0] if found else None

    def run(self, sql: str, parameters: Mapping[str, Any] | Sequence[Any] | None = None) -> None:
        self.rows(sql, parameters)

    def _execute(self, sql: str) -> None:
        """A statement with no rows to fetch (transaction control, a checkpoint, a script), its errors
        left to the caller; a signal during it is an interrupt (`interrupts_raised`)."""
        with interrupts_raised():
            self._connection.execute(sql)

    @contextmanager
    def transaction(self, *, checkpoint_at_commit: bool = False) -> Iterator[None]:
        """One transaction. `checkpoint_at_commit`, for a bulk write (a rebuild): the commit checkpoints
        the new rows into the file itself. Otherwise they are written to the write-ahead log, which a
        close checkpoints into the file once it is long (`LOG_CHECKPOINT_BYTES`): a rebuild's rows would
        pass through the log only to be copied at its close (a measurable share of a rebuild's work)."""
        self._execute("BEGIN TRANSACTION")
        try:
            try:
                yield
                if checkpoint_at_commit:
                    # A commit whose log would pass this size checkpoints instead of writing the log.
                    self._execute("SET checkpoint_threshold = '1MB'")
            except BaseException:
                self._execute("ROLLBACK")
                raise
            self._execute("COMMIT")
        finally:
            if checkpoint_at_commit:
                with contextlib.suppress(duckdb.Error):  # never in place of the error that ended the work
                    self._execute("RESET checkpoint_threshold")

    def insert_columns(self, table: str, columns: Mapping[str, Sequence[Any]]) -> None:
        """Insert column-shaped rows in one statement; never `executemany` (slower by orders of magnitude)."""
        names = list(columns)
        count = len(columns[names[0]]) if names else 0
        if count == 0:
            return
        column_list = ", ".join(names)
        if count * len(names) <= SCALAR_INSERT_VALUES:
            self._insert_scalars(table, names, columns, count)
            return
        if count >= NUMPY_BATCH_THRESHOLD and all(_array_kind(columns[name]) for name in names):
            self._insert_numpy(table, names, columns)
            return
        selects = ", ".join(f"unnest(${name}) AS {name}" for name in names)
        self.run(
            f"INSERT INTO {table} ({column_list}) SELECT {selects}",
            {name: list(columns[name]) for name in names},
        )

    def insert_integers(self, table: str, columns: Mapping[str, Sequence[int]]) -> None:
        """Insert integer columns in one statement: a NumPy batch when large (no per-value checks), list
        parameters when small (importing NumPy alone costs more than a small insert)."""
        names = list(columns)
        if not names or not columns[names[0]]:
            return
        count = len(columns[names[0]])
        if count * len(names) <= SCALAR_INSERT_VALUES:
            # Integers are written into the statement: no parameter to bind, and no list.
            rows = ", ".join(
                "(" + ", ".join(str(int(columns[name][row])) for name in names) + ")" for row in range(count)
            )
            self.run(f"INSERT INTO {table} ({', '.join(names)}) VALUES {rows}")
            return
        if count < NUMPY_BATCH_THRESHOLD:
            selects = ", ".join(f"unnest(${name}) AS {name}" for name in names)
            self.run(
                f"INSERT INTO {table} ({', '.join(names)}) SELECT {selects}",
                {name: list(columns[name]) for name in names},
            )
            return
        import numpy

        view = f"batch_{table}"
        self._connection.register(view, {name: numpy.asarray(columns[name], dtype=numpy.int64) for name in names})
        try:
            self.run(f"INSERT INTO {table} ({', '.join(names)}) SELECT {', '.join(names)} FROM {view}")
        finally:
            self._connection.unregister(view)

    def insert_arrays(self, table: str, columns: Mapping[str, Any]) -> None:
        """Insert NumPy columns of one length as a registered batch, in their order (the caller imported
        NumPy: these are its arrays)."""
        names = list(columns)
        if not names or len(columns[names[0]]) == 0:
            return
        view = f"batch_{table}"
        self._connection.register(view, dict(columns))
        try:
            self.run(f"INSERT INTO {table} ({', '.join(names)}) SELECT {', '.join(names)} FROM {view}")
        finally:
            self._connection.unregister(view)

    def _insert_scalars(self, table: str, names: list[str], columns: Mapping[str, Sequence[Any]], count: int) -> None:
        """`count` rows as `VALUES` of one parameter per value (`SCALAR_INSERT_VALUES`)."""
        parameters: dict[str, Any] = {}
        rows = []
        for row in range(count):
            placeholders = []
            for position, name in enumerate(names):
                key = f"v{row}_{position}"
                parameters[key] = columns[name][row]
                placeholders.append(f"${key}")
            rows.append("(" + ", ".join(placeholders) + ")")
        self.run(f"INSERT INTO {table} ({', '.join(names)}) VALUES {', '.join(rows)}", parameters)

    def _insert_numpy(self, table: str, names: list[str], columns: Mapping[str, Sequence[Any]]) -> None:
        import numpy

        batch = {
            name: numpy.asarray(columns[name], dtype=object if _array_kind(columns[name]) == "text" else numpy.int64)
            for name in names
        }
        view = f"batch_{table}"
        self._connection.register(view, batch)
        try:
            self.run(f"INSERT INTO {table} ({', '.join(names)}) SELECT {', '.join(names)} FROM {view}")
        finally:
            self._connection.unregister(view)

    def insert_vectors(
        self,
        content_hashes: Sequence[str],
        ordinals: Sequence[int],
        char_counts: Sequence[int],
        vectors: Any,
        *,
        table: str = "chunk_vectors",
    ) -> None:
        """Insert chunk vectors (rows of floats, or a NumPy matrix) in one statement, each component
        rounded to `VECTOR_DECIMALS` places: a registered NumPy batch when large (far faster than Python
        lists)."""
        count = len(content_hashes)
        if count == 0:
            return
        if count < 64 and not hasattr(vectors, "dtype"):
            # Each row's components bound as one string of decimals that DuckDB splits and casts (no list
            # is bound: `SCALAR_INSERT_VALUES`). Read as doubles first, so each is the float nearest its
            # rounded double, as a bound list's would be. Written into the statement as literals instead,
            # a vector's 256 numbers cost DuckDB's parser noticeably more. A component that has no decimal form (not
            # finite) is refused as a list would be.
            parameters: dict[str, Any] = {}
            values = []
            for row in range(count):
                parameters[f"hash_{row}"] = content_hashes[row]
                parameters[f"vector_{row}"] = _vector_decimals(vectors[row])
                values.append(
                    f"($hash_{row}, {int(ordinals[row])}, {int(char_counts[row])}, "
                    f"string_split($vector_{row}, ',')::DOUBLE[]::FLOAT[])"
                )
            columns = "content_hash, ordinal, char_count, vector"
            self.run(f"INSERT INTO {table} ({columns}) VALUES {', '.join(values)}", parameters)
            return
        import numpy

        # Rounded in double precision, then cast: each component is the float nearest its decimal, as
        # the list path's values are once DuckDB casts them.
        matrix = numpy.round(numpy.asarray(vectors, dtype=numpy.float64), VECTOR_DECIMALS).astype(numpy.float32)
        rows = numpy.empty(count, dtype=object)
        rows[:] = list(matrix)
        batch = {
            "content_hash": numpy.asarray(content_hashes, dtype=object),
            "ordinal": numpy.asarray(ordinals, dtype=numpy.int32),
            "char_count": numpy.asarray(char_counts, dtype=numpy.int32),
            "vector": rows,
        }
        self._connection.register("batch_vectors", batch)
        try:
            self.run(
                f"INSERT INTO {table} SELECT content_hash, ordinal, char_count, vector::FLOAT[] FROM batch_vectors"
            )
        finally:
            self._connection.unregister("batch_vectors")

    def execute_script(self, statements: str) -> None:
        """Run a multi-statement SQL script (a migration)."""
        try:
            self._execute(statements)
        except duckdb.Error as error:
            raise StorageFailure(f"a migration failed ({type(error).__name__}: {error})", []) from error

    def close(self) -> None:
        """Checkpoint each file whose log passed `LOG_CHECKPOINT_BYTES`, then close (or detach both files
        from the shared instance, which releases them the same way). A failed checkpoint or close loses
        nothing committed (the log replays on the next open), so it must not turn a command whose work
        landed into a failure."""
        if not self.read_only:
            with contextlib.suppress(duckdb.Error, OSError):
                self._checkpoint_long_logs()
        if self._shared:
            _release_shared(self._connection)
        elif lifetime.ends_by_exit():
            _leave_for_exit(self._connection)
        else:
            with contextlib.suppress(duckdb.Error):
                self._connection.close()

    def _checkpoint_long_logs(self) -> None:
        for catalog, path in self._files.items():
            log = Path(f"{path}.wal")
            if log.exists() and log.stat().st_size > LOG_CHECKPOINT_BYTES:
                self._execute(f'CHECKPOINT "{catalog}"')


# Connections closed by a process that ends with `os._exit` (`lifetime.ends_by_exit`), left open for
# the exit. Closing one tears DuckDB's instance down (its catalog, buffers and threads): work at the
# end of every command, which the kernel does for nothing when the process ends. What the connection
# committed is in the file or its write-ahead log already (a commit syncs the log; `close` checkpointed
# a long log just before), and its lock goes with the process, a moment later, once the answer is out.
_left_for_exit: list[duckdb.DuckDBPyConnection] = []


def _leave_for_exit(connection: duckdb.DuckDBPyConnection) -> None:
    _left_for_exit.append(connection)
    lifetime.defer_release(close_left_connections)


def close_left_connections() -> None:
    """Close the connections left for the exit: before this process opens a file again (DuckDB would
    hand it the instance still open), or when it ends the ordinary way after all."""
    while _left_for_exit:
        with contextlib.suppress(duckdb.Error):
            _left_for_exit.pop().close()


@contextmanager
def interrupts_raised() -> Iterator[None]:
    """Let a signal taken while DuckDB runs a statement end it as a KeyboardInterrupt. A Python signal
    handler that raises during a statement makes DuckDB cancel it and answer `RuntimeError("Query
    interrupted")`, dropping the handler's exception: the caller must see the interrupt, not a defect."""
    try:
        yield
    except duckdb.InterruptException as error:
        raise KeyboardInterrupt from error
    except RuntimeError as error:
        if str(error) == "Query interrupted":
            raise KeyboardInterrupt from error
        raise


def membership(column: str, name: str, values: Collection[Any]) -> tuple[str, dict[str, Any]]:
    """`column IN (...)` over `values` and the parameters it binds, named after `name`: one parameter
    per value for a short list (an index probe), one list parameter for a long one; never true when
    `values` is empty."""
    listed = list(values)
    if not listed:
        return "false", {}
    if len(listed) > EXPANDED_MEMBERSHIP_LIMIT:
        return f"{column} IN (SELECT unnest(${name}))", {name: listed}
    names = [f"{name}_{number}" for number in range(len(listed))]
    placeholders = ", ".join(f"${parameter}" for parameter in names)
    return f"{column} IN ({placeholders})", dict(zip(names, listed, strict=True))


def _vector_decimals(components: Sequence[float]) -> str:
    """`c1,c2,...`: each component rounded to `VECTOR_DECIMALS` places; ValueError for a component that
    is not finite."""
    rounded = [round(float(value), VECTOR_DECIMALS) for value in components]
    if not all(math.isfinite(value) for value in rounded):
        raise ValueError("a vector component is not finite")
    return ",".join(f"{value:.{VECTOR_DECIMALS}f}" for value in rounded)


def _array_kind(values: Sequence[Any]) -> str | None:
    """ "int" or "text" when every value is a non-null int or str (NumPy-able), else None."""
    if all(type(value) is int for value in values):
        return "int"
    if all(type(value) is str for value in values):
        return "text"
    return None


def database_paths(root: Path) -> tuple[Path, Path]:
    directory = root / ".memhtml"
    return directory / INDEX_FILENAME, directory / STATE_FILENAME


def index_exists(root: Path) -> bool:
    return database_paths(root)[0].exists()


@contextmanager
def open_database(
    root: Path,
    *,
    read_only: bool = False,
    lock_wait: float = LOCK_RETRY_SECONDS,
    meanwhile: Callable[[], object] | None = None,
) -> Iterator[Database]:
    """Open (creating and migrating on first use) both planes of the store at `root`, then close.
    While another process holds a file, retry for up to `lock_wait` seconds (0: try once).

    `meanwhile` is the caller's own preparation (imports, loading a model), which must not need the
    database: it runs in this thread while DuckDB starts its instance on another. The start is a stretch
    of native code that releases the GIL once `pathlib` is imported (DuckDB's binding imports it at the
    first connect, on the connecting thread: in a process without it, a connect beside a thread running
    Python waited for the GIL, and took about twice as long).
    An open of the same file and mode that `open_ahead` started is taken instead of starting another.
    """
    refuse_to_open(root)
    index_file, state_file = database_paths(root)
    _refuse_non_files(index_file, state_file)
    ahead = _take_ahead(index_file, read_only=read_only, lock_wait=lock_wait)
    if ahead is None and not (index_file.exists() and state_file.exists()):
        index_file.parent.mkdir(parents=True, exist_ok=True)
        _publish_missing({index_file: "index", state_file: "state"})
    shared = bool(_shared_instance)

    def open_planes() -> Database:
        return _open_planes(index_file, state_file, read_only, lock_wait, shared=shared)

    if ahead is not None:
        database = ahead.taken(meanwhile)
    elif meanwhile is None:
        database = open_planes()
    elif shared:  # attaching to the running instance is quick: nothing to overlap
        meanwhile()
        database = open_planes()
    else:
        database = _OpenOnThread(open_planes, read_only=read_only).taken(meanwhile)
    try:
        yield database
    finally:
        database.close()


class _OpenOnThread:
    """`open_planes()` run on a thread of its own from the moment this is made, until a caller takes the
    database (`taken`) or closes it: started ahead of the command (`open_ahead`), or beside the
    command's own preparation (`open_database(meanwhile=...)`)."""

    def __init__(self, open_planes: Callable[[], Database], *, read_only: bool) -> None:
        import threading

        self.read_only = read_only
        self._opened: list[Database] = []
        self._failed: list[BaseException] = []
        # A daemon: a command interrupted, or one that ends before it needs the index, must not wait for
        # a lock this open may still be retrying (bounded by its `lock_wait` either way); a process that
        # ends with `os._exit` releases whatever it holds.
        self._thread = threading.Thread(target=self._open, args=(open_planes,), name="memhtml-open-index", daemon=True)
        self._thread.start()

    def _open(self, open_planes: Callable[[], Database]) -> None:
        try:
            self._opened.append(open_planes())
        except BaseException as error:  # handed to the thread that takes the open, which raises it
            self._failed.append(error)

    def taken(self, meanwhile: Callable[[], object] | None) -> Database:
        """The open database, once `meanwhile()` ran here; the open's failure is raised here, and a failure
        of `meanwhile` closes what the open opened."""
        try:
            if meanwhile is not None:
                meanwhile()
        except BaseException:
            self.close()
            raise
        self._thread.join()
        if self._failed:
            raise self._failed[0]
        return self._opened[0]

    def close(self) -> None:
        self._thread.join()
        for database in self._opened:
            database.close()


# Opens started ahead, by index file, each until an open of its file takes it or drops it.
_ahead: dict[Path, _OpenOnThread] = {}


def open_ahead(root: Path, *, read_only: bool = False) -> None:
    """Start opening the index of the store at `root` now, on a thread, for this command's next
    `open_database` of that mode to take: DuckDB then starts its instance while the command imports what
    it runs and opens the store, not after. Only a process that ends with `os._exit` does this (an open
    it never takes is released at that exit), and only for files that exist already (nothing is created
    before the command has checked that `root` is a store). It takes a share of the instance's start off
    an index update after one commit (figures in docs/performance.md)."""
    if not lifetime.ends_by_exit() or _shared_instance:
        return
    # Only ever a head start: whatever keeps it from starting (a file it may not look at, no thread to
    # be had) is left to the command's own open, which meets it again and says what it is.
    try:
        index_file, state_file = database_paths(root.resolve())
        if index_file in _ahead or not (index_file.is_file() and state_file.is_file()):
            return
        _ahead[index_file] = _OpenOnThread(
            lambda: _open_planes(index_file, state_file, read_only, LOCK_RETRY_SECONDS, shared=False),
            read_only=read_only,
        )
    except (OSError, RuntimeError):
        return


def _take_ahead(index_file: Path, *, read_only: bool, lock_wait: float) -> _OpenOnThread | None:
    """The open started ahead for `index_file` when it is of this mode and patience; one of another
    mode is closed first, so this process never holds the file twice."""
    ahead = _ahead.pop(index_file.resolve(), None) if _ahead else None
    if ahead is not None and (ahead.read_only != read_only or lock_wait != LOCK_RETRY_SECONDS):
        ahead.close()
        return None
    return ahead


def drop_ahead(root: Path) -> None:
    """Close the index this process opened ahead for `root`, if any (before its file is moved)."""
    ahead = _ahead.pop(database_paths(root.resolve())[0], None)
    if ahead is not None:
        ahead.close()


def _open_planes(index_file: Path, state_file: Path, read_only: bool, lock_wait: float, *, shared: bool) -> Database:
    """Both planes attached to one connection and migrated; nothing is left open when it fails. A writer
    holds the files' turnstile meanwhile, which keeps new readers from starting (`writers_first`).

    A connection this process left for its exit is closed before the turnstile, not after it: a search
    that found the index stale and opens it again to write would otherwise wait there with its read-only
    open still holding the file, keeping out the writer already past the turnstile, each waiting for the
    other until one gave up (four searches and a write on a stale index waited out the lock wait, and one
    failed)."""
    close_left_connections()
    with writers_first(index_file, writer=not read_only, wait_seconds=lock_wait):
        return _open_both_planes(index_file, state_file, read_only, lock_wait, shared=shared)


def _open_both_planes(
    index_file: Path, state_file: Path, read_only: bool, lock_wait: float, *, shared: bool
) -> Database:
    connection = (_attach_shared if shared else _connect_with_retry)(index_file, read_only, lock_wait)
    try:
        catalog = _catalog_of(index_file, shared=shared)
        database = Database(
            connection, read_only, shared=shared, main_catalog=catalog, files={catalog: index_file, "state": state_file}
        )
    except BaseException:
        if shared:
            _release_shared(connection)
        else:
            connection.close()
        raise
    try:
        _attach_with_retry(connection, state_file, read_only, lock_wait)
        # One statement tells an up-to-date pair of files (every read-write open) from one that needs work.
        if not read_only and migrations.pending_migrations(database):
            migrations.apply_migrations(database, "main", migrations.migrations_root() / "index")
            migrations.apply_migrations(database, "state", migrations.migrations_root() / "state")
    except BaseException:
        database.close()
        raise
    return database


def _catalog_of(index_file: Path, *, shared: bool) -> str:
    """The catalog DuckDB gives the index plane: its alias when attached to the shared instance, else the
    file's name up to its first dot (`index.duckdb` is `index`)."""
    return INDEX_ALIAS if shared else index_file.name.split(".", 1)[0]


def _publish_missing(planes: Mapping[Path, str]) -> None:
    """Create each missing database file whole: built and migrated under a private name, then linked
    into place. DuckDB reads a file's header before it takes the file's lock, so a process opening a
    file that another one is still creating fails ("not a valid DuckDB database file"); a published
    file is complete from its first byte. Processes that create at once each build a copy; the first
    link wins and the others drop theirs."""
    for target, plane in planes.items():
        if target.exists():
            continue
        private = target.with_name(f"{target.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
        try:
            # Attached under the name a regular open gives it, so a migration reads the same either way.
            connection = duckdb.connect()
            try:
                connection.execute(f"ATTACH '{_sql_string(str(private))}' AS \"{plane}\"")
                connection.execute(f'USE "{plane}"')
                migrations.apply_migrations(Database(connection, False), "main", migrations.migrations_root() / plane)
                connection.execute(f'CHECKPOINT "{plane}"')  # everything in the file itself, no write-ahead log
            finally:
                connection.close()
            try:
                os.link(private, target)
            except FileExistsError:
                pass  # another process published it first
            except OSError:  # a file system without hard links: a rename publishes it as whole
                if not target.exists():
                    os.rename(private, target)
        except duckdb.Error as error:
            raise StorageFailure(f"the {plane} database could not be created", ["retry the same command"]) from error
        finally:
            private.unlink(missing_ok=True)
            private.with_name(private.name + ".wal").unlink(missing_ok=True)  # left only by a failed build


# The process's one DuckDB instance, once `share_one_instance` asked for it; `_shared_in_use` says an
# open holds it (opens never nest: the files are attached under fixed names).
_shared_instance: list[duckdb.DuckDBPyConnection] = []
_shared_in_use: list[bool] = [False]


def share_one_instance() -> None:
    """Attach each open's files to one DuckDB instance kept for the life of the process, and detach
    them when the open ends, instead of starting an instance per open.

    Starting an instance costs the same on every open, whatever the file; attaching a file to a running
    one costs a small fraction of that, and detaching releases the file's lock (leaving its log as
    closing does), so other processes can take it between calls. For a process that opens the index call after call (the
    MCP server), one open at a time; a single command gains nothing from it.
    """
    if not _shared_instance:
        instance = duckdb.connect(":memory:")
        instance.execute("SET enable_progress_bar = false")
        instance.execute("SET checkpoint_on_detach = 'DISABLED'")  # `Database.close` decides
        _shared_instance.append(instance)


def _attach_shared(index_file: Path, read_only: bool, lock_wait: float) -> duckdb.DuckDBPyConnection:
    if _shared_in_use[0]:
        raise RuntimeError("the index is already open in this process; opens of the shared instance never nest")
    instance = _shared_instance[0]
    _attach_with_retry(instance, index_file, read_only, lock_wait, alias=INDEX_ALIAS)
    _shared_in_use[0] = True
    try:
        instance.execute(f'USE "{INDEX_ALIAS}"')
    except duckdb.Error as error:
        _release_shared(instance)
        raise _unopenable(INDEX_ALIAS, locked=False, damaged=_reports_damage(error)) from error
    return instance


def _release_shared(instance: duckdb.DuckDBPyConnection) -> None:
    try:
        instance.execute("USE memory")
        for alias in ("state", INDEX_ALIAS):
            instance.execute(f'DETACH DATABASE IF EXISTS "{alias}"')
    except duckdb.Error:
        # An instance that cannot let go of a file is dropped (closing it releases everything); the
        # next open starts a new one.
        _shared_instance.clear()
        with contextlib.suppress(duckdb.Error):
            instance.close()
        share_one_instance()
    finally:
        _shared_in_use[0] = False


def _connect_with_retry(index_file: Path, read_only: bool, lock_wait: float) -> duckdb.DuckDBPyConnection:
    def connect() -> duckdb.DuckDBPyConnection:
        connection = _past_foreign_log(index_file, lambda: duckdb.connect(str(index_file), read_only=read_only))
        connection.execute("SET enable_progress_bar = false")
        if not read_only:
            connection.execute("PRAGMA disable_checkpoint_on_shutdown")  # `Database.close` decides
        return connection

    return _retrying_locks(connect, INDEX_ALIAS, lock_wait)


def _attach_with_retry(
    connection: duckdb.DuckDBPyConnection, file: Path, read_only: bool, lock_wait: float, *, alias: str = "state"
) -> None:
    mode = " (READ_ONLY)" if read_only else ""

    def attach() -> object:
        return connection.execute(f"ATTACH '{_sql_string(str(file))}' AS \"{alias}\"{mode}")

    _retrying_locks(lambda: _past_foreign_log(file, attach), alias, lock_wait)


def _past_foreign_log(file: Path, open_file: Callable[[], _Opened]) -> _Opened:
    """`open_file()`; when DuckDB refuses `file` because the write-ahead log beside it belongs to another
    file (one deleted and created anew in its place, `rm .memhtml/index.duckdb` among them, whose log
    stayed), that log is renamed aside, never deleted, and the open tried once more. DuckDB checks the
    pairing itself, so a log this renames could never have been replayed into `file`."""
    try:
        return open_file()
    except duckdb.Error as error:
        if "wal does not match database file" not in str(error).lower():
            raise
    log = file.with_name(file.name + ".wal")
    aside = file.with_name(f"{file.name}.wal.foreign-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):  # another process moved it first
        os.replace(log, aside)
    return open_file()


def _retrying_locks(open_file: Callable[[], _Opened], alias: str, lock_wait: float) -> _Opened:
    """`open_file()`, retried with jittered backoff while another process holds the file, for up to
    `lock_wait` seconds; a failure over the file itself becomes `_unopenable`'s error, any other is raised."""
    deadline = time.monotonic() + lock_wait
    delay = 0.015
    while True:
        try:
            return open_file()
        except duckdb.Error as error:
            if not _about_the_file(error):
                raise
            locked = _reports_lock(error)
            if not locked or time.monotonic() >= deadline:
                raise _unopenable(alias, locked=locked, damaged=_reports_damage(error)) from error
            time.sleep(delay * random.uniform(0.8, 1.2))
            delay = min(delay * 2, 0.5)


# What DuckDB says of a file whose bytes are wrong (cut short, overwritten, a block whose checksum does
# not match): no retry reads other bytes. Any other failure (a full disk, permissions) is not called damage.
_DAMAGE_SIGNS: Final = (
    "corrupt database file",
    "could not read enough bytes",
    "not a valid duckdb database file",
    "does not match stored checksum",
)


def _about_the_file(error: BaseException) -> bool:
    """Whether an open failed over the file itself (I/O, a lock, damaged bytes), not over how it was asked."""
    return isinstance(error, duckdb.IOException) or _reports_damage(error)


def _reports_lock(error: BaseException) -> bool:
    # DuckDB's words for a file another process holds; a bare "lock" would also match a damaged "block".
    text = str(error).lower()
    return "could not set lock" in text or "conflicting lock" in text


def _reports_damage(error: BaseException) -> bool:
    text = str(error).lower()
    return any(sign in text for sign in _DAMAGE_SIGNS)


def _unopenable(alias: str, *, locked: bool, damaged: bool) -> MemhtmlError:
    if alias == "state":
        if locked:
            return LockTimeout(
                "the state database is held by another memhtml process for too long", ["retry the same command"]
            )
        if not damaged:
            return StorageFailure("the state database could not be opened", ["retry the same command"])
        return _damaged_state("it is damaged or is not a DuckDB database")
    if locked:
        return LockTimeout(
            "the index is held by another memhtml process for too long",
            ["retry the same command", "memhtml index rebuild"],
        )
    if not damaged:
        return StorageFailure("the index file could not be opened", ["retry the same command", "memhtml index rebuild"])
    return _damaged_index("it is damaged or is not a DuckDB database")


def _damaged_index(why: str) -> DamagedIndex:
    return DamagedIndex(f"the index file could not be opened: {why}", ["memhtml index rebuild"])


def _damaged_state(why: str) -> DamagedStateDatabase:
    # Not rebuildable from git: `doctor --fix` sets it aside and restores the counters of the sidecar
    # `state export` last committed.
    return DamagedStateDatabase(f"the state database could not be opened: {why}", ["memhtml doctor --fix"])


def _refuse_non_files(index_file: Path, state_file: Path) -> None:
    """A directory (or anything but a file) where a database file belongs is damage DuckDB would only
    report as a failure to open, which retrying never mends."""
    for path, damaged in ((index_file, _damaged_index), (state_file, _damaged_state)):
        if path.exists() and not path.is_file():
            raise damaged(f"{path.parent.name}/{path.name} is not a file")


def _sql_string(text: str) -> str:
    return text.replace("'", "''")
