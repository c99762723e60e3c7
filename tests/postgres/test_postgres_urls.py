"""A database URL's password never reaches an error, a log line or a shown URL: unit cases of
``flynn.postgres.urls`` and the real failures of a real server (a wrong password, a malformed
URL, nobody listening)."""

from __future__ import annotations

import logging
import socket
import traceback

import pytest
from postgres_server import PostgresServer

from flynn.errors import StorageUnusable, StoreError
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.urls import SLASHED, UNPARSABLE, passwords_in, shown_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://ana:s3cr%40t@db:5432/flynn", "postgresql://ana:***@db:5432/flynn"),
        (
            "postgres://ana:pw@db/flynn?sslmode=require",
            "postgres://ana:***@db/flynn?sslmode=require",
        ),
        (
            "postgresql://ana@db/f?password=pw&sslmode=require",
            "postgresql://ana@db/f?password=***&sslmode=require",
        ),
        ("host=db user=ana password='p w' dbname=f", "host=db user=ana password=*** dbname=f"),
        ("postgresql://db/flynn", "postgresql://db/flynn"),
    ],
)
def test_shown_urls_carry_no_password(url: str, shown: str) -> None:
    assert shown_url(url) == shown


def test_passwords_are_found_as_written_and_decoded() -> None:
    assert passwords_in("postgresql://ana:s3cr%40t@db/f") == ("s3cr%40t", "s3cr@t")
    assert passwords_in("postgresql://ana@db/f") == ()


def _told(error: BaseException, caplog: pytest.LogCaptureFixture) -> str:
    """Everything a person or a log could see of ``error``: its message, its traceback with
    every chained cause, and what was logged meanwhile."""
    shown = "".join(traceback.format_exception(error))
    return shown + "\n".join(record.getMessage() for record in caplog.records)


def test_a_wrong_password_is_refused_without_repeating_it(
    postgres_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "Wr0ng-" + postgres_server.password[:8]
    url = postgres_server.url().replace(postgres_server.password, wrong)
    with pytest.raises(StorageUnusable, match="password authentication failed") as raised:
        PostgresDatabase.open(url, timeout_seconds=5)
    told = _told(raised.value, caplog)
    assert wrong not in told
    assert f"flynn:***@127.0.0.1:{postgres_server.port}" in str(raised.value)


def test_a_malformed_url_is_refused_without_repeating_its_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    # libpq quotes a string it cannot parse in its error, password and all.
    for url in ("postgresql//ana:Tr1cky-secret@db/flynn", "host=db password=Tr1cky-secret junk"):
        with pytest.raises(StorageUnusable) as raised:
            PostgresDatabase.open(url, timeout_seconds=1)
        assert "Tr1cky-secret" not in _told(raised.value, caplog)
        assert shown_url(url) == UNPARSABLE


def test_nobody_listening_is_told_without_the_password(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        # Bound, not listening: a connection is refused at once.
        url = f"postgresql://ana:N0body-home@127.0.0.1:{port}/flynn"
        with pytest.raises(StorageUnusable, match="cannot open database") as raised:
            PostgresDatabase.open(url, timeout_seconds=1)
    told = _told(raised.value, caplog)
    assert "N0body-home" not in told
    assert f"postgresql://ana:***@127.0.0.1:{port}/flynn" in told


def test_a_failed_statement_names_the_database_without_its_password(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url) as db:
        with pytest.raises(StoreError) as raised:
            db.execute("SELECT * FROM nothing_here")
        assert "flynn:***@" in str(raised.value)
        password = passwords_in(postgres_url)[-1]
        assert password not in "".join(traceback.format_exception(raised.value))


def test_a_password_with_a_slash_left_unencoded_is_never_shown(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A base64 password ("openssl rand -base64 18") often holds a "/". Unencoded, libpq ends
    # the host part there: it sees no password, but host "ana", port "Ab3x" and a database
    # named after the rest, and its errors may quote them.
    caplog.set_level(logging.DEBUG)
    url = "postgresql://ana:Ab3x/Qz9+Kp@127.0.0.1:1/flynn"
    assert shown_url(url) == SLASHED
    for piece in ("Ab3x/Qz9+Kp", "Ab3x", "Qz9+Kp"):
        assert piece in passwords_in(url)
    with pytest.raises(StorageUnusable) as raised:
        PostgresDatabase.open(url, timeout_seconds=1)
    told = _told(raised.value, caplog)
    assert "Ab3x" not in told and "Qz9+Kp" not in told
    assert "%2F" in str(raised.value)
    # A URL without a password, whose query holds an "@", is shown as it is.
    plain = "postgresql://db:5432/flynn?user=ana@corp"
    assert shown_url(plain) == plain and passwords_in(plain) == ()
