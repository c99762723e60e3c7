"""The PostgreSQL connection: a pool of psycopg connections, applying the migrations
(``flynn.postgres.migrations``) under an advisory lock, statements and transactions, and the
health checks (``verify`` at start; ``probe_write``, which ``flynn.memory.health`` runs for
``/readyz``).

A server found down (a statement waited ``REACH_SECONDS`` for a connection and one attempt of
its own could not connect) fails every statement at once (``StoreUnreachable``), rather than
each waiting the pool's timeout on the event loop, until a thread that tries to connect every
``RECHECK_SECONDS`` finds it back; then the pool's dead connections are replaced and statements
run again.

Every psycopg error is mapped to ``StoreError`` here, so nothing above sees the driver's
exceptions, and no message raised here carries the URL's password (``flynn.postgres.urls``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from types import TracebackType
from typing import Any

import psycopg
import structlog
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from flynn.errors import StorageUnusable, StoreError, StoreUnreachable
from flynn.postgres.migrations import LATEST_VERSION, MIGRATIONS
from flynn.postgres.urls import passwords_in, shown_url, strike

log = structlog.get_logger(__name__)

Params = Sequence[object] | Mapping[str, object]
Row = DictRow
Connection = psycopg.Connection[DictRow]
AsyncConnection = psycopg.AsyncConnection[DictRow]

_NAMED = re.compile(r"(?<![:\w]):(\w+)")
# ``IS`` before a parameter is SQLite's null-safe equality, never ``IS NULL`` or ``IS NOT``.
_NULL_SAFE = re.compile(r"\bIS (?=[:?])")
_DIAGNOSIS_SECONDS = 2
"""How long the attempt that says why no connection came may take (libpq's shortest)."""
REACH_SECONDS = 1.0
"""How long a statement waits for a connection before one attempt of its own asks whether the
server answers at all (a pool whose connections are all in use waits on, up to its timeout)."""
RECHECK_SECONDS = 1.0
"""Between attempts to reach a server found down."""
_RECONNECT_SECONDS = 5.0
"""How long the pool retries one lost connection (with its growing delay) before it gives up
and makes a new one when next asked: never minutes behind a server that is back."""
_MIGRATION_LOCK = 0x466C796E6E  # "Flynn": one worker migrates, the others wait and see it done
# The cheapest write that reaches the server's log: the newest ledger row, rewritten as it is.
_PROBE = """
UPDATE flynn_migrations SET applied_at = applied_at
WHERE version = (SELECT max(version) FROM flynn_migrations)
"""
_LEDGER = """
CREATE TABLE IF NOT EXISTS flynn_migrations (
    version    integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


class _Unreachable(Exception):
    """No connection: the server does not answer (the reason, without the password)."""


@lru_cache(maxsize=1024)
def psycopg_statement(sql: str) -> str:
    """A statement a store writes once for both backends, in SQLite's form (``?``, ``:name``,
    ``IS`` between a column and a parameter), as psycopg takes it (``%s``, ``%(name)s``,
    ``IS NOT DISTINCT FROM``); a ``%`` is kept as one, and ``::type`` casts are left alone.
    The statements are a fixed set, so the cache holds them all."""
    sql = _NULL_SAFE.sub("IS NOT DISTINCT FROM ", sql.replace("%", "%%"))
    return _NAMED.sub(r"%(\1)s", sql.replace("?", "%s"))


def utc(moment: datetime) -> datetime:
    """A ``timestamptz`` read back, as the SQLite stores give times: aware, in ``UTC``."""
    return moment if moment.tzinfo is UTC else moment.astimezone(UTC)


def aware(moment: datetime) -> datetime:
    """Refuses a naive time, as ``flynn.memory.database.encode_time`` does."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r}: pass a timezone-aware time")
    return moment


