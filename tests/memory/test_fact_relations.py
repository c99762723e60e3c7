"""The graph follows the facts: a relation learnt with a fact goes when the fact is superseded or
retracted, so recall never offers what is no longer believed. Where someone lives or works and who
their relatives and pets are is learnt by the extraction model (scripted here: its facts, its
reconciliation verdicts and its graph), whatever the language it was said in."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta

import pytest
from fakes.clock import FakeClock

from evals.scripted_provider import ScriptedProvider
from flynn.errors import StoreError
from flynn.identity import MemoryScope
from flynn.learning.fact_relations import FactRelation, FactRelations, fact_relation
from flynn.learning.graph_extraction import (
    GRAPH_EXTRACTION_PROMPT,
    LlmGraphExtractor,
    RuleGraphExtractor,
    parse_graph_extraction,
)
from flynn.learning.graph_ingest import GraphIngestor
from flynn.learning.llm_extraction import LlmExtractor
from flynn.learning.llm_reconcile import RECONCILE_PROMPT, LlmReconciler
from flynn.learning.model_learning import FactLearner, GraphLearning
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import ProposedFact, RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.stores import SqliteMemory
from flynn.providers.base import ChatRequest
from flynn.recall.recall import Recall

T0 = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")

Said = dict[str, object]


class _Model:
    """The extraction model, scripted per message: the facts it extracts, the verdict it gives
    when a fact meets a stored one (UPDATE of the first candidate unless told), and the graph."""

    def __init__(self) -> None:
        self.facts: list[Said] = []
        self.graph: list[Said] = []
        self.verdict = "UPDATE"

    def answer(self, request: ChatRequest) -> str:
        if request.system == GRAPH_EXTRACTION_PROMPT:
            return json.dumps({"relations": self.graph})
        if request.system == RECONCILE_PROMPT:
            return json.dumps({"action": self.verdict, "candidate": 1})
        return json.dumps(
            {
                "profile": [f for f in self.facts if "field" in f],
                "observations": [f for f in self.facts if "text" in f],
            }
        )


async def _learn(
    memory: SqliteMemory,
    text: str,
    facts: Sequence[Said] = (),
    graph: Sequence[Said] = (),
    *,
    verdict: str = "UPDATE",
    minute: int = 0,
) -> None:
    """A message as Flynn learns it: the rules on the reply path, then the model's batch."""
    relations = FactRelations(memory.graph)
    rules = RuleReconciler(memory.facts, relations=relations)
    ingestor = GraphIngestor(memory.graph, RuleGraphExtractor())
    writer = MemoryWriter(memory.history, RuleExtractor(), rules, graph=ingestor)
    at = T0 + timedelta(minutes=minute)
    message = writer.message(ANA, "telegram:1", "user", text, now=at)
    writer.learn(ANA, message, now=at)
    model = _Model()
    model.facts, model.graph, model.verdict = list(facts), list(graph), verdict
    provider = ScriptedProvider(default=model.answer)
    learner = FactLearner(
        LlmExtractor(provider, threshold=0.7),
        LlmReconciler(provider, rules, clock=FakeClock(at)),
        graph=GraphLearning(LlmGraphExtractor(provider), ingestor),
    )
    await learner.learn([message], ANA.root, graph_namespace=ANA.root)


def _fact(field: str, value: str) -> Said:
    return {"field": field, "value": value, "confidence": 0.95}


def _user(type: str, target: str) -> Said:
    return {"source": "User", "type": type, "target": target}


def _user_relations(memory: SqliteMemory) -> set[tuple[str, str]]:
    user = memory.graph.find(ANA.root, "User")
    assert user is not None
    return {(r.type, r.target_name) for r in memory.graph.relations_of(user.id, limit=50)}


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("location", "Lisbon", FactRelation("lives_in", "Lisbon")),
        ("employer", "Acme", FactRelation("works_at", "Acme")),
        ("dog", "Pixel", FactRelation("dog", "Pixel")),
        ("best_friend", "Tom", FactRelation("best_friend", "Tom")),
        ("dog_name", "Rex", FactRelation("dog", "Rex")),
        (None, "working on ~/src/flynn", FactRelation("works_on", "~/src/flynn")),
        (None, "prefers sushi", None),
    ],
)
def test_the_relation_a_fact_states(
    field: str | None, value: str, expected: FactRelation | None
) -> None:
    assert fact_relation(field, value) == expected


LISBON = [_fact("location", "Lisbon")], [_user("lives_in", "Lisbon")]


async def test_a_superseded_place_is_no_longer_where_the_user_lives(memory: SqliteMemory) -> None:
    await _learn(memory, "I live in Lisbon", *LISBON)
    # Any phrasing, any language: the model reads it.
    await _learn(
        memory,
        "Wir sind nach Porto gezogen",
        [_fact("location", "Porto")],
        [_user("lives_in", "Porto")],
        minute=1,
    )
    assert _chain(memory, "location") == [("Lisbon", "superseded"), ("Porto", "active")]
    assert _user_relations(memory) == {("lives_in", "Porto")}


async def test_a_retracted_place_is_no_longer_where_the_user_lives(memory: SqliteMemory) -> None:
    await _learn(memory, "I live in Lisbon", *LISBON)
    said = "I no longer live in Lisbon"
    await _learn(
        memory, said, [_fact("location", "not Lisbon any more")], verdict="DELETE", minute=1
    )
    assert memory.facts.active(ANA.profile, field="location") == []
    await _learn(
        memory,
        "I live in Porto now",
        [_fact("location", "Porto")],
        [_user("lives_in", "Porto")],
        verdict="ADD",
        minute=2,
    )
    assert _user_relations(memory) == {("lives_in", "Porto")}
    recall = Recall(memory.facts, memory.history, threshold=0.0, graph=memory.graph)
    recalled = recall.recall(
        ANA.root, "Do I live in Lisbon?", now=T0 + timedelta(days=1), budget_tokens=1500
    )
    assert not any("User lives in Lisbon" in line for line in recalled.lines)


