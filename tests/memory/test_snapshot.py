"""``flynn memory show --history``: what flynn believed and when it changed, found by what a person
would type (a field, or what an observation is about)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from flynn.identity import MemoryScope
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import ProposedFact, RuleExtractor
from flynn.memory.overview import fact_history
from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")


def _tell(memory: SqliteMemory, *said: str | ProposedFact) -> None:
    """Each message's rule facts, or a fact as the extraction model proposes it."""
    rules = RuleReconciler(memory.facts)
    for minute, text in enumerate(said):
        at = T0 + timedelta(minutes=minute)
        if isinstance(text, ProposedFact):
            rules.apply(ANA.profile, text, source="llm", now=at)
            continue
        for fact in RuleExtractor().extract(text):
            rules.apply(ANA.profile, fact, source="rule", now=at)


def _learnt(field: str | None, value: str) -> ProposedFact:
    return ProposedFact("profile", field, value, 0.9, "profile")


def _values(memory: SqliteMemory, query: str) -> list[str]:
    return [fact.value for fact in fact_history(memory, ANA, query).rows]


@pytest.mark.parametrize("query", ["sushi", "prefers sushi", "prefers_sushi", "preference"])
def test_a_flipped_preference_is_found_by_its_object_its_value_or_its_kind(
    memory: SqliteMemory, query: str
) -> None:
    loved, hated = _learnt(None, "prefers sushi"), _learnt(None, "dislikes sushi")
    _tell(memory, loved, hated, "my timezone is UTC")
    history = fact_history(memory, ANA, query)
    assert [(fact.value, fact.status) for fact in history.rows] == [
        ("prefers sushi", "superseded"),
        ("dislikes sushi", "active"),
    ]
    assert history.rows[1].supersedes == history.rows[0].id
    assert "(nothing stored)" not in history.as_text()


def test_a_retracted_observation_shows_its_whole_chain(memory: SqliteMemory) -> None:
    _tell(memory, "I'm working on ~/src/app.py", "I stopped working on ~/src/app.py")
    expected = ["working on ~/src/app.py", "no longer: working on ~/src/app.py"]
    assert _values(memory, "~/src/app.py") == expected
    assert _values(memory, "working on") == expected


def test_a_chain_is_found_through_any_of_its_rows(memory: SqliteMemory) -> None:
    first = memory.facts.add(
        NewFact(namespace=ANA.facts, kind="observation", value="dentist on Friday"), now=T0
    )
    memory.facts.supersede(
        first.id,
        NewFact(namespace=ANA.facts, kind="observation", value="appointment moved to Monday"),
        now=T0 + timedelta(days=1),
    )
    assert _values(memory, "dentist") == ["dentist on Friday", "appointment moved to Monday"]
    assert _values(memory, "Monday") == ["dentist on Friday", "appointment moved to Monday"]


def test_a_field_comes_first_and_nothing_else_matches(memory: SqliteMemory) -> None:
    lisbon, porto = _learnt("location", "Lisbon"), _learnt("location", "Porto")
    _tell(memory, lisbon, porto, _learnt(None, "prefers Lisbon"))
    assert _values(memory, "location") == ["Lisbon", "Porto"]
    assert _values(memory, "Lisbon") == ["prefers Lisbon"]
    history = fact_history(memory, ANA, "tea")
    assert history.rows == () and "(nothing stored)" in history.as_text()
