"""The PostgreSQL connection on a real server: migrations recorded and applied once, a newer
schema refused, transactions that land whole or not at all, driver errors mapped, and a
server restarted or out of reach (through a relay the test cuts): clear errors without the
password, and the pool back once the server is."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
import traceback
from urllib.parse import urlsplit

import psycopg
import pytest

from flynn.errors import StorageUnusable, StoreError
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.migrations import LATEST_VERSION


def test_open_migrates_once_and_records_each_version(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url) as db:
        assert db.version == LATEST_VERSION
        recorded = [row["version"] for row in db.fetchall("SELECT version FROM flynn_migrations")]
        assert recorded == list(range(1, LATEST_VERSION + 1))
        db.execute("INSERT INTO documents VALUES ('kept', 'x', now(), NULL)")
    # Opening again applies nothing and keeps what is there.
    with PostgresDatabase.open(postgres_url) as db:
        assert db.fetchall("SELECT version FROM flynn_migrations") == [
            {"version": version} for version in range(1, LATEST_VERSION + 1)
        ]
        assert db.fetchone("SELECT namespace FROM documents") == {"namespace": "kept"}


def test_workers_starting_together_migrate_once(postgres_url: str) -> None:
    opened: list[PostgresDatabase] = []
    failures: list[BaseException] = []

    def start() -> None:
        try:
            opened.append(PostgresDatabase.open(postgres_url))
        except BaseException as exc:
            failures.append(exc)

    workers = [threading.Thread(target=start) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    try:
        assert failures == []
        assert len(opened) == 3
        count = opened[0].fetchone("SELECT count(*) AS n FROM flynn_migrations")
        assert count == {"n": LATEST_VERSION}
    finally:
        for db in opened:
            db.close()


def test_a_schema_newer_than_this_code_is_refused(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url) as db:
        db.execute("INSERT INTO flynn_migrations (version) VALUES (%s)", (LATEST_VERSION + 1,))
    with pytest.raises(StoreError, match=f"up to {LATEST_VERSION}; upgrade flynn"):
        PostgresDatabase.open(postgres_url)


def test_a_transaction_lands_whole_or_not_at_all(postgres_url: str) -> None:
    insert = "INSERT INTO documents VALUES (%s, 'x', now(), NULL)"
    with PostgresDatabase.open(postgres_url) as db:
        with pytest.raises(RuntimeError), db.transaction():
            db.execute(insert, ("a",))
            assert db.in_transaction
            raise RuntimeError("half way")
        assert not db.in_transaction
        assert db.fetchall("SELECT namespace FROM documents") == []

        with db.transaction():
            db.execute(insert, ("outer",))
            # A nested block is a savepoint: caught inside, only its own rows go.
            with pytest.raises(StoreError), db.transaction():
                db.execute(insert, ("inner",))
                db.execute(insert, ("outer",))  # a duplicate key
        rows = db.fetchall("SELECT namespace FROM documents ORDER BY namespace")
        assert rows == [{"namespace": "outer"}]


def test_another_connection_sees_nothing_before_the_commit(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url) as db, psycopg.connect(postgres_url) as other:
        other.autocommit = True
        with db.transaction():
            db.execute("INSERT INTO documents VALUES ('n', 'x', now(), NULL)")
            assert other.execute("SELECT count(*) FROM documents").fetchone() == (0,)
        assert other.execute("SELECT count(*) FROM documents").fetchone() == (1,)


def test_driver_errors_become_store_errors(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url) as db:
        with pytest.raises(StoreError, match=r"statement failed.*no_such_table") as raised:
            db.execute("DELETE FROM no_such_table")
        assert isinstance(raised.value.__cause__, psycopg.Error)
        # The connection is usable afterwards.
        assert db.fetchone("SELECT 1 AS one") == {"one": 1}


def _drop_connections(url: str) -> int:
    """Ends every other session of the database, as a server restart or a failover does."""
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND datname = current_database()"
        ).fetchone()
        assert row is not None
        return int(row[0])


def test_connections_the_server_dropped_are_replaced_before_use(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url, max_connections=2) as db:
        assert _drop_connections(postgres_url) >= 1
        # No statement pays for the restart: each finds a live connection.
        assert db.fetchone("SELECT 1 AS one") == {"one": 1}
        _drop_connections(postgres_url)
        with db.transaction():
            db.execute("INSERT INTO documents VALUES ('after', 'x', now(), NULL)")
        assert db.fetchone("SELECT namespace FROM documents") == {"namespace": "after"}


class Outage:
    """A TCP relay to the server on 127.0.0.1: ``cut()`` drops its connections and refuses new
    ones (the server down, or out of reach), ``restore()`` listens on the same port again."""

    def __init__(self, url: str) -> None:
        self._target = urlsplit(url).port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = url.replace(f":{self._target}/", f":{self.port}/", 1)
        self._sockets: list[socket.socket] = []
        self._serve()

    def cut(self) -> None:
        self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        self._listener.close()
        for each in self._sockets:
            _end(each)
            each.close()
        self._sockets.clear()

    def restore(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._serve()

    def _serve(self) -> None:
        threading.Thread(target=self._accept, args=(self._listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self._target))
            self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=_relay, args=(source, sink), daemon=True).start()


def _relay(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    _end(sink)


def _end(each: socket.socket) -> None:
    with contextlib.suppress(OSError):
        each.shutdown(socket.SHUT_RDWR)


def test_a_server_out_of_reach_is_a_clear_error_without_the_password(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    outage = Outage(postgres_url)
    password = urlsplit(postgres_url).password
    assert password
    with PostgresDatabase.open(outage.url, max_connections=2, timeout_seconds=1) as db:
        assert db.fetchone("SELECT 1 AS one") == {"one": 1}
        outage.cut()
        assert not db.is_down
        with pytest.raises(StoreError, match=r"cannot connect.*Connection refused") as raised:
            db.fetchone("SELECT 1 AS one")
        # Found down: every statement fails at once now, none waits for the pool.
        assert db.is_down
        with pytest.raises(StoreError, match="cannot connect"), db.transaction():
            db.execute("SELECT 1")
        with pytest.raises(StorageUnusable, match=r"cannot be reached: .*Connection refused"):
            db.probe_write(busy_timeout_ms=50)
        shown = "".join(traceback.format_exception(raised.value))
        assert "***" in shown and password not in shown
        assert all(password not in record.getMessage() for record in caplog.records)
        outage.restore()
        assert _answers_again(db)
        assert not db.is_down


def _answers_again(db: PostgresDatabase, attempts: int = 30) -> bool:
    """Whether a statement works again within ``attempts`` tries a second apart: the database
    finds the server back within ``RECHECK_SECONDS`` (statements fail at once until then)."""
    for _ in range(attempts):
        try:
            return db.fetchone("SELECT 1 AS one") == {"one": 1}
        except StoreError as exc:
            assert "cannot connect" in str(exc) or "not reconnected yet" in str(exc)
        time.sleep(1)
    return False


def test_a_transaction_belongs_to_the_thread_that_opened_it(postgres_url: str) -> None:
    # A recall thread reading while the loop's transaction is open gets a connection of its
    # own: it neither sees the uncommitted row nor runs its statement inside that transaction.
    seen: list[object] = []
    with PostgresDatabase.open(postgres_url) as db:
        with db.transaction():
            db.execute("INSERT INTO documents VALUES ('uncommitted', 'x', now(), NULL)")
            reader = threading.Thread(
                target=lambda: seen.append(
                    (db.in_transaction, db.fetchone("SELECT count(*) AS n FROM documents"))
                )
            )
            reader.start()
            reader.join()
            assert db.in_transaction
        assert seen == [(False, {"n": 0})]
