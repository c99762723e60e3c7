"""The graph follows the facts: a relation learnt with a fact goes when the fact is superseded or
retracted, so recall never offers what is no longer believed."""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta

import pytest

from flynn.errors import StoreError
from flynn.identity import MemoryScope
from flynn.learning.fact_relations import FactRelation, FactRelations, fact_relation
from flynn.learning.graph_extraction import RuleGraphExtractor
from flynn.learning.graph_ingest import GraphIngestor
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.stores import SqliteMemory
from flynn.recall.recall import Recall

T0 = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")


def _say(memory: SqliteMemory, *texts: str) -> None:
    """Live turns: each message with its rule facts and its graph rows."""
    writer = MemoryWriter(
        memory.history,
        RuleExtractor(),
        RuleReconciler(memory.facts, relations=FactRelations(memory.graph)),
        graph=GraphIngestor(memory.graph, RuleGraphExtractor()),
    )
    for minute, text in enumerate(texts):
        at = T0 + timedelta(minutes=minute)
        writer.learn(ANA, writer.message(ANA, "telegram:1", "user", text, now=at), now=at)


def _user_relations(memory: SqliteMemory) -> set[tuple[str, str]]:
    user = memory.graph.find(ANA.root, "User")
    assert user is not None
    return {(r.type, r.target_name) for r in memory.graph.relations_of(user.id, limit=50)}


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("location", "Lisbon", FactRelation("lives_in", "Lisbon")),
        ("dog", "Pixel", FactRelation("dog", "Pixel")),
        ("best_friend", "Tom", FactRelation("best_friend", "Tom")),
        ("dog_name", "Rex", FactRelation("dog", "Rex")),
        (None, "working on ~/src/flynn", FactRelation("works_on", "~/src/flynn")),
        (None, "prefers sushi", None),
        ("favorite_color", "blue", None),
        ("name", "Ana", None),
    ],
)
def test_the_relation_a_fact_states(
    field: str | None, value: str, expected: FactRelation | None
) -> None:
    assert fact_relation(field, value) == expected


def test_a_superseded_place_is_no_longer_where_the_user_lives(memory: SqliteMemory) -> None:
    _say(memory, "I live in Lisbon", "I live in Porto")
    assert _user_relations(memory) == {("lives_in", "Porto")}


def test_a_retracted_place_is_no_longer_where_the_user_lives(memory: SqliteMemory) -> None:
    _say(memory, "I live in Lisbon", "I no longer live in Lisbon", "I live in Porto now")
    assert _user_relations(memory) == {("lives_in", "Porto")}
    recall = Recall(memory.facts, memory.history, threshold=0.0, graph=memory.graph)
    recalled = recall.recall(
        ANA.root, "Do I live in Lisbon?", now=T0 + timedelta(days=1), budget_tokens=1500
    )
    assert not any("User lives in Lisbon" in line for line in recalled.lines)


def _chain(memory: SqliteMemory, field: str) -> list[tuple[str, str]]:
    return [(fact.value, fact.status) for fact in memory.facts.history(ANA.profile, field)]


@pytest.mark.parametrize(
    "move",
    [
        "I moved to Berlin",
        "I've moved to Berlin",
        "we just moved to Berlin",
        "I relocated to Berlin",
        "I'm living in Berlin now",
        "I live in Berlin these days",
    ],
)
def test_a_move_supersedes_the_place_and_its_relation(memory: SqliteMemory, move: str) -> None:
    _say(memory, "I live in Lisbon", move)
    assert _chain(memory, "location") == [("Lisbon", "superseded"), ("Berlin", "active")]
    assert _user_relations(memory) == {("lives_in", "Berlin")}


@pytest.mark.parametrize(
    "text", ["should I move to Berlin?", "if I moved to Berlin", "I didn't move to Berlin"]
)
def test_a_move_not_made_changes_nothing(memory: SqliteMemory, text: str) -> None:
    _say(memory, "I live in Lisbon", text)
    assert _chain(memory, "location") == [("Lisbon", "active")]
    assert _user_relations(memory) == {("lives_in", "Lisbon")}


@pytest.mark.parametrize(
    "job",
    [
        "I now work at Globex",
        "I work at Globex",
        "I started at Globex as a tester",
        "I joined Globex as a designer",
        "I got a job at Globex",
        "I'm working at Globex now",
    ],
)
def test_a_new_job_supersedes_the_employer_and_its_relation(memory: SqliteMemory, job: str) -> None:
    _say(memory, "I work at Acme", job)
    assert _chain(memory, "employer") == [("Acme", "superseded"), ("Globex", "active")]
    assert _user_relations(memory) == {("works_at", "Globex")}


