"""One reconciliation across sources (issue 23): whoever learnt a fact, a newer value for the same
thing supersedes it with its history; a guess never replaces what the person said; a repeat
confirms; and with vectors on, facts alike only in meaning meet in the model's judgement (the
real ``openai`` SDK against the fake server)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from fakes import FakeOpenAI, Reply
from fakes.clock import FakeClock
from fakes.http_server import RecordedRequest

from flynn.learning.fact_meaning import FactMeaning
from flynn.learning.llm_extraction import LlmExtractor, parse_extraction
from flynn.learning.llm_reconcile import RECONCILE_PROMPT, LlmReconciler
from flynn.learning.model_learning import FactLearner
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import ProposedFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import SqliteVectors
from flynn.providers.openai import OpenAIProvider
from flynn.recall import minilm

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
PROFILE = "users/ana/profile"


def field(name: str, value: str) -> ProposedFact:
    return ProposedFact("profile", name, value, 0.9, "profile")


def note(text: str, *, inferred: bool = False) -> ProposedFact:
    return ProposedFact("observation", None, text, 0.8, "profile", inferred=inferred)


def test_a_model_learnt_name_replaces_a_rule_learnt_one_with_its_history(
    memory: SqliteMemory,
) -> None:
    rules = RuleReconciler(memory.facts)
    rules.apply(PROFILE, field("name", "Ana"), source="rule", now=T0)
    outcome = rules.apply(PROFILE, field("name", "Annie"), source="llm", now=T0 + timedelta(1))
    assert outcome.action == "update"
    history = memory.facts.history(PROFILE, "name")
    assert [(f.value, f.source, f.status) for f in history] == [
        ("Ana", "rule", "superseded"),
        ("Annie", "llm", "active"),
    ]
    assert history[1].supersedes == history[0].id


def test_a_guess_never_replaces_what_the_person_said_but_what_they_say_replaces_a_guess(
    memory: SqliteMemory,
) -> None:
    rules = RuleReconciler(memory.facts)
    rules.apply(PROFILE, field("location", "Porto"), source="tool", now=T0)
    guess = rules.apply(PROFILE, field("location", "Lisbon"), source="inferred", now=T0)
    assert guess.action == "noop"
    assert [f.value for f in memory.facts.active(PROFILE)] == ["Porto"]

    rules.apply(PROFILE, field("diet", "pescatarian"), source="inferred", now=T0)
    said = rules.apply(PROFILE, field("diet", "vegetarian"), source="rule", now=T0)
    assert said.action == "update"
    assert [(f.field, f.value) for f in memory.facts.active(PROFILE, field="diet")] == [
        ("diet", "vegetarian")
    ]


def test_a_repeat_confirms_the_fact_it_repeats(memory: SqliteMemory) -> None:
    rules = RuleReconciler(memory.facts)
    first = rules.apply(PROFILE, field("employer", "Acme"), source="llm", now=T0).fact
    assert first is not None
    later = T0 + timedelta(days=30)
    again = rules.apply(PROFILE, field("employer", "Acme"), source="rule", now=later)
    assert again.action == "noop"
    stored = memory.facts.get(first.id)
    assert stored is not None and stored.updated_at == later and stored.created_at == T0


def test_what_the_model_says_it_only_guessed_is_stored_as_a_guess() -> None:
    answer = json.dumps(
        {
            "profile": [
                {"field": "city", "value": "Porto", "confidence": 0.9, "stated": True},
                {"field": "diet", "value": "vegetarian", "confidence": 0.8, "stated": False},
            ],
            "observations": [{"text": "likes jazz", "confidence": 0.8}],
        }
    )
    facts = parse_extraction(answer, threshold=0.7)
    assert [(f.value, f.inferred) for f in facts] == [
        ("Porto", False),
        ("vegetarian", True),
        ("likes jazz", False),
    ]


async def test_a_guess_from_the_model_keeps_the_name_they_gave(memory: SqliteMemory) -> None:
    """Through the real SDK: the model guesses a name and even answers UPDATE; the stated one
    stays, and the guess is not believed."""
    rules = RuleReconciler(memory.facts)
    rules.apply(PROFILE, field("name", "Ana"), source="rule", now=T0)
    said = memory.history.append("gateway:x", "users/ana", "user", "sign it A.", tokens=3, now=T0)

    def answer(request: RecordedRequest) -> Reply:
        if RECONCILE_PROMPT[:40] in json.dumps(request.json):
            return Reply('{"action": "UPDATE", "candidate": 1}')
        guessed = {"field": "name", "value": "Alice", "confidence": 0.8, "stated": False}
        return Reply(json.dumps({"profile": [guessed]}))

    async with FakeOpenAI() as server:
        server.responder = answer
        async with OpenAIProvider(
            "sk-test", "fake", base_url=server.base_url, timeout_seconds=5, max_output_tokens=300
        ) as provider:
            clock = FakeClock(T0 + timedelta(hours=1))
            learner = FactLearner(
                LlmExtractor(provider, threshold=0.7),
                LlmReconciler(provider, rules, clock=clock),
            )
            assert await learner.learn([said], "users/ana") == 0
    assert [(f.value, f.source) for f in memory.facts.active(PROFILE)] == [("Ana", "rule")]


@pytest.fixture
def meaning(memory: SqliteMemory) -> FactMeaning:
    if minilm.model_dir() is None:
        pytest.skip(f"{minilm.MINILM_PACKAGE} is not installed")
    return FactMeaning(memory.facts, SqliteVectors(memory.db, minilm.MiniLMEncoder.installed()))


async def test_facts_alike_in_meaning_are_found_and_unrelated_ones_are_not(
    memory: SqliteMemory, meaning: FactMeaning
) -> None:
    for text in ("is vegetarian", "plays the bassoon on Tuesdays", "prefers short answers"):
        RuleReconciler(memory.facts).apply(PROFILE, note(text), source="llm", now=T0)
    # Another person's alike fact is never theirs to meet.
    RuleReconciler(memory.facts).apply(
        "users/bob/profile", note("eats no meat"), source="llm", now=T0
    )
    found = await meaning.similar(PROFILE, "doesn't eat meat")
    assert [f.value for f in found] == ["is vegetarian"]
    assert await meaning.similar(PROFILE, "lives in a flat in Porto") == []
    # Embedded once: a second search stores no vector again.
    count = "SELECT count(*) FROM embeddings WHERE kind = 'fact'"
    before = memory.db.fetchall(count)[0][0]
    await meaning.similar(PROFILE, "doesn't eat meat")
    assert memory.db.fetchall(count)[0][0] == before == 3


@pytest.mark.parametrize("vectors_on", [True, False])
async def test_vegetarian_and_doesnt_eat_meat_meet_when_vectors_are_on(
    memory: SqliteMemory, meaning: FactMeaning, vectors_on: bool
) -> None:
    rules = RuleReconciler(memory.facts)
    rules.apply(PROFILE, note("is vegetarian"), source="rule", now=T0)

    async with FakeOpenAI() as server:
        server.responder = lambda request: Reply('{"action": "NOOP", "candidate": 1}')
        async with OpenAIProvider(
            "sk-test", "fake", base_url=server.base_url, timeout_seconds=5, max_output_tokens=300
        ) as provider:
            reconciler = LlmReconciler(
                provider,
                rules,
                clock=FakeClock(T0 + timedelta(days=1)),
                meaning=meaning if vectors_on else None,
            )
            outcome = await reconciler.apply(PROFILE, note("doesn't eat meat"))

    values = sorted(f.value for f in memory.facts.active(PROFILE))
    if vectors_on:
        (asked,) = server.requests
        assert "1. is vegetarian (source rule" in server.last_user_text(asked)
        assert outcome.action == "noop"
        assert values == ["is vegetarian"]
    else:
        assert server.requests == []  # no word in common: nothing to weigh, so no call
        assert outcome.action == "add"
        assert values == ["doesn't eat meat", "is vegetarian"]
