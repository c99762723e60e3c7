"""Durable intake on PostgreSQL where it differs from SQLite: several workers (``PostgresDatabase``
pools) on one database take the same message at once, as a channel's redelivery or a client's
resend landing on two workers does; exactly one of them runs its turn."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from together import at_once

from flynn.memory.inbound import Intake
from flynn.messages import InboundMessage, IntakeKey
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.inbound import PostgresInboundLog

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)
WORKERS = 3


def _message(message_id: str) -> InboundMessage:
    return InboundMessage(
        channel="telegram",
        chat_id="42",
        sender_id="7",
        text="hi",
        message_id=message_id,
        received_at=T0,
    )


@pytest.fixture
def workers(postgres_url: str) -> Iterator[list[PostgresInboundLog]]:
    opened = [PostgresDatabase.open(postgres_url) for _ in range(WORKERS)]
    try:
        yield [PostgresInboundLog(db) for db in opened]
    finally:
        for db in opened:
            db.close()


def _accept_at_once(workers: list[PostgresInboundLog], message_id: str) -> list[str]:
    taken = at_once(
        *[
            functools.partial(
                inbound.accept, _message(message_id), "telegram:42", "user", keep_text=True, now=T0
            )
            for inbound in workers
        ]
    )
    return sorted(intake.state for intake in taken if isinstance(intake, Intake))


def test_one_worker_of_several_takes_a_message_they_all_accept_at_once(
    workers: list[PostgresInboundLog],
) -> None:
    for number in range(5):
        assert _accept_at_once(workers, str(number)) == ["new", "pending", "pending"]
    assert [u.message.message_id for u in workers[0].unfinished()] == ["0", "1", "2", "3", "4"]


def test_one_worker_of_several_retries_a_failed_message_they_all_get_again(
    workers: list[PostgresInboundLog],
) -> None:
    for number in range(5):
        message_id = f"failed-{number}"
        workers[0].accept(_message(message_id), "telegram:42", "user", keep_text=True, now=T0)
        key = IntakeKey("telegram", "42", message_id)
        workers[1].answered(key, reply="model down", error_code="llm_unavailable", now=T0)
        assert _accept_at_once(workers, message_id) == ["new", "pending", "pending"]
    assert len(workers[2].unfinished()) == 5
