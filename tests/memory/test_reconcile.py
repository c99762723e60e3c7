"""Reconciliation with supersession (seed 001): ADD / UPDATE / DELETE / NOOP, deterministic and
with a scripted model, against real SQLite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fakes.clock import FakeClock

from evals.scripted_provider import ScriptedProvider
from flynn.errors import Unavailable
from flynn.learning.llm_reconcile import LlmReconciler, parse_decision
from flynn.learning.reconcile import Outcome, RuleReconciler, word_overlap
from flynn.learning.rules import ProposedFact
from flynn.memory.fact_keys import RETRACTION_PREFIX, observation_key
from flynn.memory.store import FactKind, NewFact
from flynn.memory.stores import SqliteMemory

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
PROFILE = "user/profile"
FACTS = "user/facts"


def field(name: str, value: str, *, retracts: bool = False) -> ProposedFact:
    return ProposedFact("profile", name, value, 0.9, "profile", retracts=retracts)


def note(value: str, *, retracts: bool = False, kind: FactKind = "profile") -> ProposedFact:
    return ProposedFact(kind, None, value, 0.9, "profile", retracts=retracts)


@pytest.fixture
def rules(memory: SqliteMemory) -> RuleReconciler:
    return RuleReconciler(memory.facts)


def apply(
    rules: RuleReconciler, proposed: ProposedFact, at: datetime = T0, ns: str = PROFILE
) -> Outcome:
    return rules.apply(ns, proposed, source="rule", now=at)


# -- deterministic ------------------------------------------------------------------------------


def test_add_then_noop_for_a_repeat(rules: RuleReconciler, memory: SqliteMemory) -> None:
    first = apply(rules, field("timezone", "Europe/Lisbon"))
    assert first.action == "add"
    again = apply(rules, field("timezone", "europe/lisbon "))
    assert again.action == "noop" and again.fact == first.fact
    assert len(memory.facts.history(PROFILE, "timezone")) == 1


def test_update_supersedes_and_links(rules: RuleReconciler, memory: SqliteMemory) -> None:
    old = apply(rules, field("timezone", "Europe/Lisbon")).fact
    outcome = apply(rules, field("timezone", "Europe/Berlin"), T0 + timedelta(days=1))
    assert outcome.action == "update" and outcome.replaced == old
    assert old is not None and outcome.fact is not None
    assert outcome.fact.supersedes == old.id
    chain = memory.facts.history(PROFILE, "timezone")
    assert [(f.value, f.status) for f in chain] == [
        ("Europe/Lisbon", "superseded"),
        ("Europe/Berlin", "active"),
    ]
    assert chain[0].updated_at == T0 + timedelta(days=1)


def test_delete_records_the_retraction(rules: RuleReconciler, memory: SqliteMemory) -> None:
    old = apply(rules, field("location", "Lisbon, Portugal")).fact
    assert old is not None
    outcome = apply(rules, field("location", "Lisbon", retracts=True), T0 + timedelta(days=2))
    assert outcome.action == "delete" and outcome.replaced == old
    assert memory.facts.active(PROFILE) == []
    chain = memory.facts.history(PROFILE, "location")
    assert [(f.value, f.status, f.supersedes) for f in chain] == [
        ("Lisbon, Portugal", "superseded", None),
        (RETRACTION_PREFIX + "Lisbon, Portugal", "deleted", old.id),
    ]
    # Nothing retracted, nothing stored.
    nothing = apply(rules, field("location", "Porto", retracts=True))
    assert nothing.action == "noop" and nothing.fact is None
    assert len(memory.facts.history(PROFILE, "location")) == 2


def test_a_retraction_of_another_value_retires_nothing(
    rules: RuleReconciler, memory: SqliteMemory
) -> None:
    apply(rules, field("location", "Porto"))
    assert apply(rules, field("location", "Lisbon", retracts=True)).action == "noop"
    assert [f.value for f in memory.facts.active(PROFILE)] == ["Porto"]


def test_preference_flip_and_retraction(rules: RuleReconciler, memory: SqliteMemory) -> None:
    liked = apply(rules, note("prefers green tea")).fact
    assert apply(rules, note("Prefers green  tea")).action == "noop"
    flipped = apply(rules, note("dislikes green tea"))
    assert flipped.action == "update" and flipped.replaced == liked
    assert [f.value for f in memory.facts.active(PROFILE)] == ["dislikes green tea"]
    retracted = apply(rules, note("dislikes green tea", retracts=True))
    assert retracted.action == "delete"
    assert memory.facts.active(PROFILE) == []


def test_a_flipped_preference_replaces_its_opposite(
    rules: RuleReconciler, memory: SqliteMemory
) -> None:
    # As the extraction model proposes "I love sushi", then "I hate sushi now".
    liked = apply(rules, note("prefers sushi")).fact
    flipped = apply(rules, note("dislikes sushi"), T0 + timedelta(minutes=1))
    assert flipped.action == "update" and flipped.replaced == liked
    assert flipped.fact is not None and liked is not None
    assert flipped.fact.supersedes == liked.id
    assert [f.value for f in memory.facts.active(PROFILE)] == ["dislikes sushi"]


def test_unrelated_observations_never_retire_each_other(
    rules: RuleReconciler, memory: SqliteMemory
) -> None:
    apply(rules, note("prefers green tea"))
    apply(rules, note("dislikes coffee"))
    apply(rules, note("working on src/app.py", kind="observation"))
    assert apply(rules, note("working on src/db.py", kind="observation")).action == "add"
    assert apply(rules, note("prefers tea")).action == "add"  # "tea" is not "green tea"
    assert len(memory.facts.active(PROFILE)) == 5


def test_scope_isolation(rules: RuleReconciler, memory: SqliteMemory) -> None:
    apply(rules, field("timezone", "Europe/Lisbon"), ns="users/ana/profile")
    other = apply(rules, field("timezone", "Asia/Tokyo"), ns="users/bob/profile")
    assert other.action == "add"
    assert [f.value for f in memory.facts.active("users/ana/profile")] == ["Europe/Lisbon"]
    retract = apply(
        rules, field("timezone", "Europe/Lisbon", retracts=True), ns="users/bob/profile"
    )
    assert retract.action == "noop"
    assert [f.value for f in memory.facts.active("users/ana/profile")] == ["Europe/Lisbon"]


def test_relative_dates_resolve_in_the_persons_timezone(
    rules: RuleReconciler, memory: SqliteMemory
) -> None:
    late_friday = datetime(2026, 11, 20, 23, 30, tzinfo=UTC)
    outcome = apply(rules, field("dentist", "next Friday"), late_friday)
    assert outcome.fact is not None and outcome.fact.value == "on Friday 2026-11-27"
    apply(rules, field("timezone", "Asia/Tokyo"))  # already Saturday there
    outcome = apply(rules, field("haircut", "tomorrow"), late_friday)
    assert outcome.fact is not None and outcome.fact.value == "on Sunday 2026-11-22"
    said = rules.apply(
        FACTS, field("flight", "tomorrow"), source="llm", now=late_friday, said_at=T0 - timedelta(1)
    )
    assert said.fact is not None and said.fact.value == "on Friday 2026-11-20"


def test_keys_and_overlap() -> None:
    assert observation_key("Prefers  Green tea") == ("prefers", "green tea")
    assert observation_key("working on src/app.py") == ("working on", "src/app.py")
    assert observation_key("Ana has two cats") is None
    assert word_overlap("Ana has two cats", "Ana has three cats") == pytest.approx(0.5)
    assert word_overlap("likes hiking", "works at Acme") == 0.0


# -- with a model -------------------------------------------------------------------------------


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(T0)


def llm(memory: SqliteMemory, provider: ScriptedProvider, clock: FakeClock) -> LlmReconciler:
    return LlmReconciler(provider, RuleReconciler(memory.facts), clock=clock)


def seed(memory: SqliteMemory, value: str, *, field_name: str | None = None) -> int:
    fact = memory.facts.add(
        NewFact(namespace=FACTS, kind="observation", field=field_name, value=value, source="llm"),
        now=T0 - timedelta(days=3),
    )
    return fact.id


async def test_llm_update_of_a_similar_observation(memory: SqliteMemory, clock: FakeClock) -> None:
    old = seed(memory, "Ana has two cats")
    seed(memory, "Ana works at Acme")
    provider = ScriptedProvider(['{"action": "UPDATE", "candidate": 1}'])
    outcome = await llm(memory, provider, clock).apply(FACTS, note("Ana has three cats"))
    assert outcome.action == "update" and outcome.replaced is not None
    assert outcome.replaced.id == old
    assert [f.value for f in memory.facts.active(FACTS)] == [
        "Ana has three cats",
        "Ana works at Acme",
    ]
    [request] = provider.requests
    body = request.messages[0].content
    # Blind of the conversation: only the new fact and the candidates that share its subject.
    assert "Ana has three cats" in body and "1. Ana has two cats" in body
    assert "Acme" not in body
    assert request.task == "extraction"


async def test_llm_delete(memory: SqliteMemory, clock: FakeClock) -> None:
    old = seed(memory, "Ana is vegetarian")
    provider = ScriptedProvider(['Sure: {"action": "delete", "candidate": "1"}'])
    outcome = await llm(memory, provider, clock).apply(FACTS, note("Ana is no longer vegetarian"))
    assert outcome.action == "delete"
    assert outcome.fact is not None and outcome.fact.status == "deleted"
    assert outcome.fact.value == RETRACTION_PREFIX + "Ana is vegetarian"
    assert outcome.fact.supersedes == old
    assert memory.facts.active(FACTS) == []


async def test_llm_noop_and_add(memory: SqliteMemory, clock: FakeClock) -> None:
    seed(memory, "Ana plays the cello")
    provider = ScriptedProvider(['{"action": "NOOP", "candidate": 1}', '{"action": "ADD"}'])
    reconciler = llm(memory, provider, clock)
    noop = await reconciler.apply(FACTS, note("Ana plays cello in a youth orchestra"))
    assert noop.action == "noop"
    added = await reconciler.apply(FACTS, note("Ana plays the piano"))
    assert added.action == "add"
    assert len(memory.facts.active(FACTS)) == 2
    assert len(provider.requests) == 2


async def test_no_model_call_without_candidates_or_for_a_repeat(
    memory: SqliteMemory, clock: FakeClock
) -> None:
    provider = ScriptedProvider()
    reconciler = llm(memory, provider, clock)
    assert (await reconciler.apply(FACTS, note("Ana keeps bees"))).action == "add"
    assert (await reconciler.apply(FACTS, note("Ana keeps bees"))).action == "noop"
    assert provider.requests == []


@pytest.mark.parametrize(
    "answer",
    [
        "}{ garbage",
        '{"action": "UPDATE", "candidate": 7}',
        '{"action": "DELETE"}',
        '{"action": "MERGE", "candidate": 1}',
        '{"action": true}',
        Unavailable("down"),
    ],
)
async def test_unusable_answers_fall_back_to_the_deterministic_verdict(
    memory: SqliteMemory, clock: FakeClock, answer: str | Unavailable
) -> None:
    seed(memory, "Europe/Lisbon", field_name="timezone")
    seed(memory, "Europe/Madrid", field_name="timezone")
    provider = ScriptedProvider([answer])
    outcome = await llm(memory, provider, clock).apply(FACTS, field("timezone", "Europe/Berlin"))
    # Deterministic: the newest statement of a field replaces the latest value.
    assert outcome.action == "update"
    latest = memory.facts.active(FACTS, field="timezone")[0]
    assert latest.value == "Europe/Berlin"


async def test_a_target_that_changed_meanwhile_is_decided_again(
    memory: SqliteMemory, clock: FakeClock
) -> None:
    old = seed(memory, "Europe/Lisbon", field_name="timezone")
    rules = RuleReconciler(memory.facts)

    def answer(_request: object) -> str:
        # While the model "thinks", a turn's rule extraction replaces the candidate.
        rules.apply(FACTS, field("timezone", "Europe/Paris"), source="rule", now=T0)
        return '{"action": "UPDATE", "candidate": 1}'

    provider = ScriptedProvider([answer])
    outcome = await LlmReconciler(provider, rules, clock=clock).apply(
        FACTS, field("timezone", "Europe/Berlin")
    )
    assert outcome.action == "update" and outcome.replaced is not None
    assert outcome.replaced.id != old and outcome.replaced.value == "Europe/Paris"
    values = [(f.value, f.status) for f in memory.facts.history(FACTS, "timezone")]
    assert values == [
        ("Europe/Lisbon", "superseded"),
        ("Europe/Paris", "superseded"),
        ("Europe/Berlin", "active"),
    ]


def test_parse_decision(memory: SqliteMemory) -> None:
    only = memory.facts.add(NewFact(namespace=FACTS, kind="observation", value="x"), now=T0)
    assert parse_decision('{"action": "noop"}', [only]) is not None
    assert parse_decision('{"action": "noop"}', [only, only]) is None
    assert parse_decision('{"candidate": 1}', [only]) is None
    assert parse_decision('```json\n{"action": "Add"}\n```', []) is not None
