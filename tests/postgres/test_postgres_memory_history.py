"""Forgetting a person on PostgreSQL takes their messages, sessions, terms, tool steps and
vectors with the rest, counted as SQLite counts them, in one transaction."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fakes.embedder import HashingEmbedder

from flynn.errors import StoreError
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.memory import PostgresMemory
from flynn.postgres.vectors import PostgresVectors

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _count(db: PostgresDatabase, table: str) -> int:
    row = db.fetchone(f"SELECT count(*) AS n FROM {table}")
    assert row is not None
    return int(row["n"])


def _fill(memory: PostgresMemory) -> None:
    history = memory.history
    vectors = PostgresVectors(memory.db, HashingEmbedder())
    said = history.append("s1", "users/alice", "user", "the ferry", tokens=1, now=T0)
    noted = history.append(
        "s2", "users/alice/notes", "assistant", "noted", tokens=1, now=T0, tool_steps="[]"
    )
    history.append("s3", "users/bob", "user", "the ferry too", tokens=1, now=T0)
    vectors.add("message", [(said.id, "users/alice", "the ferry")])
    # A vector whose row is not there (a store only writes those of rows it holds locked):
    # counted by the forget, as on SQLite.
    memory.db.execute(
        "INSERT INTO embeddings (kind, ref_id, namespace, model, vector) "
        "VALUES ('fact', %s, 'users/alice', %s, %s)",
        (noted.id, vectors.model, bytes(vectors.embed(["a fact's vector"])[0].astype("float16"))),
    )


def test_forgetting_a_person_takes_their_history_and_vectors(postgres_url: str) -> None:
    with PostgresMemory.open(postgres_url) as memory:
        _fill(memory)
        counts = memory.forget_namespace("users/alice")
        assert {k: counts[k] for k in ("messages", "sessions", "embeddings")} == {
            "messages": 2,
            "sessions": 2,
            "embeddings": 1,  # the fact's: the message's went with its message
        }
        for table, left in [
            ("messages", 1),
            ("sessions", 1),
            ("message_tools", 0),
            ("embeddings", 0),
            ("message_terms", 3),  # bob's "the", "ferri", "too"
        ]:
            assert _count(memory.db, table) == left, table
        postings = memory.history.postings("ferry")
        assert postings is not None and len(postings.terms["ferry"]) == 1  # bob's


def test_forgetting_that_fails_keeps_the_history(postgres_url: str) -> None:
    class Failing:
        def __init__(self, db: PostgresDatabase) -> None:
            self._db = db

        def forget_namespace(self, prefix: str) -> dict[str, int]:
            self._db.execute("DELETE FROM no_such_table")
            return {}

    with PostgresMemory.open(postgres_url, [Failing]) as memory:
        _fill(memory)
        with pytest.raises(StoreError):
            memory.forget_namespace("users/alice")
        assert _count(memory.db, "messages") == 3 and _count(memory.db, "embeddings") == 2
        roots = memory.db.fetchall("SELECT root, messages FROM message_roots ORDER BY root")
        assert [(row["root"], row["messages"]) for row in roots] == [
            ("users/alice", 2),
            ("users/bob", 1),
        ]