@pytest.mark.parametrize("leaving", ["I left Acme", "I quit Acme"])
def test_leaving_retracts_the_employer_and_its_relation(memory: SqliteMemory, leaving: str) -> None:
    _say(memory, "I work at Acme", "I left Initech", leaving)
    assert _chain(memory, "employer") == [("Acme", "superseded"), ("no longer: Acme", "deleted")]
    assert memory.facts.active(ANA.profile, field="employer") == []
    assert _user_relations(memory) == set()


@pytest.mark.parametrize(
    "text",
    ["I work at home", "I work at night", "I joined a gym", "I joined the choir", "I started at 9"],
)
def test_what_is_not_a_job_keeps_the_employer(memory: SqliteMemory, text: str) -> None:
    _say(memory, "I work at Acme", text)
    assert _chain(memory, "employer") == [("Acme", "active")]
    assert _user_relations(memory) == {("works_at", "Acme")}


def test_what_the_new_value_says_again_stays(memory: SqliteMemory) -> None:
    _say(memory, "I live in Lisbon", "I live in Lisbon, Portugal")
    assert ("lives_in", "Lisbon") in _user_relations(memory)


def test_a_renamed_pet_and_other_peoples_relations(memory: SqliteMemory) -> None:
    _say(memory, "my dog is called Pixel", "Maya lives in Lisbon", "my dog is called Rex")
    assert _user_relations(memory) == {("dog", "Rex")}
    maya = memory.graph.find(ANA.root, "Maya")
    assert maya is not None
    assert [r.type for r in memory.graph.relations_of(maya.id, limit=5)] == ["lives_in"]
    # Another person's move retires nothing of Ana's.
    _say(memory, "I live in Porto", "I live in Faro")
    assert [r.target_name for r in memory.graph.relations_of(maya.id, limit=5)] == ["Lisbon"]


def test_a_remark_about_a_pet_keeps_the_pet(memory: SqliteMemory) -> None:
    _say(memory, "my cat is called Luna", "my cat is sick")
    assert ("cat", "Luna") in _user_relations(memory)
    facts = memory.facts.active(ANA.profile)
    assert [(f.field, f.value) for f in facts if f.field == "cat"] == [("cat", "Luna")]
    assert "cat is sick" in [f.value for f in facts if f.field is None]


def test_without_relations_the_reconciler_leaves_the_graph_alone(memory: SqliteMemory) -> None:
    writer = MemoryWriter(
        memory.history,
        RuleExtractor(),
        RuleReconciler(memory.facts),
        graph=GraphIngestor(memory.graph, RuleGraphExtractor()),
    )
    for text in ("I live in Lisbon", "I live in Porto"):
        writer.learn(ANA, writer.message(ANA, "telegram:1", "user", text, now=T0), now=T0)
    assert _user_relations(memory) == {("lives_in", "Lisbon"), ("lives_in", "Porto")}


class _FailingRelations:
    """Retires in the graph's transaction, then fails, as a broken graph would."""

    def __init__(self, memory: SqliteMemory) -> None:
        self._memory = memory

    def transaction(self) -> AbstractContextManager[None]:
        return self._memory.graph.transaction()

    def retire(self, namespace: str, field: str | None, value: str, *, still: str = "") -> int:
        raise StoreError("the graph is broken")


def test_a_fact_and_its_relation_change_together(memory: SqliteMemory) -> None:
    rules = RuleReconciler(memory.facts, relations=_FailingRelations(memory))
    (lisbon,) = RuleExtractor().extract("I live in Lisbon")
    (porto,) = RuleExtractor().extract("I live in Porto")
    rules.apply(ANA.profile, lisbon, source="rule", now=T0)
    with pytest.raises(StoreError):
        rules.apply(ANA.profile, porto, source="rule", now=T0)
    assert [fact.value for fact in memory.facts.active(ANA.profile)] == ["Lisbon"]


def test_unrelate(memory: SqliteMemory) -> None:
    user = memory.graph.upsert_entity(ANA.root, "User", "person", confidence=0.5, now=T0)
    lisbon = memory.graph.upsert_entity(ANA.root, "Lisbon", "place", confidence=0.5, now=T0)
    memory.graph.relate(ANA.root, user.id, lisbon.id, "lives_in", confidence=0.5, now=T0)
    assert not memory.graph.unrelate("users/bob", user.id, lisbon.id, "lives_in")
    assert not memory.graph.unrelate(ANA.root, user.id, lisbon.id, "works_at")
    assert memory.graph.unrelate(ANA.root, user.id, lisbon.id, "Lives in")
    assert memory.graph.relations_of(user.id, limit=5) == []


def test_a_capitalised_description_keeps_the_name_and_its_relation(memory: SqliteMemory) -> None:
    _say(memory, "my wife is called Anna", "My wife is German.")
    assert ("wife", "Anna") in _user_relations(memory)
    facts = memory.facts.active(ANA.profile)
    assert [(f.field, f.value) for f in facts if f.field == "wife"] == [("wife", "Anna")]
