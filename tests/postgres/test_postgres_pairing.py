"""Pairing on PostgreSQL where it differs from SQLite: workers (``PostgresDatabase`` pools) on one
database approving one code at once spend it once, and strangers asking on several workers at
once never make more than ``max_pending`` codes wait."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from together import at_once

from flynn.messages import ChannelAccount
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.pairing import PostgresPairing

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
WORKERS = 4


@pytest.fixture
def workers(postgres_url: str) -> Iterator[list[PostgresDatabase]]:
    opened = [PostgresDatabase.open(postgres_url) for _ in range(WORKERS)]
    try:
        yield opened
    finally:
        for db in opened:
            db.close()


def test_a_code_approved_by_several_workers_at_once_is_spent_once(
    workers: list[PostgresDatabase],
) -> None:
    pairings = [PostgresPairing(db) for db in workers]
    for number in range(3):
        account = ChannelAccount("telegram", str(number))
        offer = pairings[0].ask(account, None, now=NOW)
        assert offer is not None
        code = offer.request.code
        results = at_once(
            *[
                functools.partial(pairing.approve, code, f"person{n}", now=NOW)
                for n, pairing in enumerate(pairings)
            ]
        )
        assert sum(result is not None for result in results) == 1  # the others: None
        person = pairings[1].person_of(account)
        assert person is not None and person.startswith("person")
    assert len(pairings[2].approved()) == 3


def test_strangers_asking_on_several_workers_at_once_never_exceed_the_bound(
    workers: list[PostgresDatabase],
) -> None:
    pairings = [PostgresPairing(db, max_pending=2) for db in workers]
    offers = at_once(
        *[
            functools.partial(pairing.ask, ChannelAccount("discord", str(n)), None, now=NOW)
            for n, pairing in enumerate(pairings)
        ]
    )
    assert sum(offer is not None for offer in offers) == 2
    assert len(pairings[0].pending(now=NOW)) == 2
    # One account asking on every worker at once holds one code.
    same = at_once(
        *[
            functools.partial(pairing.ask, ChannelAccount("discord", "0"), None, now=NOW)
            for pairing in pairings
        ]
    )
    # Its code if it won a place, nothing on every worker if it did not.
    assert len({None if offer is None else offer.request.code for offer in same}) == 1
