"""Who the person is, as the prompt shows it: their profile and patterns as lines, read from the
facts tables and re-read only when some fact changed."""

from __future__ import annotations

from dataclasses import dataclass

from flynn.identity import MemoryScope
from flynn.memory.store import Fact, Facts

PROFILE_LINES_MAX = 40


PATTERN_PREFIX = "- when they say "


def fact_line(fact: Fact) -> str:
    if fact.kind == "action" and fact.field:
        return f"{PATTERN_PREFIX}{fact.field!r}: {fact.value}"
    return f"- {fact.field}: {fact.value}" if fact.field else f"- {fact.value}"


@dataclass(frozen=True, slots=True)
class Profile:
    lines: tuple[str, ...]
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
            scope = self._scope
            rows = self._facts.active(scope.profile) + self._facts.active(scope.patterns)
            names = [f.value for f in rows if f.field == "name" and f.namespace == scope.profile]
            self._profile = Profile(
                tuple(fact_line(fact) for fact in rows[:PROFILE_LINES_MAX]),
                names[0] if names else None,
            )
            self._generation = generation
        return self._profile
