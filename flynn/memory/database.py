"""The SQLite connection: pragmas, applying the migrations (a ``flynn.memory.migrations.Schema``),
transactions, time encoding, and the checks that say whether the file can be used at all
(``verify`` at start; ``probe_write``, which ``flynn.memory.health`` runs for ``/readyz``).

Every sqlite3 error is mapped to ``StoreError`` here, so nothing above sees the driver's exceptions.
The database and its ``-wal``/``-shm`` files are made 0600 whatever the umask.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType

from flynn.datadir import PRIVATE_DIR_MODE, make_private
from flynn.errors import StorageUnusable, StoreError
from flynn.memory.migrations import Schema, statements

Params = Sequence[object] | Mapping[str, object]

WRITER_CACHE_KIB = 8192
"""The writer's page cache (SQLite's ``cache_size``), in KiB."""
READER_CACHE_KIB = 8192
"""Each reader's page cache, in KiB: a reader's pages come from the OS's cache when not in
its own, and a daemon keeps a reader per recall thread."""

_BUSY_TIMEOUT_PRAGMA = "PRAGMA busy_timeout = 5000"
_PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA foreign_keys = ON",
    _BUSY_TIMEOUT_PRAGMA,
    # NORMAL under WAL may lose the last commits on power loss, never consistency.
    "PRAGMA synchronous = NORMAL",
    # A resident cost while the daemon rests, not a speed-up: the cache fills to its cap (a
    # start's quick_check reads every page) and stays full. 32 MiB and 8 MiB missed as many
    # pages a turn (130 at 100,000 messages: the pages the turn writes) for the same CPU;
    # 2 MiB cost ~1.5 ms more CPU a turn (docs/embeddings.md, "Resident memory").
    f"PRAGMA cache_size = -{WRITER_CACHE_KIB:d}",
    # A turn writes ~10 pages, so the default (1000) made every ~100th turn pay for a checkpoint
    # and its fsyncs. Fewer, larger ones keep that out of the 99th percentile; with a
    # ``WalCheckpointer`` running, this is only a safety net.
    "PRAGMA wal_autocheckpoint = 4000",
)

_READER_PRAGMAS = (
    "PRAGMA query_only = ON",
    f"PRAGMA cache_size = -{READER_CACHE_KIB:d}",
)


_ZERO = timedelta(0)


def encode_time(moment: datetime) -> str:
    """``moment`` as fixed-width ISO-8601 UTC text, so that text order is time order."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r}: pass a timezone-aware time")
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def decode_time(text: str) -> datetime:
    """Inverse of ``encode_time``: a timezone-aware UTC datetime."""
    moment = datetime.fromisoformat(text)
    # Stored times are always UTC ("+00:00"), which ``fromisoformat`` already gives as the ``UTC``
    # singleton: recall decodes hundreds of rows per turn, so the common case does nothing more.
    if moment.tzinfo is UTC:
        return moment
    return moment.replace(tzinfo=UTC) if moment.utcoffset() == _ZERO else moment.astimezone(UTC)


def decode_optional_time(text: str | None) -> datetime | None:
    return None if text is None else decode_time(text)


_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_SIDE_FILES = ("-wal", "-shm")


@contextmanager
def _mapped_errors(action: str, error: type[StoreError] = StoreError) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise error(f"{action}: {exc}") from exc