class PostgresDatabase:
    """A small pool of connections in autocommit mode; multi-statement writes use
    ``transaction``, which holds one connection for its whole block.

    A transaction belongs to the thread that opened it (not to a task): another thread's
    statements meanwhile take connections of their own, outside it, as a recall thread's
    reads do beside the event loop's writes (``flynn.recall.worker``).
    """

    def __init__(self, pool: ConnectionPool[Connection], shown: str, passwords: tuple[str, ...]):
        """Use ``PostgresDatabase.open``; this takes an opened pool."""
        self._pool = pool
        self._shown = shown
        self._passwords = passwords
        # The connection of the transaction open in each thread (``transaction``).
        self._local = threading.local()
        self._closed = False
        self.created = False
        """This open created the schema (no migration had run): nothing an older version wrote."""
        self._down_lock = threading.Lock()
        self._down: str | None = None
        """Why the server was found down (``_found_down``); None while it answers."""
        self._closing = threading.Event()

    @classmethod
    def open(
        cls,
        url: str,
        *,
        max_connections: int = 4,
        timeout_seconds: float = 10.0,
        writer: str | None = None,
    ) -> PostgresDatabase:
        """Connects to the database at ``url`` (``postgresql://user:password@host/name``) and
        migrates it to the latest schema, then keeps up to ``max_connections`` open.
        ``writer`` is set as each connection's ``flynn.writer``: ``"copy"`` (moving house)
        writes without marking the database live (migration 14, ``went_live``).

        Raises ``StorageUnusable`` when the server cannot be reached or refuses the login,
        ``StoreError`` when a migration fails or the schema is newer than this code; their
        messages show the URL without its password."""
        shown = shown_url(url)
        passwords = passwords_in(url)
        settings = _settings()
        try:
            if writer is not None:
                # Beside the URL's own options (a search_path), which a keyword would replace.
                given = conninfo_to_dict(url).get("options") or ""
                settings["options"] = f"{given} -c flynn.writer={writer}".strip()
            with psycopg.connect(url, connect_timeout=max(1, round(timeout_seconds)), **settings):
                pass
        except psycopg.Error as exc:
            # ``from None``: the driver's own exception may quote the URL it could not parse.
            raise StorageUnusable(
                f"cannot open database {shown}: {strike(str(exc).strip(), passwords)}"
            ) from None
        pool: ConnectionPool[Connection] = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            kwargs=settings,
            configure=_configure,
            # A connection is checked (one round trip) as it is handed out: after a server
            # restart or a failover every idle one is dead, and each would otherwise fail the
            # statement that drew it.
            check=ConnectionPool.check_connection,
            open=False,
            name="flynn",
            timeout=timeout_seconds,
            reconnect_timeout=_RECONNECT_SECONDS,
        )
        try:
            pool.open(wait=True, timeout=timeout_seconds)
        except PoolTimeout:
            pool.close()
            raise StorageUnusable(f"cannot open database {shown}: no connection") from None
        database = cls(pool, shown, passwords)
        try:
            database._migrate()
        except BaseException:
            database.close()
            raise
        return database

    @property
    def shown_url(self) -> str:
        """The URL without its password."""
        return self._shown

    @property
    def version(self) -> int:
        """The newest migration recorded in ``flynn_migrations``."""
        row = self.fetchone("SELECT coalesce(max(version), 0) AS version FROM flynn_migrations")
        assert row is not None
        return int(row["version"])

    @property
    def is_down(self) -> bool:
        """Whether the server was found down and has not answered since (statements fail at
        once meanwhile)."""
        return self._down is not None

    @property
    def in_transaction(self) -> bool:
        """Whether the calling thread is inside ``transaction``."""
        return self._held is not None

    @property
    def _held(self) -> Connection | None:
        held: Connection | None = getattr(self._local, "held", None)
        return held

    def execute(self, sql: str, params: Params = ()) -> int:
        """Runs one statement; returns the number of rows it changed."""
        with self._errors("database statement failed"), self._connection() as connection:
            return connection.execute(sql, params or None).rowcount

    def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """Runs one statement for each of ``rows`` (pipelined: one round trip, not one per
        row); returns the number of rows changed."""
        with (
            self._errors("database statement failed"),
            self._connection() as connection,
            connection.cursor() as cursor,
        ):
            cursor.executemany(sql, rows)
            return cursor.rowcount

    def copy_in(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        """Runs ``COPY ... FROM STDIN`` (``sql``) with ``rows``: the quickest way to load many
        rows, and no ``ON CONFLICT``, so for rows that cannot be there yet (within a
        ``transaction`` that just made what they point at)."""
        with (
            self._errors("database copy failed"),
            self._connection() as connection,
            connection.cursor() as cursor,
            cursor.copy(sql) as copy,
        ):
            for row in rows:
                copy.write_row(row)

    def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of ``sql`` (which may be ``INSERT ... RETURNING``), or ``None``."""
        with self._errors("database query failed"), self._connection() as connection:
            return connection.execute(sql, params or None).fetchone()

    def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        with self._errors("database query failed"), self._connection() as connection:
            return connection.execute(sql, params or None).fetchall()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Runs the block as one transaction on one connection: everything lands, or nothing
        does. Nested uses are savepoints: an exception rolls back only the inner block if it is
        caught inside the outer one. Any exception, including cancellation, rolls back and
        propagates; a failed commit raises ``StoreError``."""
        if self._held is not None:
            with self._errors("transaction failed"), self._held.transaction():
                yield
            return
        with self._errors("transaction failed"), self._pooled() as connection:
            self._local.held = connection
            try:
                with connection.transaction():
                    yield
            finally:
                self._local.held = None

    def verify(self) -> None:
        """Checks, once at start, that the database takes a write (``probe_write``, with the
        pool's timeout). Raises ``StorageUnusable`` naming the problem, ``StoreError`` when the
        probed row stayed locked."""
        self.probe_write()

    def probe_write(self, *, busy_timeout_ms: int | None = None) -> None:
        """Commits a transaction that rewrites the newest ``flynn_migrations`` row with its own
        values: a server that is down or unreachable, read-only (a standby, or
        ``default_transaction_read_only``) or out of disk shows here rather than in a person's
        turn. Changes nothing a reader could see.

        ``busy_timeout_ms`` bounds the wait for a connection and for the row's lock (default:
        the pool's timeout, and no lock timeout). Raises ``StorageUnusable`` (its message without
        the password) when the write fails, ``StoreError`` when the row stayed locked or this
        database is inside a transaction."""
        if self._held is not None:
            raise StoreError("cannot probe the database inside a transaction")
        timeout = self._pool.timeout if busy_timeout_ms is None else busy_timeout_ms / 1000
        shown = self._shown
        try:
            with self._pooled(timeout) as connection, connection.transaction():
                if busy_timeout_ms is not None:
                    connection.execute(f"SET LOCAL lock_timeout = {busy_timeout_ms:d}")
                connection.execute(_PROBE)
        except PoolTimeout:
            raise StorageUnusable(f"database {shown} cannot be reached: no connection") from None
        except _Unreachable as exc:
            raise StorageUnusable(f"database {shown} cannot be reached: {exc}") from None
        except (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled) as exc:
            raise StoreError(f"database {shown} is busy: {self._struck(exc)}") from exc
        except psycopg.errors.ReadOnlySqlTransaction as exc:
            raise StorageUnusable(f"database {shown} is read-only: {self._struck(exc)}") from None
        except psycopg.OperationalError as exc:
            raise StorageUnusable(
                f"database {shown} cannot be reached: {self._struck(exc)}"
            ) from None
        except psycopg.Error as exc:
            raise StorageUnusable(
                f"database {shown} cannot be written: {self._struck(exc)}"
            ) from None

    async def connect_async(self) -> AsyncConnection:
        """An asynchronous connection of its own, outside the pool, set up as the pool's are:
        for what holds one for long (``LISTEN``, a lock held across a turn). The caller closes
        it. Raises ``StoreError`` (without the password)."""
        pool = self._pool
        conninfo = pool.conninfo if isinstance(pool.conninfo, str) else pool.conninfo()
        try:
            connection = await psycopg.AsyncConnection.connect(
                conninfo, connect_timeout=max(1, round(pool.timeout)), **_settings()
            )
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect ({self._shown}): {self._struck(exc)}") from None
        try:
            await connection.execute("SET TIME ZONE 'UTC'")
        except BaseException as exc:
            # Cancelled or failed here, it is nobody's: closed, not left to the collector.
            await connection.close()
            if isinstance(exc, psycopg.Error):
                raise StoreError(f"cannot connect ({self._shown}): {self._struck(exc)}") from None
            raise
        return connection

    def close(self) -> None:
        """Closes every connection; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._closing.set()
        self._pool.close()

    def __enter__(self) -> PostgresDatabase:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        if self._held is not None:
            yield self._held
            return
        with self._pooled() as connection:
            yield connection

    @contextmanager
    def _pooled(self, timeout: float | None = None) -> Iterator[Connection]:
        """A connection of the pool for the block (as ``ConnectionPool.connection``), waiting up
        to ``timeout`` (the pool's unless given) for one. Raises ``_Unreachable`` at once while the
        server is down, and after ``REACH_SECONDS`` when it is found down now; ``PoolTimeout``
        when the server answers but no connection came in time."""
        pool = self._pool
        wait = pool.timeout if timeout is None else timeout
        if (down := self._down) is not None:
            raise _Unreachable(down)
        try:
            connection = pool.getconn(timeout=min(wait, REACH_SECONDS))
        except PoolTimeout:
            why = self._why_unreachable()
            if why is not None:
                self._found_down(why)
                raise _Unreachable(why) from None
            if wait <= REACH_SECONDS:
                raise
            # It answers: the pool's connections are in use, or being made again.
            connection = pool.getconn(timeout=wait - REACH_SECONDS)
        try:
            with connection:  # as the pool's own: rolled back on an error, committed otherwise
                yield connection
        finally:
            pool.putconn(connection)

    def _found_down(self, why: str) -> None:
        """Statements fail at once from now on, until ``_watch`` reaches the server again."""
        with self._down_lock:
            if self._down is not None or self._closed:
                return
            self._down = why
        log.warning("database.down", database=self._shown, error=why)
        threading.Thread(target=self._watch, name="flynn-database-watch", daemon=True).start()

    def _watch(self) -> None:
        """Tries to connect every ``RECHECK_SECONDS`` until the server answers (or the database
        is closed); then replaces the pool's dead connections before statements run again, so
        none of them draws one."""
        while not self._closing.wait(RECHECK_SECONDS):
            if self._why_unreachable() is not None:
                continue
            try:
                self._pool.check()
            except psycopg.Error:
                continue
            with self._down_lock:
                self._down = None
            log.info("database.back", database=self._shown)
            return

    def _why_unreachable(self) -> str | None:
        """Why one connection attempt of our own failed (the server down, out of reach, refusing
        the login), or None when it connected; ``_DIAGNOSIS_SECONDS`` at most."""
        pool = self._pool
        conninfo = pool.conninfo if isinstance(pool.conninfo, str) else pool.conninfo()
        try:
            # A server that drops packets adds 2 s to the failure, not another pool timeout.
            with psycopg.connect(conninfo, connect_timeout=_DIAGNOSIS_SECONDS, **_settings()):
                pass
        except psycopg.Error as exc:
            return strike(" ".join(str(exc).split()), self._passwords)
        return None

    def _struck(self, exc: psycopg.Error) -> str:
        return strike(" ".join(str(exc).split()), self._passwords)

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except _Unreachable as exc:
            raise StoreUnreachable(f"{action} ({self._shown}): cannot connect: {exc}") from None
        except PoolTimeout as exc:  # a ``psycopg.Error`` too, which says nothing of why
            raise StoreError(f"{action} ({self._shown}): {self._why_no_connection()}") from exc
        except psycopg.Error as exc:
            message = strike(str(exc).strip(), self._passwords)
            raise StoreError(f"{action} ({self._shown}): {message}") from exc

    def _why_no_connection(self) -> str:
        """Why the pool gave no connection within its timeout, the server answering (one
        attempt of our own connected, ``_pooled``): its connections are all in use, or it has
        not reconnected yet to a server that is back."""
        pool = self._pool
        # The pool's counts cannot tell the two apart: a connection it is still making (it
        # retries a lost server with a growing delay) counts as one given out.
        return (
            f"no connection within {pool.timeout:g} s: all {pool.max_size} are in use, or the "
            "pool has not reconnected yet to the server (which answers again)"
        )

    def _migrate(self) -> None:
        for version in range(1, LATEST_VERSION + 1):
            with self.transaction():
                # Several workers may start at once: one migrates, the others wait here and
                # then find the work done. The lock ends with the transaction.
                self.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                self.execute(_LEDGER)
                current = self.version
                if current > LATEST_VERSION:
                    raise StoreError(
                        f"database {self._shown} has schema version {current}, but this flynn "
                        f"only knows versions up to {LATEST_VERSION}; upgrade flynn"
                    )
                if current >= version:
                    continue
                self.created = self.created or version == 1
                with self._errors(f"migration {version} failed"):
                    assert self._held is not None
                    # No parameters: psycopg sends the script as one simple query.
                    self._held.execute(MIGRATIONS[version - 1].encode())
                self.execute("INSERT INTO flynn_migrations (version) VALUES (%s)", (version,))


def _settings() -> dict[str, Any]:
    """Each connection's: autocommit (``transaction`` opens one), rows as dicts."""
    return {"autocommit": True, "row_factory": dict_row}


def _configure(connection: Connection) -> None:
    # Times come back in UTC whatever the server's or the role's zone.
    connection.execute("SET TIME ZONE 'UTC'")
