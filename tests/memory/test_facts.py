from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from flynn.errors import StoreError
from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)

HOSTILE = [
    '"',
    '""',
    "'",
    "AND",
    "OR OR OR",
    "NOT tea",
    "tea NOT",
    "NEAR(tea coffee, 2)",
    "value:tea",
    "field : name",
    "tea*",
    "*",
    "(tea",
    "tea)",
    "^tea",
    "{field value}: tea",
    "- tea",
    "+",
    "\\",
    "tea\x00coffee",
    "💥 ünïcödé tea",
    "a" * 5000,
]


def _fact(value: str, *, namespace: str = "user/facts", field: str | None = None) -> NewFact:
    return NewFact(namespace=namespace, kind="profile", value=value, field=field)


def _count(memory: SqliteMemory, sql: str) -> int:
    row = memory.db.fetchone(sql)
    assert row is not None
    return int(row[0])


def test_add_and_get(memory: SqliteMemory) -> None:
    fact = memory.facts.add(
        NewFact(
            namespace="user/profile",
            kind="profile",
            field="name",
            value="Ana",
            confidence=0.9,
            source="rule",
            session="telegram:1",
            channel="telegram",
        ),
        now=T0,
    )
    assert fact.id > 0
    assert (fact.namespace, fact.kind, fact.field, fact.value) == (
        "user/profile",
        "profile",
        "name",
        "Ana",
    )
    assert (fact.confidence, fact.source, fact.status, fact.supersedes) == (
        0.9,
        "rule",
        "active",
        None,
    )
    assert (fact.session, fact.channel, fact.created_at, fact.updated_at) == (
        "telegram:1",
        "telegram",
        T0,
        T0,
    )
    assert memory.facts.get(fact.id) == fact
    assert memory.facts.get(fact.id + 100) is None


def test_supersede_builds_a_chain(memory: SqliteMemory) -> None:
    first = memory.facts.add(_fact("Lisbon", field="city"), now=T0)
    second = memory.facts.supersede(first.id, _fact("Porto", field="city"), now=T0 + timedelta(1))
    third = memory.facts.supersede(second.id, _fact("Faro", field="city"), now=T0 + timedelta(2))
    assert third.supersedes == second.id and second.supersedes == first.id
    history = memory.facts.history("user/facts", "city")
    assert [(f.value, f.status) for f in history] == [
        ("Lisbon", "superseded"),
        ("Porto", "superseded"),
        ("Faro", "active"),
    ]
    assert history[0].updated_at == T0 + timedelta(1)
    assert [f.value for f in memory.facts.active("user/facts", field="city")] == ["Faro"]


def test_superseding_a_non_active_or_missing_fact_fails_whole(memory: SqliteMemory) -> None:
    first = memory.facts.add(_fact("Lisbon", field="city"), now=T0)
    memory.facts.supersede(first.id, _fact("Porto", field="city"), now=T0)
    with pytest.raises(StoreError, match="not active"):
        memory.facts.supersede(first.id, _fact("Faro", field="city"), now=T0)
    with pytest.raises(StoreError, match="not active"):
        memory.facts.supersede(9999, _fact("Faro", field="city"), now=T0)
    assert [f.value for f in memory.facts.history("user/facts", "city")] == ["Lisbon", "Porto"]


def test_retire_keeps_the_row_but_hides_it(memory: SqliteMemory) -> None:
    fact = memory.facts.add(_fact("likes jazz"), now=T0)
    memory.facts.retire(fact.id, now=T0 + timedelta(1))
    retired = memory.facts.get(fact.id)
    assert retired is not None and retired.status == "deleted"
    assert memory.facts.active("user/facts") == []
    assert memory.facts.search("user", "jazz", limit=5) == []
    with pytest.raises(StoreError):
        memory.facts.retire(fact.id, now=T0)


def test_active_filters_and_orders_newest_first(memory: SqliteMemory) -> None:
    memory.facts.add(_fact("old", field="a"), now=T0)
    memory.facts.add(_fact("new", field="b"), now=T0 + timedelta(1))
    memory.facts.add(
        NewFact(namespace="user/facts", kind="pattern", value="runs daily"), now=T0 + timedelta(2)
    )
    memory.facts.add(_fact("child namespace", namespace="user/facts/x"), now=T0)
    assert [f.value for f in memory.facts.active("user/facts")] == ["runs daily", "new", "old"]
    assert [f.value for f in memory.facts.active("user/facts", kind="profile")] == ["new", "old"]
    assert [f.value for f in memory.facts.active("user/facts", kind="profile", field="a")] == [
        "old"
    ]


