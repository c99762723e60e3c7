from __future__ import annotations

from collections.abc import Hashable
from datetime import UTC, datetime, timedelta

import pytest

from flynn.errors import StoreError
from flynn.memory.database import Database
from flynn.memory.facts import SQLITE_FACTS, FtsFactIndex, RewrittenFacts, SqlFacts
from flynn.memory.store import NewFact, Postings
from flynn.memory.stores import SqliteMemory
from flynn.schedule.migrations import SCHEMA

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


def test_add_and_get(facts: SqlFacts) -> None:
    fact = facts.add(
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
    assert facts.get(fact.id) == fact
    assert facts.get(fact.id + 100) is None


def test_supersede_builds_a_chain(facts: SqlFacts) -> None:
    first = facts.add(_fact("Lisbon", field="city"), now=T0)
    second = facts.supersede(first.id, _fact("Porto", field="city"), now=T0 + timedelta(1))
    third = facts.supersede(second.id, _fact("Faro", field="city"), now=T0 + timedelta(2))
    assert third.supersedes == second.id and second.supersedes == first.id
    history = facts.history("user/facts", "city")
    assert [(f.value, f.status) for f in history] == [
        ("Lisbon", "superseded"),
        ("Porto", "superseded"),
        ("Faro", "active"),
    ]
    assert history[0].updated_at == T0 + timedelta(1)
    assert [f.value for f in facts.active("user/facts", field="city")] == ["Faro"]


def test_superseding_a_non_active_or_missing_fact_fails_whole(facts: SqlFacts) -> None:
    first = facts.add(_fact("Lisbon", field="city"), now=T0)
    facts.supersede(first.id, _fact("Porto", field="city"), now=T0)
    with pytest.raises(StoreError, match="not active"):
        facts.supersede(first.id, _fact("Faro", field="city"), now=T0)
    with pytest.raises(StoreError, match="not active"):
        facts.supersede(9999, _fact("Faro", field="city"), now=T0)
    assert [f.value for f in facts.history("user/facts", "city")] == ["Lisbon", "Porto"]


def test_retire_keeps_the_row_but_hides_it(facts: SqlFacts) -> None:
    fact = facts.add(_fact("likes jazz"), now=T0)
    facts.retire(fact.id, now=T0 + timedelta(1))
    retired = facts.get(fact.id)
    assert retired is not None and retired.status == "deleted"
    assert facts.active("user/facts") == []
    assert facts.search("user", "jazz", limit=5) == []
    with pytest.raises(StoreError):
        facts.retire(fact.id, now=T0)


def test_active_filters_and_orders_newest_first(facts: SqlFacts) -> None:
    facts.add(_fact("old", field="a"), now=T0)
    facts.add(_fact("new", field="b"), now=T0 + timedelta(1))
    facts.add(
        NewFact(namespace="user/facts", kind="pattern", value="runs daily"), now=T0 + timedelta(2)
    )
    facts.add(_fact("child namespace", namespace="user/facts/x"), now=T0)
    assert [f.value for f in facts.active("user/facts")] == ["runs daily", "new", "old"]
    assert [f.value for f in facts.active("user/facts", kind="profile")] == ["new", "old"]
    assert [f.value for f in facts.active("user/facts", kind="profile", field="a")] == ["old"]


def test_search_matches_words_of_value_and_field_best_first(facts: SqlFacts) -> None:
    facts.add(_fact("drinks green tea every morning", field="habit"), now=T0)
    facts.add(_fact("tea", field="favorite_drink"), now=T0)
    facts.add(_fact("walks the dog"), now=T0)
    found = facts.search("user", "What tea do I like?", limit=5)
    assert [f.value for f in found] == ["tea", "drinks green tea every morning"]
    assert [f.field for f in facts.search("user", "favorite", limit=5)] == ["favorite_drink"]
    # Porter stemming: "walking" finds "walks".
    assert [f.value for f in facts.search("user", "walking", limit=5)] == ["walks the dog"]
    assert len(facts.search("user", "tea", limit=1)) == 1


def test_search_skips_superseded_facts(facts: SqlFacts) -> None:
    old = facts.add(_fact("lives in Lisbon", field="city"), now=T0)
    facts.supersede(old.id, _fact("lives in Porto", field="city"), now=T0)
    assert [f.value for f in facts.search("user", "lives", limit=5)] == ["lives in Porto"]


def test_search_never_raises_on_hostile_text(facts: SqlFacts) -> None:
    # One store for every query: on PostgreSQL a schema each would cost more than the searches.
    facts.add(_fact("drinks tea and coffee"), now=T0)
    for query in HOSTILE:
        found = facts.search("user", query, limit=5)
        assert all(f.value == "drinks tea and coffee" for f in found), query


def test_search_of_only_stopwords_is_empty(facts: SqlFacts) -> None:
    facts.add(_fact("the and of"), now=T0)
    assert facts.search("user", "the and of", limit=5) == []
    assert facts.search("user", "tea", limit=0) == []


def test_search_never_crosses_users(facts: SqlFacts) -> None:
    facts.add(_fact("alice likes tea", namespace="users/alice/facts"), now=T0)
    facts.add(_fact("alice profile tea", namespace="users/alice"), now=T0)
    facts.add(_fact("bob likes tea", namespace="users/bob/facts"), now=T0)
    facts.add(_fact("alice2 likes tea", namespace="users/alice2/facts"), now=T0)
    facts.add(_fact("Alice likes tea", namespace="users/Alice/facts"), now=T0)
    found = facts.search("users/alice", "tea alice bob", limit=50)
    assert sorted(f.namespace for f in found) == ["users/alice", "users/alice/facts"]


def test_forget_deletes_rows(facts: SqlFacts) -> None:
    facts.add(_fact("zebra stripes", field="animal"), now=T0)
    facts.add(_fact("zebra crossing", field="road"), now=T0)
    facts.add(_fact("zebra in the zoo", namespace="username/facts"), now=T0)
    assert facts.forget("user", field="road") == 1
    assert [f.field for f in facts.search("user", "zebra", limit=5)] == ["animal"]
    assert facts.forget("user") == 1
    assert facts.search("user", "zebra", limit=5) == []
    assert len(facts.search("username", "zebra", limit=5)) == 1


def test_forget_deletes_index_rows_on_sqlite(memory: SqliteMemory) -> None:
    memory.facts.add(_fact("zebra stripes", field="animal"), now=T0)
    memory.facts.add(_fact("zebra in the zoo", namespace="username/facts"), now=T0)
    assert memory.facts.forget("user") == 1
    index_hits = _count(memory, "SELECT count(*) FROM facts_fts WHERE facts_fts MATCH 'zebra'")
    assert index_hits == 1
    assert memory.db.integrity_check() == []


def test_search_sees_every_change_to_the_facts_it_keeps(facts: SqlFacts) -> None:
    first = facts.add(_fact("kayak on the river", field="hobby"), now=T0)
    assert [f.value for f in facts.search("user", "kayak", limit=5)] == [first.value]
    # Counts, lists and rows are kept between searches; each change below must show at once.
    assert facts.search("user", "canoe", limit=5) == []
    canoe = facts.add(_fact("canoe trip in May"), now=T0)
    assert [f.id for f in facts.search("user", "canoe", limit=5)] == [canoe.id]

    newer = facts.supersede(first.id, _fact("kayak at sea", field="hobby"), now=T0)
    assert [f.id for f in facts.search("user", "kayak", limit=5)] == [newer.id]

    facts.forget("user")
    assert facts.search("user", "kayak", limit=5) == []


def test_search_sees_other_sql_on_the_connection(memory: SqliteMemory) -> None:
    canoe = memory.facts.add(_fact("canoe trip in May"), now=T0)
    assert [f.id for f in memory.facts.search("user", "canoe", limit=5)] == [canoe.id]
    # Other SQL on this connection: a redaction, and a foreign key letting go of a message.
    message = memory.history.append("s:1", "user", "user", "kayak", tokens=1, now=T0)
    memory.db.execute(
        "UPDATE facts SET message_id = ?, value = 'REDACTED' WHERE id = ?", (message.id, canoe.id)
    )
    (redacted,) = memory.facts.search("user", "redacted", limit=5)
    assert redacted.message_id == message.id
    memory.history.forget_session("s:1")
    assert memory.facts.search("user", "redacted", limit=5)[0].message_id is None


def test_fact_search_in_a_small_namespace_beside_a_crowded_one(facts: SqlFacts) -> None:
    mine = facts.add(
        NewFact(namespace="users/alice", kind="pattern", value="swims in the lake"), now=T0
    )
    for n in range(1000):
        facts.add(NewFact(namespace="users/bob", kind="pattern", value=f"swims laps {n}"), now=T0)
    assert [fact.id for fact in facts.search("users/alice", "swims", limit=3)] == [mine.id]


def _city(value: str) -> NewFact:
    return NewFact(namespace="user/profile", kind="profile", field="city", value=value)


def test_forget_chain_deletes_the_whole_chain_only(facts: SqlFacts) -> None:
    first = facts.add(_city("Lisbon"), now=T0)
    second = facts.supersede(first.id, _city("Porto"), now=T0 + timedelta(1))
    third = facts.supersede(second.id, _city("Faro"), now=T0 + timedelta(2))
    other = facts.add(_city("Braga"), now=T0)
    assert facts.forget_chain(second.id) == 3
    assert [facts.get(i) for i in (first.id, second.id, third.id)] == [None] * 3
    assert facts.get(other.id) == other
    assert facts.search("user", "Lisbon Porto Faro", limit=5) == []
    assert facts.forget_chain(12345) == 0


def test_find_ignores_ascii_case_only(facts: SqlFacts) -> None:
    tea = facts.add(_fact("Prefers Green Tea", namespace="user/profile"), now=T0)
    facts.add(_fact("Ärger", namespace="user/profile"), now=T0 + timedelta(1))
    facts.add(_fact("prefers green tea", namespace="user/profile/x"), now=T0)
    assert facts.find("user/profile", "prefers GREEN tea") == [tea]
    assert [f.value for f in facts.find("user/profile", "Ärger")] == ["Ärger"]
    assert facts.find("user/profile", "ärger") == []  # NOCASE folds ASCII letters only
    facts.retire(tea.id, now=T0)
    assert facts.find("user/profile", "prefers green tea") == []


def test_retract_ends_a_belief_with_a_deleted_record(facts: SqlFacts) -> None:
    old = facts.add(_city("Lisbon"), now=T0)
    retraction = facts.retract(old.id, _city("no longer: Lisbon"), now=T0 + timedelta(1))
    assert (retraction.status, retraction.supersedes) == ("deleted", old.id)
    assert facts.get(retraction.id) == retraction
    assert facts.active("user/profile") == []
    assert [(f.value, f.status) for f in facts.history("user/profile", "city")] == [
        ("Lisbon", "superseded"),
        ("no longer: Lisbon", "deleted"),
    ]
    with pytest.raises(StoreError, match="not active"):
        facts.retract(old.id, _city("no longer: Lisbon"), now=T0)
    assert len(facts.history("user/profile", "city")) == 2  # the failed one left nothing


def test_confirm_and_history_of_observations(facts: SqlFacts) -> None:
    seen = facts.add(_fact("likes jazz", namespace="user/profile"), now=T0)
    facts.add(_city("Lisbon"), now=T0)
    assert facts.confirm(seen.id, now=T0 + timedelta(3))
    confirmed = facts.get(seen.id)
    assert confirmed is not None and confirmed.updated_at == T0 + timedelta(3)
    assert [f.value for f in facts.history("user/profile", None)] == ["likes jazz"]
    facts.retire(seen.id, now=T0)
    assert not facts.confirm(seen.id, now=T0)


def test_search_shows_a_confirmed_facts_new_time(facts: SqlFacts) -> None:
    tea = facts.add(_fact("green tea in the morning", field="drink"), now=T0)
    assert [f.updated_at for f in facts.search("user", "tea", limit=5)] == [T0]
    assert facts.confirm(tea.id, now=T0 + timedelta(2))
    assert [f.updated_at for f in facts.search("user", "tea", limit=5)] == [T0 + timedelta(2)]
    facts.retire(tea.id, now=T0)
    assert facts.search("user", "tea", limit=5) == []


class _RecordedIndex(FtsFactIndex):
    """SQLite's fact index, recording what generation each search keeps its reads under."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.kept_under: list[Hashable] = []

    def postings(
        self, query: str, *, namespace_prefix: str, generation: Hashable
    ) -> Postings | None:
        self.kept_under.append(generation)
        return super().postings(query, namespace_prefix=namespace_prefix, generation=generation)


def test_a_confirmation_keeps_what_search_read(memory: SqliteMemory) -> None:
    # A person repeats what they told before every few turns: that moves no fact's words, so
    # the counts and lists search keeps stay valid (only the confirmed fact is read again).
    index = _RecordedIndex(memory.db)
    facts = SqlFacts(memory.db, SQLITE_FACTS, index, RewrittenFacts(memory.db))
    tea = facts.add(_fact("green tea in the morning", field="drink"), now=T0)
    facts.search("user", "tea", limit=5)
    assert facts.confirm(tea.id, now=T0 + timedelta(2))
    (found,) = facts.search("user", "tea", limit=5)
    assert found.updated_at == T0 + timedelta(2)
    assert index.kept_under[1] == index.kept_under[0]
    # Any other write does move it: another fact, a confirmation on another connection.
    facts.add(_fact("tea with mint"), now=T0)
    assert len(facts.search("user", "tea", limit=5)) == 2
    assert index.kept_under[2] != index.kept_under[1]
    with SqliteMemory.open(memory.db.path, SCHEMA) as other:
        assert other.facts.confirm(tea.id, now=T0 + timedelta(3))
    found = next(f for f in facts.search("user", "tea", limit=5) if f.id == tea.id)
    assert found.updated_at == T0 + timedelta(3)
    assert index.kept_under[3] != index.kept_under[2]


def test_generation_moves_with_every_kind_of_write(facts: SqlFacts) -> None:
    seen = [facts.generation()]

    def moved() -> bool:
        seen.append(facts.generation())
        return seen[-1] != seen[-2]

    first = facts.add(_city("Lisbon"), now=T0)
    assert moved()
    assert facts.generation() == seen[-1]  # reading moves nothing
    second = facts.supersede(first.id, _city("Porto"), now=T0)
    assert moved()
    assert facts.confirm(second.id, now=T0)
    assert moved()
    facts.retire(second.id, now=T0)
    assert moved()
    third = facts.add(_city("Faro"), now=T0)
    assert moved()
    facts.forget_chain(third.id)
    assert moved()
    facts.forget("user")
    assert moved()