def _chain(memory: SqliteMemory, field: str) -> list[tuple[str, str]]:
    return [(fact.value, fact.status) for fact in memory.facts.history(ANA.profile, field)]


async def test_a_new_job_supersedes_the_employer_and_its_relation(memory: SqliteMemory) -> None:
    await _learn(memory, "I work at Acme", [_fact("employer", "Acme")], [_user("works_at", "Acme")])
    await _learn(
        memory,
        "I joined Globex last month as a designer",
        [_fact("employer", "Globex")],
        [_user("works_at", "Globex")],
        minute=1,
    )
    assert _chain(memory, "employer") == [("Acme", "superseded"), ("Globex", "active")]
    assert _user_relations(memory) == {("works_at", "Globex")}


async def test_leaving_retracts_the_employer_and_its_relation(memory: SqliteMemory) -> None:
    await _learn(memory, "I work at Acme", [_fact("employer", "Acme")], [_user("works_at", "Acme")])
    await _learn(
        memory, "I quit Acme", [_fact("employer", "left Acme")], verdict="DELETE", minute=1
    )
    assert memory.facts.active(ANA.profile, field="employer") == []
    assert _user_relations(memory) == set()


async def test_what_the_new_value_says_again_stays(memory: SqliteMemory) -> None:
    await _learn(memory, "I live in Lisbon", *LISBON)
    await _learn(
        memory,
        "I live in Lisbon, Portugal",
        [_fact("location", "Lisbon, Portugal")],
        [_user("lives_in", "Lisbon")],
        minute=1,
    )
    assert ("lives_in", "Lisbon") in _user_relations(memory)


async def test_a_renamed_pet_and_other_peoples_relations(memory: SqliteMemory) -> None:
    await _learn(memory, "my dog is called Pixel", [_fact("dog", "Pixel")], [_user("dog", "Pixel")])
    maya_lives: Said = {"source": "Maya", "type": "lives_in", "target": "Lisbon"}
    await _learn(memory, "Maya lives in Lisbon", [], [maya_lives], minute=1)
    await _learn(
        memory, "my dog is called Rex", [_fact("dog", "Rex")], [_user("dog", "Rex")], minute=2
    )
    assert _user_relations(memory) == {("dog", "Rex")}
    maya = memory.graph.find(ANA.root, "Maya")
    assert maya is not None
    assert [r.type for r in memory.graph.relations_of(maya.id, limit=5)] == ["lives_in"]
    # Another person's move retires nothing of Ana's, nor Ana's move anything of Maya's.
    for minute, place in ((3, "Porto"), (4, "Faro")):
        await _learn(
            memory,
            f"I live in {place}",
            [_fact("location", place)],
            [_user("lives_in", place)],
            minute=minute,
        )
    assert [r.target_name for r in memory.graph.relations_of(maya.id, limit=5)] == ["Lisbon"]


async def test_a_remark_about_a_pet_keeps_the_pet(memory: SqliteMemory) -> None:
    await _learn(memory, "my cat is called Luna", [_fact("cat", "Luna")], [_user("cat", "Luna")])
    sick: Said = {"text": "cat is sick", "confidence": 0.9}
    await _learn(memory, "my cat is sick", [sick], verdict="ADD", minute=1)
    assert ("cat", "Luna") in _user_relations(memory)
    facts = memory.facts.active(ANA.profile)
    assert [(f.field, f.value) for f in facts if f.field == "cat"] == [("cat", "Luna")]
    assert "cat is sick" in [f.value for f in facts if f.field is None]


def test_a_capitalised_description_keeps_the_name_and_its_relation(memory: SqliteMemory) -> None:
    # The deterministic reconciler (no model) replaces a relative only by a capitalised name.
    relations = FactRelations(memory.graph)
    rules = RuleReconciler(memory.facts, relations=relations)
    ingestor = GraphIngestor(memory.graph, RuleGraphExtractor())
    proposal = parse_graph_extraction(json.dumps({"relations": [_user("cat", "Luna")]}))
    ingestor.ingest_proposal(ANA.root, proposal, None, now=T0, confidence=0.7)
    rules.apply(
        ANA.profile, ProposedFact("profile", "cat", "Luna", 0.9, "profile"), source="llm", now=T0
    )
    rules.apply(
        ANA.profile, ProposedFact("profile", "cat", "sick", 0.9, "profile"), source="llm", now=T0
    )
    assert ("cat", "Luna") in _user_relations(memory)


def test_without_relations_the_reconciler_leaves_the_graph_alone(memory: SqliteMemory) -> None:
    rules = RuleReconciler(memory.facts)
    ingestor = GraphIngestor(memory.graph, RuleGraphExtractor())
    for place in ("Lisbon", "Porto"):
        proposal = parse_graph_extraction(json.dumps({"relations": [_user("lives_in", place)]}))
        ingestor.ingest_proposal(ANA.root, proposal, None, now=T0, confidence=0.7)
        fact = ProposedFact("profile", "location", place, 0.9, "profile")
        rules.apply(ANA.profile, fact, source="llm", now=T0)
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
    lisbon = ProposedFact("profile", "location", "Lisbon", 0.9, "profile")
    porto = ProposedFact("profile", "location", "Porto", 0.9, "profile")
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
