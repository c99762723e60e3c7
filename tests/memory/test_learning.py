from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fakes.clock import FakeClock

from evals.scripted_provider import ScriptedProvider
from flynn.errors import Unavailable
from flynn.learning.llm_extraction import LlmExtractor
from flynn.learning.llm_reconcile import LlmReconciler
from flynn.learning.model_learning import FactLearner, source_message
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import ProposedFact
from flynn.memory.store import StoredMessage
from flynn.memory.stores import SqliteMemory

MONDAY = datetime(2026, 11, 16, 9, 0, tzinfo=UTC)
ROOT = "user"
FACTS = "user/profile"


def conversation(memory: SqliteMemory) -> list[StoredMessage]:
    said = [
        ("user", "My sister visits next Friday.", MONDAY),
        ("assistant", "Nice!", MONDAY),
        ("user", "I booked the dentist for tomorrow. I work at Acme.", MONDAY + timedelta(days=3)),
        ("assistant", "Noted.", MONDAY + timedelta(days=3)),
    ]
    return [
        memory.history.append("gateway:x", "user", role, text, tokens=5, now=at)  # type: ignore[arg-type]
        for role, text, at in said
    ]


def learner(memory: SqliteMemory, provider: ScriptedProvider) -> FactLearner:
    clock = FakeClock(MONDAY + timedelta(days=10))
    reconciler = LlmReconciler(provider, RuleReconciler(memory.facts), clock=clock)
    return FactLearner(LlmExtractor(provider, threshold=0.7), reconciler)


async def test_each_fact_is_dated_against_the_turn_it_came_from(memory: SqliteMemory) -> None:
    messages = conversation(memory)
    provider = ScriptedProvider(
        [
            '{"observations": [{"text": "sister visits next Friday", "confidence": 0.9},'
            ' {"text": "dentist appointment tomorrow", "confidence": 0.9},'
            ' {"text": "has a cat", "confidence": 0.3}],'
            ' "profile": [{"field": "employer", "value": "Acme", "confidence": 0.95}, {"field": '
        ]
    )
    changed = await learner(memory, provider).learn(messages, ROOT, session="gateway:x")
    assert changed == 3
    facts = {fact.value: fact for fact in memory.facts.active(FACTS)}
    assert set(facts) == {
        "sister visits on Friday 2026-11-20",
        "dentist appointment on Friday 2026-11-20",
        "Acme",
    }
    assert facts["sister visits on Friday 2026-11-20"].message_id == messages[0].id
    assert facts["Acme"].message_id == messages[2].id
    assert all(fact.source == "llm" and fact.session == "gateway:x" for fact in facts.values())
    [extraction] = provider.requests  # no candidates, so no reconciliation calls
    assert "Nice!" in extraction.messages[0].content


async def test_a_failed_extraction_writes_nothing_and_raises(memory: SqliteMemory) -> None:
    provider = ScriptedProvider([Unavailable("down")])
    with pytest.raises(Unavailable):
        await learner(memory, provider).learn(conversation(memory), ROOT)
    assert memory.facts.active(FACTS) == []


def test_source_message(memory: SqliteMemory) -> None:
    messages = conversation(memory)

    def fact(value: str) -> ProposedFact:
        return ProposedFact("observation", None, value, 0.9, "profile")

    assert source_message(fact("visit on next friday"), messages) == messages[0]
    assert source_message(fact("works at Acme"), messages) == messages[2]
    assert source_message(fact("unrelated"), messages) == messages[2]  # the newest turn
