"""Deterministic reconciliation: a proposed fact becomes ADD, UPDATE, DELETE or NOOP against the
active facts of its namespace, without a language model.

Same-field facts update (the old row is superseded, never deleted); identical facts are NOOPs; a
preference that flips ("prefers tea" after "dislikes tea") supersedes its opposite.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from flynn.memory.extraction import ProposedFact
from flynn.memory.store import Fact, Facts, FactSource, NewFact

Action = Literal["add", "update", "delete", "noop"]

_POLARITY = ("prefers ", "dislikes ")


@dataclass(frozen=True, slots=True)
class Outcome:
    action: Action
    fact: Fact | None
    replaced: Fact | None = None


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _opposite(value: str) -> str | None:
    lowered = _norm(value)
    for mine, theirs in (_POLARITY, _POLARITY[::-1]):
        if lowered.startswith(mine):
            return theirs + lowered.removeprefix(mine)
    return None


class RuleReconciler:
    """Applies proposed facts to a ``Facts`` store. Each call is one store transaction."""

    def __init__(self, facts: Facts) -> None:
        self._facts = facts

    def apply(
        self,
        namespace: str,
        proposed: ProposedFact,
        *,
        source: FactSource,
        now: datetime,
        session: str | None = None,
        channel: str | None = None,
    ) -> Outcome:
        new = NewFact(
            namespace=namespace,
            kind=proposed.kind,
            field=proposed.field,
            value=proposed.value,
            confidence=proposed.confidence,
            source=source,
            session=session,
            channel=channel,
        )
        if proposed.field is not None:
            current = self._facts.active(namespace, field=proposed.field)
            if not current:
                return Outcome("add", self._facts.add(new, now=now))
            latest = current[0]
            if _norm(latest.value) == _norm(proposed.value):
                return Outcome("noop", latest)
            return Outcome("update", self._facts.supersede(latest.id, new, now=now), latest)

        value = " ".join(proposed.value.split())
        if any(fact.field is None for fact in self._facts.find(namespace, value)):
            return Outcome("noop", None)
        opposite = _opposite(value)
        if opposite is not None:
            for fact in self._facts.find(namespace, opposite):
                if fact.field is None:
                    return Outcome("update", self._facts.supersede(fact.id, new, now=now), fact)
        return Outcome("add", self._facts.add(new, now=now))
