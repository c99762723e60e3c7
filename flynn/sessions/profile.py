"""Who the person is, as the prompt shows it: their one set of facts (whoever learnt each) as
lines in the profile's order (``flynn.memory.person_facts``), re-read only when some fact
changed. The session start takes as many as its token budget holds."""

from __future__ import annotations

from dataclasses import dataclass

from flynn.identity import MemoryScope
from flynn.memory.person_facts import active_person_facts
from flynn.memory.store import Fact, Facts

PATTERN_PREFIX = "- when they say "


def fact_line(fact: Fact) -> str:
    if fact.kind == "action" and fact.field:
        return f"{PATTERN_PREFIX}{fact.field!r}: {fact.value}"
    return f"- {fact.field}: {fact.value}" if fact.field else f"- {fact.value}"


@dataclass(frozen=True, slots=True)
class Profile:
    lines: tuple[str, ...]
    """Every active fact's line, most important first (identity, preferences, patterns)."""
    name: str | None


class ProfileCache:
    """The profile of one memory scope, cached until the facts' generation changes (a fact
    learnt, updated or forgotten here or in another session)."""

    def __init__(self, facts: Facts, scope: MemoryScope) -> None:
        self._facts = facts
        self._scope = scope
        self._generation: tuple[int, int] | None = None
        self._profile = Profile((), None)

    def current(self) -> Profile:
        generation = self._facts.generation()
        if generation != self._generation:
            rows = active_person_facts(self._facts, self._scope)
            names = [f.value for f in rows if f.field == "name" and f.kind != "action"]
            self._profile = Profile(
                tuple(fact_line(fact) for fact in rows), names[0] if names else None
            )
            self._generation = generation
        return self._profile
