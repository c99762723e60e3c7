"""Telegram webhook updates claimed once, on SQLite and PostgreSQL: across two stores on one
database (two workers), a claim in hand makes the other ``busy``, a done one is ``done`` for ever,
a released one can be claimed again, and a claim past its lease (its worker died) is taken over."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flynn.memory.database import Database
from flynn.memory.telegram_updates import SqliteTelegramUpdates, SqlTelegramUpdates
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.telegram_updates import PostgresTelegramUpdates
from flynn.schedule.migrations import SCHEMA

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
BOT = 4242
LEASE = timedelta(minutes=5)


Workers = tuple[SqlTelegramUpdates, SqlTelegramUpdates]


@pytest.fixture(params=["sqlite", "postgresql"])
def workers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Workers]:
    """Two workers' stores on one database, each with a connection of its own."""
    if request.param == "sqlite":
        path = tmp_path / "flynn.db"
        with Database.open(path, SCHEMA) as one, Database.open(path, SCHEMA) as two:
            yield SqliteTelegramUpdates(one, lease=LEASE), SqliteTelegramUpdates(two, lease=LEASE)
        return
    url: str = request.getfixturevalue("postgres_url")
    with PostgresDatabase.open(url) as one, PostgresDatabase.open(url) as two:
        yield PostgresTelegramUpdates(one, lease=LEASE), PostgresTelegramUpdates(two, lease=LEASE)


def test_an_update_is_claimed_once_and_done_for_every_worker(
    workers: Workers,
) -> None:
    first, second = workers
    assert first.claim(BOT, 7, now=NOW) == "claimed"
    assert second.claim(BOT, 7, now=NOW) == "busy"
    assert first.claim(BOT, 7, now=NOW) == "busy"  # Telegram's retry, on the same worker
    first.done(BOT, 7)
    assert second.claim(BOT, 7, now=NOW + LEASE * 10) == "done"
    # Ids are per bot: another bot's update 7 is another update.
    assert second.claim(BOT + 1, 7, now=NOW) == "claimed"


def test_a_released_update_is_claimed_again(
    workers: Workers,
) -> None:
    first, second = workers
    assert first.claim(BOT, 8, now=NOW) == "claimed"
    first.release(BOT, 8)
    assert second.claim(BOT, 8, now=NOW) == "claimed"
    second.done(BOT, 8)
    second.release(BOT, 8)  # a done update is never released
    assert first.claim(BOT, 8, now=NOW) == "done"


def test_a_claim_past_its_lease_is_taken_over(
    workers: Workers,
) -> None:
    first, second = workers
    assert first.claim(BOT, 9, now=NOW) == "claimed"
    assert second.claim(BOT, 9, now=NOW + LEASE - timedelta(seconds=1)) == "busy"
    assert second.claim(BOT, 9, now=NOW + LEASE + timedelta(seconds=1)) == "claimed"
    assert first.claim(BOT, 9, now=NOW + LEASE + timedelta(seconds=2)) == "busy"


def test_prune_forgets_old_updates_only(
    workers: Workers,
) -> None:
    first, _ = workers
    first.claim(BOT, 1, now=NOW - timedelta(days=3))
    first.done(BOT, 1)
    first.claim(BOT, 2, now=NOW)
    first.done(BOT, 2)
    assert first.prune(before=NOW - timedelta(days=2)) == 1
    assert first.claim(BOT, 1, now=NOW) == "claimed"
    assert first.claim(BOT, 2, now=NOW) == "done"


def test_two_workers_claiming_the_same_updates_at_once_each_get_disjoint_ones(
    postgres_url: str,
) -> None:
    """Telegram posting every update to two workers at the same moment, on PostgreSQL (the
    backend for several workers; SQLite's connections stay on their thread): each is claimed
    once."""
    ids = range(100, 160)
    start = threading.Barrier(2)

    def claim_all(store: SqlTelegramUpdates) -> list[int]:
        start.wait()
        return [i for i in ids if store.claim(BOT, i, now=NOW) == "claimed"]

    with (
        PostgresDatabase.open(postgres_url) as one,
        PostgresDatabase.open(postgres_url) as two,
        ThreadPoolExecutor(max_workers=2) as pool,
    ):
        stores = (PostgresTelegramUpdates(one), PostgresTelegramUpdates(two))
        first, second = pool.map(claim_all, stores)
    assert sorted(first + second) == list(ids)
