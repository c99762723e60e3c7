"""A vector stored by one worker for a message another worker forgets meanwhile: under READ
COMMITTED the forget could commit between the store's check (``still``) and its insert, leaving a
vector of a message that is gone and that nothing would delete. The store locks the rows it
embeds first, so a forget either comes before (no vector) or waits for it (the vector goes with
the message)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import pytest
from fakes.embedder import HashingEmbedder
from together import at_once

from flynn.errors import StoreError
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.history import PostgresHistory
from flynn.postgres.vectors import PostgresVectors

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
_ORPHANS = """
SELECT count(*) AS n FROM embeddings AS e
WHERE e.kind = 'message' AND NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.id = e.ref_id)
"""


@pytest.fixture
def workers(postgres_url: str) -> Iterator[tuple[PostgresDatabase, PostgresDatabase]]:
    with PostgresDatabase.open(postgres_url) as one, PostgresDatabase.open(postgres_url) as two:
        yield one, two


def _orphans(db: PostgresDatabase) -> int:
    row = db.fetchone(_ORPHANS)
    assert row is not None
    return int(row["n"])


def test_a_message_rewritten_after_the_check_waits_for_the_vector(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    one, two = workers
    history = PostgresHistory(one)
    said = history.append("s", "users/ana", "user", "I have a greyhound", tokens=3, now=NOW)
    vectors = PostgresVectors(one, HashingEmbedder())
    rows = vectors.pending("users/ana", after=0, limit=10)
    refused: list[StoreError] = []

    def still() -> Sequence[int]:
        kept = vectors.unchanged("users/ana", rows)
        assert kept == [0]  # checked: the message is there as it was read
        # Now the other worker redacts it. Without a lock on the row it would commit at once,
        # and the vector would say what the message no longer does; held, it cannot (told so
        # at once rather than left waiting: a lock timeout).
        try:
            with two.transaction():
                two.execute("SET LOCAL lock_timeout = '50ms'")
                two.execute("UPDATE messages SET content = '(forgotten)' WHERE id = %s", (said.id,))
        except StoreError as exc:
            refused.append(exc)
        return kept

    vectors.store("message", rows, vectors.embed([text for _, _, text in rows]), still=still)
    assert len(refused) == 1 and "lock" in str(refused[0])
    (stored,) = PostgresHistory(two).messages([said.id])
    assert stored.content == "I have a greyhound"  # as its vector says
    two.execute("DELETE FROM messages WHERE id = %s", (said.id,))  # after the store: it goes
    assert one.fetchall("SELECT ref_id FROM embeddings") == []


def test_a_message_forgotten_before_the_lock_gets_no_vector(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    """Read by ``pending``, deleted by the other worker before the store began: no check of
    the caller's (``still`` left out, as the writer of a new message does) stores it."""
    one, two = workers
    said = PostgresHistory(one).append("s", "users/ana", "user", "a lurcher", tokens=2, now=NOW)
    vectors = PostgresVectors(one, HashingEmbedder())
    rows = vectors.pending("users/ana", after=0, limit=10)
    two.execute("DELETE FROM messages WHERE id = %s", (said.id,))
    assert vectors.store("message", rows, vectors.embed(["a lurcher"])) == 0
    assert one.fetchall("SELECT ref_id FROM embeddings") == []


def test_workers_backfilling_and_forgetting_at_once_leave_no_vector_of_a_forgotten_message(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    one, two = workers
    history = PostgresHistory(one)
    ids = [
        history.append(f"s{n}", "users/ana", "user", f"dog number {n}", tokens=3, now=NOW).id
        for n in range(60)
    ]
    vectors = PostgresVectors(one, HashingEmbedder())

    def backfill() -> int:
        return sum(vectors.backfill("users/ana", batch=4))

    def forget() -> int:
        return sum(
            two.execute("DELETE FROM messages WHERE id = %s", (message_id,))
            for message_id in ids[::2]
        )

    stored, forgotten = at_once(backfill, forget)
    assert forgotten == 30 and isinstance(stored, int)
    assert _orphans(one) == 0
    kept = {int(row["ref_id"]) for row in one.fetchall("SELECT ref_id FROM embeddings")}
    assert kept <= set(ids[1::2])