def _is_busy(exc: sqlite3.Error) -> bool:
    """Another connection holds the lock: a sign of work, not of a broken file."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _BUSY_CODES


class Database:
    """One ``sqlite3.Connection`` in autocommit mode; multi-statement writes use ``transaction``.

    Not thread-safe: use it from the thread that opened it. The daemon has one writer, opened
    by ``open`` on the event loop, and readers (``open_reader``), each opened and used by one
    worker thread (``flynn.recall.worker``): WAL lets them read while the writer writes.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        path: Path,
        schema: Schema,
        *,
        follows: Database | None = None,
    ) -> None:
        """Use ``Database.open`` or ``open_reader``; this takes an already configured
        connection."""
        self._connection = connection
        self._path = path
        self._schema = schema
        self._depth = 0
        self._closed = False
        self.created = False
        """This open created the database (it had no schema): nothing an older version wrote."""
        # Rows of watched tables this connection updated or deleted (see ``watch_rewrites``).
        self._rewrites: dict[str, int] = {}
        # A reader's caches are valid for what its writer last published (``publish_rewrites``).
        self._follows = follows
        self._published: dict[str, tuple[int, int]] = {}
        # ``data_version`` as ``rewrites`` read it in this step of the event loop (see there).
        self._step_version: int | None = None
        self._step_loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def open(cls, path: Path, schema: Schema) -> Database:
        """Opens (creating if needed, mode 0600) the database at ``path`` and migrates it to the
        latest version of ``schema`` (the whole database's: ``flynn.schedule.migrations.SCHEMA``;
        a part of it would leave the others' tables out for good). Its file and ``-wal``/``-shm``
        are tightened to 0600 when looser.

        Raises ``StorageUnusable`` if the file is empty (0 bytes: SQLite would take it for a new
        database, and the memory it held would silently start over), cannot be opened or is not
        a database; ``StoreError`` if a migration fails or the schema is newer than this code.
        """
        _refuse_empty(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        except OSError as exc:
            raise StorageUnusable(
                f"cannot create directory for database {path}: {exc.strerror or exc}"
            ) from exc
        with _mapped_errors(f"cannot open database {path}", StorageUnusable):
            connection = sqlite3.connect(path, isolation_level=None, cached_statements=256)
        database = cls(connection, path, schema)
        try:
            # Before the first write: SQLite gives -wal and -shm the mode of the database file.
            _make_files_private(path)
            connection.row_factory = sqlite3.Row
            with _mapped_errors(f"cannot configure database {path}", StorageUnusable):
                for pragma in _PRAGMAS:
                    connection.execute(pragma).close()
            _make_files_private(path)
            database._migrate()
        except BaseException:
            database.close()
            raise
        return database

    @classmethod
    def open_reader(cls, writer: Database) -> Database:
        """A read-only connection to ``writer``'s database, for the calling thread alone. It
        migrates nothing and refuses every write (``PRAGMA query_only``); under WAL it reads
        the last commit while ``writer`` writes.

        Its ``rewrites`` are what ``writer`` last published (``publish_rewrites``), so caches
        of rows kept on either side of the threads are dropped for the same changes (this
        connection's own ``data_version`` moves at every commit of the writer's). Raises
        ``StorageUnusable`` when the file cannot be opened, or is no longer there (moved away or
        deleted while the daemon runs: it never creates one). Close it in the thread that used
        it, or once that thread has ended."""
        path = writer.path
        with _mapped_errors(f"cannot open database {path} for reading", StorageUnusable):
            # One thread uses it; another may close it once that thread has ended.
            connection = sqlite3.connect(
                existing_file(path),
                uri=True,
                isolation_level=None,
                cached_statements=256,
                check_same_thread=False,
            )
        database = cls(connection, path, writer.schema, follows=writer)
        try:
            connection.row_factory = sqlite3.Row
            with _mapped_errors(f"cannot configure database {path}", StorageUnusable):
                for pragma in (*_PRAGMAS[1:], *_READER_PRAGMAS):
                    connection.execute(pragma).close()
        except BaseException:
            database.close()
            raise
        return database

    @property
    def path(self) -> Path:
        return self._path

    @property
    def schema(self) -> Schema:
        """What the database was migrated with: its parts say who else keeps tables in it."""
        return self._schema

    @property
    def version(self) -> int:
        """The schema version recorded in ``PRAGMA user_version``."""
        row = self.fetchone("PRAGMA user_version")
        assert row is not None
        return int(row[0])

    def data_version(self) -> int:
        """Changes whenever another connection (another process, e.g. ``flynn memory forget``)
        commits to the database; commits of this connection do not change it."""
        row = self.fetchone("PRAGMA data_version")
        assert row is not None
        return int(row[0])

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def watch_rewrites(self, table: str) -> None:
        """Starts counting the rows of ``table`` this connection updates or deletes, whatever
        SQL does it (a store's own, ``forgetting``'s, a cascade): temporary triggers call back
        into Python, so the count costs no query to read. Idempotent.

        Inserts are not counted: they never change a row that was read before. (Neither is a
        row a ``REPLACE`` conflict deletes; nothing writes that way.) Raises ``StoreError``."""
        if not table.isidentifier():
            raise ValueError(f"not a table name: {table!r}")
        if table in self._rewrites:
            return
        self._rewrites[table] = 0
        if self._follows is not None:
            return  # a reader writes nothing: its writer counts (``open_reader``)
        function = f"flynn_rewrote_{table}"

        def rewrote() -> None:
            self._rewrites[table] += 1

        with _mapped_errors(f"cannot watch {table}"):
            self._connection.create_function(function, 0, rewrote)
            for event in ("UPDATE", "DELETE"):
                self._connection.execute(
                    f"CREATE TEMP TRIGGER IF NOT EXISTS flynn_{table}_{event.lower()}_watch "
                    f"AFTER {event} ON main.{table} BEGIN SELECT {function}(); END"
                ).close()

    def rewrites(self, table: str) -> tuple[int, int]:
        """Differs after this connection updated or deleted a row of ``table`` (or rolled a
        transaction back), or another connection committed: what a cache of rows read from
        ``table`` is valid for. ``table`` must be watched (``watch_rewrites``).

        A reader's (``open_reader``) is what its writer last published for ``table``; when
        the writer watches no such table, this connection's ``data_version`` alone (which
        moves at every commit of any other connection)."""
        if self._follows is not None:
            published = self._follows._published.get(table)
            return published if published is not None else (-1, self.data_version())
        return self._rewrites[table], self._version_this_step()

    def _version_this_step(self) -> int:
        """``data_version``, read once in a step of the running event loop (the code that runs
        between two awaits that wait), and at every call without one. A turn's caches look at
        it six times in one step, at 3.6 us a query; another process's commit during that
        step is seen at the next one, as if it had come a moment later."""
        loop = asyncio._get_running_loop()
        version = self._step_version
        # Only in the loop that read it: one stopped and closed in that step never forgets it.
        if version is not None and loop is self._step_loop:
            return version
        version = self.data_version()
        if loop is not None:
            self._step_version, self._step_loop = version, loop
            loop.call_soon(self._forget_step_version)
        return version

    def _forget_step_version(self) -> None:
        self._step_version, self._step_loop = None, None

    def note_write(self, table: str) -> None:
        """Counts a write to the watched ``table`` in its ``rewrites``, as an update is: for an
        insert that caches kept by ``rewrites`` must see (a search's counts of words), here and
        in readers (once published)."""
        self._rewrites[table] += 1

    def publish_rewrites(self) -> None:
        """Makes ``rewrites`` of every watched table, as of now, what this writer's readers
        (``open_reader``, in other threads) see: called on the writer's thread before work is
        handed to a reader. One query."""
        version = self.data_version()
        # A new dict, swapped in whole: a reader's thread only ever reads a finished one.
        self._published = {table: (count, version) for table, count in self._rewrites.items()}

    def integrity_check(self) -> list[str]:
        """Problems found in the file and the full-text indexes; empty when healthy."""
        problems = [
            str(row[0]) for row in self.fetchall("PRAGMA integrity_check") if str(row[0]) != "ok"
        ]
        for index in ("facts_fts", "messages_fts", "team_chunks_fts"):
            try:
                self.execute(f"INSERT INTO {index}({index}) VALUES ('integrity-check')")
            except StoreError as exc:
                problems.append(f"{index}: {exc}")
        return problems

    def verify(self) -> None:
        """Checks, once at start, that the database can be used at all: ``PRAGMA quick_check``
        (reads every page, so it costs about a second per GB) and a write that reaches the file.

        Raises ``StorageUnusable`` naming the first problem (corrupt pages, a read-only file or
        directory, a full disk), ``StoreError`` when another connection kept the write lock for
        longer than ``busy_timeout``."""
        with _mapped_errors(f"database {self._path} cannot be read", StorageUnusable):
            rows = self._connection.execute("PRAGMA quick_check").fetchall()
        problems = [" ".join(str(row[0]).split()) for row in rows if str(row[0]) != "ok"]
        if problems:
            raise StorageUnusable(
                f"database {self._path} is corrupt ({problems[0]}); restore it from a backup "
                "(or move it away to start with an empty memory)"
            )
        self.probe_write()

    def probe_write(self, *, busy_timeout_ms: int | None = None) -> None:
        """Commits a transaction that rewrites the schema version with its own value: the
        cheapest write that reaches the file (one WAL frame), so a read-only file, a full disk or
        an I/O error shows here rather than in a person's turn. Changes nothing another reader
        could see but ``data_version``.

        ``busy_timeout_ms`` bounds the wait for the write lock (default: the connection's).
        Raises ``StorageUnusable`` when the write fails, ``StoreError`` when the lock stayed busy
        or this connection is inside a transaction."""
        if self._depth:
            raise StoreError("cannot probe the database inside a transaction")
        connection = self._connection
        try:
            if busy_timeout_ms is not None:
                connection.execute(f"PRAGMA busy_timeout = {busy_timeout_ms:d}").close()
            try:
                connection.execute("BEGIN IMMEDIATE").close()
                row = connection.execute("PRAGMA user_version").fetchone()
                connection.execute(f"PRAGMA user_version = {int(row[0]):d}").close()
                connection.execute("COMMIT").close()
            except sqlite3.Error:
                if connection.in_transaction:
                    connection.execute("ROLLBACK").close()
                raise
            finally:
                if busy_timeout_ms is not None:
                    connection.execute(_BUSY_TIMEOUT_PRAGMA).close()
        except sqlite3.Error as exc:
            if _is_busy(exc):
                raise StoreError(f"database {self._path} is busy: {exc}") from exc
            raise StorageUnusable(f"database {self._path} cannot be written: {exc}") from exc

    def execute(self, sql: str, params: Params = ()) -> int:
        """Runs one statement to completion; returns the number of rows it changed."""
        with _mapped_errors("database statement failed"):
            cursor = self._connection.execute(sql, params)
            try:
                return cursor.rowcount
            finally:
                cursor.close()

    def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """Runs one statement for each of ``rows``; returns the number of rows changed."""
        with _mapped_errors("database statement failed"):
            cursor = self._connection.executemany(sql, rows)
            try:
                return cursor.rowcount
            finally:
                cursor.close()

    def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """The first row of ``sql`` (which may be ``INSERT ... RETURNING``), or ``None``."""
        with _mapped_errors("database query failed"):
            cursor = self._connection.execute(sql, params)
            try:
                row: sqlite3.Row | None = cursor.fetchone()
                return row
            finally:
                # Resets the statement: a half-stepped ``RETURNING`` statement would otherwise
                # keep its implicit write transaction open.
                cursor.close()

    def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        with _mapped_errors("database query failed"):
            cursor = self._connection.execute(sql, params)
            try:
                rows: list[sqlite3.Row] = cursor.fetchall()
                return rows
            finally:
                cursor.close()

    def batches(self, sql: str, params: Params = (), *, size: int) -> Iterator[list[sqlite3.Row]]:
        """The rows of ``sql``, ``size`` at a time, for a result too large to hold at once.
        Consume it whole or close it: the statement keeps reading until then."""
        with _mapped_errors("database query failed"):
            cursor = self._connection.execute(sql, params)
        try:
            while True:
                with _mapped_errors("database query failed"):
                    rows: list[sqlite3.Row] = cursor.fetchmany(size)
                if not rows:
                    return
                yield rows
        finally:
            cursor.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Runs the block as one write transaction: everything lands, or nothing does.

        The outermost use takes the write lock up front (``BEGIN IMMEDIATE``), so a concurrent
        writer waits out ``busy_timeout`` instead of failing mid-way. Nested uses are savepoints:
        an exception rolls back only the inner block if it is caught inside the outer one.
        Any exception, including cancellation, rolls back and propagates.
        """
        savepoint = f"flynn_{self._depth}"
        outermost = self._depth == 0
        with _mapped_errors("cannot begin transaction"):
            self._connection.execute("BEGIN IMMEDIATE" if outermost else f"SAVEPOINT {savepoint}")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth -= 1
            self._rollback(outermost, savepoint)
            raise
        self._depth -= 1
        try:
            with _mapped_errors("cannot commit transaction"):
                self._connection.execute("COMMIT" if outermost else f"RELEASE {savepoint}")
        except StoreError:
            self._rollback(outermost, savepoint)
            raise

    def _rollback(self, outermost: bool, savepoint: str) -> None:
        # Rows read inside the transaction may be gone, and their ids handed out again.
        for table in self._rewrites:
            self._rewrites[table] += 1
        with _mapped_errors("cannot roll back transaction"):
            if outermost:
                if self._connection.in_transaction:
                    self._connection.execute("ROLLBACK")
            else:
                self._connection.execute(f"ROLLBACK TO {savepoint}")
                self._connection.execute(f"RELEASE {savepoint}")

    def close(self) -> None:
        """Closes the connection; safe to call twice. An open transaction is rolled back."""
        if self._closed:
            return
        self._closed = True
        with _mapped_errors(f"cannot close database {self._path}"):
            self._connection.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _migrate(self) -> None:
        current = self.version
        latest = self._schema.latest
        if current > latest:
            raise StoreError(
                f"database {self._path} has schema version {current}, but this flynn only knows "
                f"versions up to {latest}; upgrade flynn (or restore an older backup)"
            )
        for version in range(current + 1, latest + 1):
            with self.transaction():
                # Another process may have migrated while we waited for the write lock.
                if self.version >= version:
                    continue
                self.created = self.created or version == 1
                with _mapped_errors(f"migration {version} of {self._path} failed"):
                    for statement in statements(self._schema.migrations[version - 1]):
                        self._connection.execute(statement).close()
                    # PRAGMA takes no bound parameters; ``version`` is our own int.
                    self._connection.execute(f"PRAGMA user_version = {version:d}").close()


def existing_file(path: Path) -> str:
    """The URI (``sqlite3.connect(..., uri=True)``) that opens the database at ``path`` for
    reading and writing but never creates it: a side connection (a reader, a checkpoint) that
    found the file gone would otherwise leave an empty one in its place, which the next start
    refuses as a memory that is lost."""
    return f"{path.absolute().as_uri()}?mode=rw"


def _refuse_empty(path: Path) -> None:
    try:
        size = path.stat().st_size
    except OSError:
        return  # missing (created next) or unreadable (opening says why)
    if size == 0 and path.is_file():
        raise StorageUnusable(
            f"database {path} is an empty file (0 bytes), so whatever it held is gone; restore "
            "it from a backup, or delete it to start with an empty memory"
        )


def _make_files_private(path: Path) -> None:
    for file in (path, *(path.with_name(path.name + side) for side in _SIDE_FILES)):
        try:
            make_private(file)
        except OSError:
            # A read-only file system: reading still works, and a daemon's ``verify`` refuses
            # to start on it with the reason.
            continue
