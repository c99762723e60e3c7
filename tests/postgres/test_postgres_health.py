"""PostgreSQL's health for ``/readyz`` (``StorageHealth`` over ``PostgresDatabase.probe_write``)
on a real server: writable, read-only, and gone (the worker's login refused and its connections
cut), each with a reason that never carries the password."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

from flynn.errors import StorageUnusable, StoreError
from flynn.memory.health import StorageHealth
from flynn.postgres.database import PostgresDatabase


def _clock() -> float:
    return 0.0  # one probe per StorageHealth: each test builds a new one to probe again


def test_a_writable_server_is_ready(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url) as db:
        db.verify()
        assert StorageHealth(db, clock=_clock).check().as_json() == {
            "ok": True,
            "detail": "writable",
        }


def test_a_read_only_server_is_not_ready_and_says_so(postgres_url: str) -> None:
    password = urlsplit(postgres_url).password
    assert password
    with PostgresDatabase.open(postgres_url, max_connections=1) as db:
        # The pool's one connection, as a standby's or a read-only role's would be.
        db.execute("SET default_transaction_read_only = on")
        status = StorageHealth(db, clock=_clock).check()
        assert not status.ok
        assert "is read-only" in status.detail and db.shown_url in status.detail
        assert password not in status.detail
        with pytest.raises(StorageUnusable, match="read-only"):
            db.verify()


def test_a_probe_inside_a_transaction_keeps_the_last_answer(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url) as db:
        health = StorageHealth(db, clock=_clock)
        with db.transaction(), pytest.raises(StoreError, match="inside a transaction"):
            db.probe_write()
        with db.transaction():
            assert health.check().detail == "not probed yet"


@pytest.fixture
def worker_url(postgres_url: str) -> Iterator[tuple[str, str, PostgresDatabase]]:
    """A login role of the test's own (cluster-wide, so named at random), its URL, and the
    superuser's database to cut it off with; the role is dropped afterwards."""
    role = f"worker_{secrets.token_hex(4)}"
    password = secrets.token_urlsafe(12)
    parts = urlsplit(postgres_url)
    netloc = f"{role}:{quote(password, safe='')}@{parts.hostname}:{parts.port}"
    url = urlunsplit(parts._replace(netloc=netloc))
    with PostgresDatabase.open(postgres_url) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{password}'")
        try:
            yield role, url, admin
        finally:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                (role,),
            )
            admin.execute(f"DROP ROLE {role}")


def test_a_server_that_is_gone_is_not_ready_and_says_so(
    worker_url: tuple[str, str, PostgresDatabase],
) -> None:
    role, url, admin = worker_url
    password = urlsplit(url).password
    assert password
    with PostgresDatabase.open(url, max_connections=1, timeout_seconds=2) as db:
        assert StorageHealth(db, clock=_clock).check().ok
        # The worker's connections are cut and it cannot log in again: from where it stands,
        # the server is gone.
        admin.execute(f"ALTER ROLE {role} NOLOGIN")
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
        )
        cut = StorageHealth(db, busy_timeout_ms=100, clock=_clock).check()
        gone = StorageHealth(db, busy_timeout_ms=100, clock=_clock).check()
    for status in (cut, gone):
        assert not status.ok
        assert "cannot be reached" in status.detail and role in status.detail
        assert password not in status.detail