def test_search_matches_words_of_value_and_field_best_first(memory: SqliteMemory) -> None:
    memory.facts.add(_fact("drinks green tea every morning", field="habit"), now=T0)
    memory.facts.add(_fact("tea", field="favorite_drink"), now=T0)
    memory.facts.add(_fact("walks the dog"), now=T0)
    found = memory.facts.search("user", "What tea do I like?", limit=5)
    assert [f.value for f in found] == ["tea", "drinks green tea every morning"]
    assert [f.field for f in memory.facts.search("user", "favorite", limit=5)] == ["favorite_drink"]
    # Porter stemming: "walking" finds "walks".
    assert [f.value for f in memory.facts.search("user", "walking", limit=5)] == ["walks the dog"]
    assert len(memory.facts.search("user", "tea", limit=1)) == 1


def test_search_skips_superseded_facts(memory: SqliteMemory) -> None:
    old = memory.facts.add(_fact("lives in Lisbon", field="city"), now=T0)
    memory.facts.supersede(old.id, _fact("lives in Porto", field="city"), now=T0)
    assert [f.value for f in memory.facts.search("user", "lives", limit=5)] == ["lives in Porto"]


@pytest.mark.parametrize("query", HOSTILE)
def test_search_never_raises_on_hostile_text(memory: SqliteMemory, query: str) -> None:
    memory.facts.add(_fact("drinks tea and coffee"), now=T0)
    found = memory.facts.search("user", query, limit=5)
    assert all(f.value == "drinks tea and coffee" for f in found)


def test_search_of_only_stopwords_is_empty(memory: SqliteMemory) -> None:
    memory.facts.add(_fact("the and of"), now=T0)
    assert memory.facts.search("user", "the and of", limit=5) == []
    assert memory.facts.search("user", "tea", limit=0) == []


def test_search_never_crosses_users(memory: SqliteMemory) -> None:
    memory.facts.add(_fact("alice likes tea", namespace="users/alice/facts"), now=T0)
    memory.facts.add(_fact("alice profile tea", namespace="users/alice"), now=T0)
    memory.facts.add(_fact("bob likes tea", namespace="users/bob/facts"), now=T0)
    memory.facts.add(_fact("alice2 likes tea", namespace="users/alice2/facts"), now=T0)
    memory.facts.add(_fact("Alice likes tea", namespace="users/Alice/facts"), now=T0)
    found = memory.facts.search("users/alice", "tea alice bob", limit=50)
    assert sorted(f.namespace for f in found) == ["users/alice", "users/alice/facts"]


def test_forget_deletes_rows_and_index_rows(memory: SqliteMemory) -> None:
    memory.facts.add(_fact("zebra stripes", field="animal"), now=T0)
    memory.facts.add(_fact("zebra crossing", field="road"), now=T0)
    memory.facts.add(_fact("zebra in the zoo", namespace="username/facts"), now=T0)
    assert memory.facts.forget("user", field="road") == 1
    assert [f.field for f in memory.facts.search("user", "zebra", limit=5)] == ["animal"]
    assert memory.facts.forget("user") == 1
    assert memory.facts.search("user", "zebra", limit=5) == []
    assert len(memory.facts.search("username", "zebra", limit=5)) == 1
    index_hits = _count(memory, "SELECT count(*) FROM facts_fts WHERE facts_fts MATCH 'zebra'")
    assert index_hits == 1
    assert memory.db.integrity_check() == []


def test_search_sees_every_change_to_the_facts_it_keeps(memory: SqliteMemory) -> None:
    first = memory.facts.add(_fact("kayak on the river", field="hobby"), now=T0)
    assert [f.value for f in memory.facts.search("user", "kayak", limit=5)] == [first.value]
    # Counts, lists and rows are kept between searches; each change below must show at once.
    assert memory.facts.search("user", "canoe", limit=5) == []
    canoe = memory.facts.add(_fact("canoe trip in May"), now=T0)
    assert [f.id for f in memory.facts.search("user", "canoe", limit=5)] == [canoe.id]

    newer = memory.facts.supersede(first.id, _fact("kayak at sea", field="hobby"), now=T0)
    assert [f.id for f in memory.facts.search("user", "kayak", limit=5)] == [newer.id]

    # Other SQL on this connection: a redaction, and a foreign key letting go of a message.
    message = memory.history.append("s:1", "user", "user", "kayak", tokens=1, now=T0)
    memory.db.execute(
        "UPDATE facts SET message_id = ?, value = 'REDACTED' WHERE id = ?", (message.id, canoe.id)
    )
    (redacted,) = memory.facts.search("user", "redacted", limit=5)
    assert redacted.message_id == message.id
    memory.history.forget_session("s:1")
    assert memory.facts.search("user", "redacted", limit=5)[0].message_id is None

    memory.facts.forget("user")
    assert memory.facts.search("user", "kayak", limit=5) == []


def test_fact_search_in_a_small_namespace_beside_a_crowded_one(memory: SqliteMemory) -> None:
    mine = memory.facts.add(
        NewFact(namespace="users/alice", kind="pattern", value="swims in the lake"), now=T0
    )
    for n in range(1000):
        memory.facts.add(
            NewFact(namespace="users/bob", kind="pattern", value=f"swims laps {n}"), now=T0
        )
    assert [fact.id for fact in memory.facts.search("users/alice", "swims", limit=3)] == [mine.id]
