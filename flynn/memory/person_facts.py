"""One set of facts about a person, whoever learnt them (rules, the ``remember`` tool, the
extraction model), read as one and ranked as the session start shows them: who they are (name,
where they live, work, family), then their preferences and ways of working, then their patterns;
within each, what they stated before what a model learnt or guessed, the most recently confirmed
first."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from flynn.identity import MemoryScope
from flynn.memory.store import Fact, Facts, FactSource

Section = Literal["identity", "preferences", "patterns"]
SECTIONS: tuple[Section, ...] = ("identity", "preferences", "patterns")

STATED_SOURCES: frozenset[FactSource] = frozenset({"rule", "explicit", "tool"})
"""What the person said themselves: a rule caught it, they asked for it to be remembered."""
GUESSED_SOURCES: frozenset[FactSource] = frozenset({"inferred"})
"""What was guessed, never said (the extraction model marks what it only inferred)."""

# Who someone is, in the order a person would introduce them. A field is placed by its exact name,
# else by any of its words ("home_city" is a place, "job_title" work); the model names fields
# freely, so words, not a list of every spelling. "dog_name" is family (a pet), not their name.
_IDENTITY_GROUPS: tuple[frozenset[str], ...] = tuple(
    frozenset(words.split())
    for words in (
        "name full_name first_name last_name preferred_name nickname pronouns",
        "location city home hometown country address lives timezone neighbourhood neighborhood "
        "region town",
        "employer company workplace job occupation role profession work title team school "
        "university studies",
        "partner spouse wife husband children child kids son daughter mother mom mum father dad "
        "sister brother family pet dog cat birthday age born language",
    )
)


@dataclass(frozen=True, slots=True)
class Placed:
    """A fact with where the profile puts it."""

    fact: Fact
    section: Section
    group: int
    """Order within identity (0 name, 1 place, 2 work, 3 family); 0 elsewhere."""


def person_namespaces(scope: MemoryScope) -> tuple[str, str, str]:
    """Where a person's facts are: ``profile`` and ``patterns``, and ``facts`` (the extraction
    model's before migration 16 moved them; nothing writes it now, it is read so none is lost)."""
    return (scope.profile, scope.patterns, scope.facts)


def active_person_facts(facts: Facts, scope: MemoryScope) -> list[Fact]:
    """Every active fact about the person, all sources, ranked (``ranked``)."""
    return [placed.fact for placed in ranked(_active(facts, scope))]


def ranked(facts: Iterable[Fact]) -> list[Placed]:
    """``facts`` in the profile's order: identity (name, place, work, family), preferences and
    ways of working, patterns; within each, stated before model-learnt before guessed, then the
    most recently confirmed (``updated_at``) first."""
    placed = [place(fact) for fact in facts]
    placed.sort(key=_importance)
    return placed


def place(fact: Fact) -> Placed:
    if fact.kind == "action":
        return Placed(fact, "patterns", 0)
    group = identity_group(fact.field)
    if group is None:
        return Placed(fact, "preferences", 0)
    return Placed(fact, "identity", group)


def identity_group(field: str | None) -> int | None:
    """Which part of who someone is ``field`` says (0 name, 1 place, 2 work, 3 family), or
    ``None`` for anything else (a preference, a tool they use, a project)."""
    if field is None:
        return None
    for number, names in enumerate(_IDENTITY_GROUPS):
        if field in names:
            return number
    words = set(field.split("_"))
    # Later groups first: a relative's or a pet's name ("sister_name") is family, not theirs.
    for number in range(len(_IDENTITY_GROUPS) - 1, 0, -1):
        if words & _IDENTITY_GROUPS[number]:
            return number
    return None


def trust_rank(source: FactSource) -> int:
    """0 what they stated, 1 what a model learnt from what they said, 2 a guess."""
    if source in STATED_SOURCES:
        return 0
    return 2 if source in GUESSED_SOURCES else 1


def _importance(placed: Placed) -> tuple[int, int, int, float, int]:
    fact = placed.fact
    return (
        SECTIONS.index(placed.section),
        placed.group,
        trust_rank(fact.source),
        -fact.updated_at.timestamp(),
        -fact.id,
    )


def _active(facts: Facts, scope: MemoryScope) -> Sequence[Fact]:
    return [fact for namespace in person_namespaces(scope) for fact in facts.active(namespace)]
