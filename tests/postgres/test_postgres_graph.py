"""The knowledge graph on PostgreSQL where it differs from SQLite: two workers (two
``PostgresDatabase`` pools) naming the same entity and relation at once make one of each."""

from __future__ import annotations

from datetime import UTC, datetime

from together import at_once

from flynn.postgres.database import PostgresDatabase
from flynn.postgres.graph import PostgresGraph

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)
NS = "user/graph"


def test_two_workers_naming_one_entity_at_once_make_one(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url) as one, PostgresDatabase.open(postgres_url) as two:
        first, second = PostgresGraph(one), PostgresGraph(two)
        at_once(
            lambda: first.upsert_entity(NS, "Maya", "person", confidence=0.6, now=T0),
            lambda: second.upsert_entity(NS, "maya", "thing", confidence=0.9, now=T0),
        )
        maya = first.find(NS, "MAYA")
        assert maya is not None
        assert (maya.name, maya.type, maya.mentions, maya.confidence) == ("Maya", "person", 2, 0.9)
        acme = second.upsert_entity(NS, "Acme", "org", confidence=0.5, now=T0)
        at_once(
            lambda: first.relate(NS, maya.id, acme.id, "works_at", confidence=0.4, now=T0),
            lambda: second.relate(NS, maya.id, acme.id, "Works at", confidence=0.8, now=T0),
        )
        (relation,) = second.relations_of(acme.id, limit=5)
        assert (relation.type, relation.confidence) == ("works_at", 0.8)
