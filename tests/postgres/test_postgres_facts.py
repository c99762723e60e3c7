"""Facts on PostgreSQL where it differs from SQLite: two workers (two ``PostgresDatabase``
pools) on one database see each other's facts and each other's writes move their
``generation``; a fact superseded by both at once is superseded once; namespaces compare
bytewise on a server whose collation does not; a deleted fact or team chunk takes its vectors,
and a deleted message its mentions and facts' ties to it, as SQLite's triggers and keys do."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from together import at_once

from flynn.errors import StoreError
from flynn.memory.store import Fact, NewFact
from flynn.memory.team import NewChunk
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.facts import PostgresFacts
from flynn.postgres.memory import PostgresMemory

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def _fact(value: str, *, namespace: str = "user/profile", field: str | None = None) -> NewFact:
    return NewFact(namespace=namespace, kind="profile", value=value, field=field)


@pytest.fixture
def workers(postgres_url: str) -> Iterator[tuple[PostgresFacts, PostgresFacts]]:
    with PostgresDatabase.open(postgres_url) as one, PostgresDatabase.open(postgres_url) as two:
        yield PostgresFacts(one), PostgresFacts(two)


def test_a_fact_one_worker_learns_reaches_the_others_search_and_generation(
    workers: tuple[PostgresFacts, PostgresFacts],
) -> None:
    one, two = workers
    kayak = two.add(_fact("kayak on the river", field="hobby"), now=T0)
    # The second worker searched, and keeps counts, lists and rows for its generation.
    assert two.search("user", "canoe", limit=5) == []
    assert [f.id for f in two.search("user", "kayak", limit=5)] == [kayak.id]
    before = two.generation()

    canoe = one.add(_fact("canoe trip in May"), now=T0)
    assert two.generation() != before
    assert [f.id for f in two.search("user", "canoe", limit=5)] == [canoe.id]
    assert two.get(canoe.id) == canoe

    moved = two.generation()
    one.supersede(kayak.id, _fact("kayak at sea", field="hobby"), now=T0)
    assert two.generation() != moved
    assert [f.value for f in two.search("user", "kayak", limit=5)] == ["kayak at sea"]


def test_a_fact_two_workers_supersede_at_once_is_superseded_once(
    workers: tuple[PostgresFacts, PostgresFacts],
) -> None:
    one, two = workers
    old = one.add(_fact("Lisbon", field="city"), now=T0)
    outcomes = at_once(
        lambda: one.supersede(old.id, _fact("Porto", field="city"), now=T0),
        lambda: two.supersede(old.id, _fact("Faro", field="city"), now=T0),
        expected=(StoreError,),
    )
    stored = [outcome for outcome in outcomes if isinstance(outcome, Fact)]
    refused = [outcome for outcome in outcomes if isinstance(outcome, StoreError)]
    assert len(stored) == 1 and len(refused) == 1
    assert "not active" in str(refused[0])
    history = one.history("user/profile", "city")
    assert [(f.value, f.status) for f in history] == [
        ("Lisbon", "superseded"),
        (stored[0].value, "active"),
    ]


def test_namespaces_compare_bytewise_on_a_server_that_does_not(
    workers: tuple[PostgresFacts, PostgresFacts],
) -> None:
    facts, _ = workers
    # Under en-US, "User/x", "user%" and "user-x" sort among "user/..."; bytewise they do not.
    for namespace in ("user", "user/a", "user/b/c", "User/x", "user%", "user-x", "user0", "users"):
        facts.add(_fact(f"tea in {namespace}", namespace=namespace), now=T0)
    found = facts.search("user", "tea", limit=20)
    assert sorted(f.namespace for f in found) == ["user", "user/a", "user/b/c"]
    assert facts.forget("user") == 3
    left = facts.search("User", "tea", limit=20) + facts.search("user%", "tea", limit=20)
    assert sorted(f.namespace for f in left) == ["User/x", "user%"]
    assert [f.namespace for f in facts.active("users")] == ["users"]


def test_a_deleted_fact_or_chunk_takes_its_vectors_and_a_message_its_ties(
    workers: tuple[PostgresFacts, PostgresFacts], postgres_url: str
) -> None:
    facts, _ = workers
    with PostgresMemory.open(postgres_url) as memory:
        message = memory.history.append("s:1", "user", "user", "I live in Lisbon", tokens=4, now=T0)
        fact = facts.add(
            NewFact(
                namespace="user/profile",
                kind="profile",
                field="city",
                value="Lisbon",
                message_id=message.id,
            ),
            now=T0,
        )
        document, _ = memory.team.put(
            path="a.md", title="A", digest="d", chars=1, chunks=[NewChunk("", "Lisbon.")], now=T0
        )
        (chunk,) = memory.team.chunk_ids(document.id)
        lisbon = memory.graph.upsert_entity("user", "Lisbon", "place", confidence=0.5, now=T0)
        memory.graph.mention(lisbon.id, message.id)
        with pytest.raises(StoreError):
            memory.graph.mention(lisbon.id, message.id + 1000)  # no such message
        for kind, ref in (("fact", fact.id), ("chunk", chunk), ("fact", fact.id + 1000)):
            memory.db.execute(
                "INSERT INTO embeddings (kind, ref_id, namespace, model, vector) "
                "VALUES (%s, %s, 'user', 'm', '\\x00'::bytea)",
                (kind, ref),
            )
        memory.history.forget_session("s:1")
        assert memory.graph.messages_mentioning([lisbon.id], limit=5) == []
        kept = facts.get(fact.id)
        assert kept is not None and kept.message_id is None
        facts.forget("user")
        memory.team.remove(document.id)
        left = memory.db.fetchall("SELECT kind, ref_id FROM embeddings ORDER BY ref_id")
        assert [(row["kind"], row["ref_id"]) for row in left] == [("fact", fact.id + 1000)]
