"""The session start's "who you're talking to" (issue 23): the person's one set of facts, whoever
learnt each, identity first (name, place, work, family), then preferences and ways of working,
then patterns; stated before learnt, the most recently confirmed first; within
``memory.profile_max_tokens``."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flynn.identity import MemoryScope
from flynn.memory.overview import memory_snapshot
from flynn.memory.store import FactKind, FactSource, NewFact
from flynn.memory.stores import SqliteMemory
from flynn.schedule.migrations import SCHEMA
from flynn.sessions.profile import PATTERN_PREFIX, ProfileCache
from flynn.sessions.prompt import (
    PATTERN_SHARE,
    PATTERNS_HEADING,
    PROFILE_HEADING,
    PROFILE_MAX_TOKENS,
    build_session_context,
)
from flynn.tokens import estimate_tokens

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[SqliteMemory]:
    with SqliteMemory.open(tmp_path / "flynn.db", SCHEMA) as opened:
        yield opened


def add(
    memory: SqliteMemory,
    value: str,
    field: str | None = None,
    *,
    source: FactSource = "llm",
    kind: FactKind | None = None,
    minutes: int = 0,
    namespace: str = ANA.profile,
) -> int:
    kind = kind or ("profile" if field else "observation")
    fact = NewFact(namespace, kind, value, field=field, source=source, confidence=0.8)
    return memory.facts.add(fact, now=T0 + timedelta(minutes=minutes)).id


def test_every_source_is_shown_identity_first_then_preferences_then_patterns(
    memory: SqliteMemory,
) -> None:
    add(memory, "prefers short answers", minutes=9)
    add(memory, "Maria", "sister_name", minutes=8)
    add(memory, "is vegetarian", source="tool", minutes=1)
    add(memory, "Acme", "employer", minutes=7)
    add(memory, "Porto", "location", source="tool", minutes=6)
    add(memory, "Ana", "name", source="rule", minutes=0)
    add(memory, "run the deploy checklist", "ship it", kind="action", namespace=ANA.patterns)
    # Left where an old install's model kept it (and not yet moved): still who she is.
    add(memory, "plays the bassoon", namespace=ANA.facts, minutes=5)

    profile = ProfileCache(memory.facts, ANA).current()
    assert profile.name == "Ana"
    assert profile.lines == (
        "- name: Ana",
        "- location: Porto",
        "- employer: Acme",
        "- sister_name: Maria",
        "- is vegetarian",  # what she said before what a model learnt
        "- prefers short answers",
        "- plays the bassoon",
        "- when they say 'ship it': run the deploy checklist",
    )
    context = build_session_context(profile.lines, None, proactive_greeting=False)
    assert context.index(PROFILE_HEADING) < context.index("name: Ana") < context.index("Acme")
    assert context.index("prefers short") < context.index(PATTERNS_HEADING)

    # memory show reads the same one set, in the same order.
    snapshot = memory_snapshot(memory, ANA, now=T0)
    assert [f.value for f in snapshot.profile][:3] == ["Ana", "Porto", "Acme"]
    assert [f.value for f in snapshot.patterns] == ["run the deploy checklist"]
    assert "plays the bassoon" in snapshot.as_text()


def test_the_most_recently_confirmed_comes_first(memory: SqliteMemory) -> None:
    older = add(memory, "likes jazz", minutes=0)
    add(memory, "likes hiking", minutes=5)
    cache = ProfileCache(memory.facts, ANA)
    assert cache.current().lines == ("- likes hiking", "- likes jazz")
    assert memory.facts.confirm(older, now=T0 + timedelta(days=1))
    assert cache.current().lines == ("- likes jazz", "- likes hiking")


def test_the_block_keeps_to_its_budget_and_keeps_who_they_are(memory: SqliteMemory) -> None:
    add(memory, "Ana", "name", source="rule")
    add(memory, "Porto", "location", source="rule")
    for number in range(300):
        add(memory, f"keeps a note about topic number {number} in her notebook", minutes=number)
    for number in range(20):
        add(memory, f"open note {number}", f"cmd {number}", kind="action", namespace=ANA.patterns)
    lines = ProfileCache(memory.facts, ANA).current().lines
    assert len(lines) == 322

    for budget in (60, PROFILE_MAX_TOKENS, 1000):
        context = build_session_context(
            lines, None, proactive_greeting=False, profile_max_tokens=budget
        )
        assert estimate_tokens(context) <= budget
        assert "- name: Ana\n- location: Porto\n" in context
        # The newest of the 300 before older ones.
        assert "topic number 299 " in context
        assert "topic number 0 " not in context
    small = build_session_context(lines, None, proactive_greeting=False, profile_max_tokens=60)
    assert PATTERNS_HEADING not in small  # a quarter of 60 holds no patterns' heading
    big = build_session_context(lines, None, proactive_greeting=False, profile_max_tokens=1000)
    # 300 preferences would fill it all; a quarter is held for how they asked to be answered.
    assert PATTERNS_HEADING in big and "open note 19" in big
    patterns = big[big.index(PATTERNS_HEADING) :]
    assert estimate_tokens(patterns) <= 1000 * PATTERN_SHARE + 5
    assert "topic number 299 " in big[: big.index(PATTERNS_HEADING)]


def test_facts_take_what_the_patterns_leave() -> None:
    lines = [
        "- name: Ana",
        *(f"- likes topic {n}" for n in range(100)),
        PATTERN_PREFIX + "'x': do y",
    ]
    context = build_session_context(lines, None, proactive_greeting=False, profile_max_tokens=400)
    assert "'x': do y" in context
    # One short pattern uses little of its quarter: the facts fill the rest of the budget.
    assert estimate_tokens(context) > 400 * (1 - PATTERN_SHARE)


def test_a_long_line_that_does_not_fit_leaves_room_for_shorter_ones() -> None:
    lines = ["- name: Ana", "- " + "very long observation " * 40, "- likes tea"]
    context = build_session_context(lines, None, proactive_greeting=False, profile_max_tokens=60)
    assert "name: Ana" in context and "likes tea" in context
    assert "very long" not in context
