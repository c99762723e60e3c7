"""Several workers on one database: two ``PostgresDatabase`` objects (each its own pool, as two
processes would have) append to one session at the same moment and lose nothing, and the
statistics search ranks with stay exact; a vector one worker stores or forgets is seen by the
other's search."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fakes.embedder import HashingEmbedder
from together import together

from flynn.memory.fts_words import FtsWords
from flynn.memory.namespaces import namespace_root
from flynn.memory.store import NewMessage
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.history import PostgresHistory
from flynn.postgres.vectors import PostgresVectors

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TURNS = 40


@pytest.fixture
def workers(postgres_url: str) -> Iterator[tuple[PostgresDatabase, PostgresDatabase]]:
    with PostgresDatabase.open(postgres_url) as first, PostgresDatabase.open(postgres_url) as other:
        yield first, other


def test_two_workers_appending_to_one_session_lose_nothing(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    first, other = workers
    stored: dict[str, list[int]] = {"a": [], "b": []}

    def append(db: PostgresDatabase, name: str) -> Callable[[], None]:
        history = PostgresHistory(db)

        def work() -> None:
            for n in range(TURNS):
                namespace = "users/ana" if n % 4 else "users/ana/notes"
                text = f"worker {name} says turn {n} about the harbour ferry"
                message = history.append(
                    "telegram:1", namespace, "user", text, tokens=1, now=T0 + timedelta(seconds=n)
                )
                stored[name].append(message.id)
            batch = [NewMessage("user", f"{name} imported {n} ferry", 1, T0) for n in range(5)]
            history.append_many("import:" + name, "users/bob", batch)

        return work

    together(append(first, "a"), append(other, "b"))

    ids = stored["a"] + stored["b"]
    assert len(set(ids)) == 2 * TURNS
    history = PostgresHistory(first)
    session = history.recent("telegram:1")
    assert sorted(m.id for m in session) == sorted(ids)
    assert [m.id for m in session] == sorted(ids)  # in the order the database took them
    assert history.summary("telegram:1") is None
    rows = first.fetchall("SELECT key FROM sessions ORDER BY key")
    assert [row["key"] for row in rows] == ["import:a", "import:b", "telegram:1"]

    # The statistics are what the rows say, and each message's terms are all there.
    words = FtsWords()
    expected: dict[str, list[int]] = {}
    terms = 0
    for row in first.fetchall("SELECT namespace, content, terms FROM messages"):
        indexed = words.index([row["content"]])[0]
        assert row["terms"] == indexed.length
        counts = expected.setdefault(namespace_root(row["namespace"]), [0, 0])
        counts[0] += 1
        counts[1] += indexed.length
        terms += len(indexed.terms)
    roots = {
        row["root"]: [int(row["messages"]), int(row["terms"])]
        for row in first.fetchall("SELECT root, messages, terms FROM message_roots")
    }
    assert roots == expected
    assert {root: counts[0] for root, counts in roots.items()} == {
        "users/ana": 2 * TURNS,
        "users/bob": 10,
    }
    counted = first.fetchone("SELECT count(*) AS n FROM message_terms")
    assert counted is not None and counted["n"] == terms
    postings = history.postings("ferry", namespace_prefix="users/ana")
    assert postings is not None and len(postings.terms["ferry"]) == 2 * TURNS + 10

    # A forget on one worker leaves the other's counts exact.
    assert PostgresHistory(other).forget("users/bob") == 10
    after = first.fetchall("SELECT root, messages FROM message_roots ORDER BY root")
    assert [(row["root"], row["messages"]) for row in after] == [
        ("users/ana", 2 * TURNS),
        ("users/bob", 0),
    ]


def test_a_vector_stored_or_forgotten_by_one_worker_is_seen_by_the_other(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    first, other = workers
    mine = PostgresVectors(first, HashingEmbedder())
    theirs = PostgresVectors(other, HashingEmbedder())
    history = PostgresHistory(first)

    def add(vectors: PostgresVectors, text: str) -> int:
        message = history.append("s", "users/ana", "user", text, tokens=1, now=T0)
        vectors.add("message", [(message.id, "users/ana", text)])
        return message.id

    tea = add(mine, "green tea every morning")
    assert [ref for ref, _ in mine.nearest("users/ana", "tea", kind="message", limit=5)] == [tea]
    # Cached here now; the other worker stores a vector of its own, then this one another.
    lemon = add(theirs, "tea with lemon")
    assert lemon in {ref for ref, _ in mine.nearest("users/ana", "lemon", kind="message", limit=5)}
    honey = add(mine, "tea with honey")
    found = {ref for ref, _ in mine.nearest("users/ana", "tea", kind="message", limit=5)}
    assert found == {tea, lemon, honey}

    PostgresHistory(other).forget_session("s")
    assert mine.nearest("users/ana", "tea", kind="message", limit=5) == []
    assert mine.ids("users/ana", "message") == set()
