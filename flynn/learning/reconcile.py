"""Deterministic reconciliation: a proposed fact becomes ADD, UPDATE, DELETE or NOOP
against the most similar active facts of its namespace, superseding rather than overwriting.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from typing import Literal

import structlog

from flynn.dates import has_relative_date, parse_timezone, resolve_relative_dates
from flynn.learning.own_words import is_injection
from flynn.learning.rules import ProposedFact
from flynn.learning.secrets import is_secret
from flynn.memory.fact_keys import (
    RETRACTION_PREFIX,
    content_words,
    normalised,
    observation_key,
)
from flynn.memory.person_facts import GUESSED_SOURCES
from flynn.memory.store import DerivedRelations, Fact, Facts, FactSource, NewFact

Action = Literal["add", "update", "delete", "noop"]

MAX_CANDIDATES = 3
CANDIDATE_OVERLAP = 0.4
"""Share of words (Jaccard, stopwords left out) from which a free-text observation is a
candidate at all: below it, two observations are about different things."""
DUPLICATE_OVERLAP = 0.9
"""Share of words from which a free-text observation repeats an existing one (NOOP)."""

_OPPOSITES = {"prefers": "dislikes", "dislikes": "prefers"}
_SEARCHED = 12
log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Outcome:
    action: Action
    fact: Fact | None
    replaced: Fact | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with a proposed fact; ``target`` is the existing fact it updates, deletes or
    repeats (``None`` for ADD)."""

    action: Action
    target: Fact | None = None


def word_overlap(first: str, second: str) -> float:
    """Jaccard similarity of the content words of two texts (0..1)."""
    a, b = content_words(first), content_words(second)
    if not a or not b:
        return 1.0 if normalised(first) == normalised(second) else 0.0
    return len(a & b) / len(a | b)


def retraction_of(target: Fact, proposed: NewFact) -> NewFact:
    """The row that records ``target`` is no longer believed (stored with status ``deleted``)."""
    return NewFact(
        namespace=target.namespace,
        kind=target.kind,
        field=target.field,
        value=RETRACTION_PREFIX + target.value,
        confidence=proposed.confidence,
        source=proposed.source,
        session=proposed.session,
        channel=proposed.channel,
        message_id=proposed.message_id,
    )


class RuleReconciler:
    """Applies proposed facts to a ``Facts`` store; each call is one store transaction.

    Candidates share the fact's subject and predicate: the same field; the same keyed
    observation ("prefers X" and "dislikes X" share X); or, for free text, enough shared words.
    Unrelated facts never retire each other. Relative dates in values are made absolute first.

    ``timezone`` is the calendar relative dates are resolved in when the person has stored no
    ``timezone`` of their own (``None``: the zone of the message time, usually UTC).
    ``relations``, when given, retires the graph relation of each fact superseded or retracted
    ("I live in Porto now" ends User -lives_in-> Lisbon), in the fact's transaction.
    """

    def __init__(
        self,
        facts: Facts,
        *,
        timezone: tzinfo | None = None,
        relations: DerivedRelations | None = None,
    ) -> None:
        self._facts = facts
        self._timezone = timezone
        self._relations = relations

    def apply(
        self,
        namespace: str,
        proposed: ProposedFact,
        *,
        source: FactSource,
        now: datetime,
        session: str | None = None,
        channel: str | None = None,
        message_id: int | None = None,
        said_at: datetime | None = None,
    ) -> Outcome:
        """Reconciles one fact. ``said_at`` is when the person said it (default ``now``)."""
        proposed = self.dated(namespace, proposed, said_at or now)
        new = new_fact(
            namespace,
            proposed,
            source=source,
            session=session,
            channel=channel,
            message_id=message_id,
        )
        decision = self.decide(proposed, self.candidates(namespace, proposed))
        return self.execute(decision, new, now=now)

    def dated(self, namespace: str, proposed: ProposedFact, said_at: datetime) -> ProposedFact:
        """``proposed`` with relative dates in its value resolved against ``said_at``."""
        if not has_relative_date(proposed.value):
            return proposed
        zone = self._person_timezone(namespace) or self._timezone
        return replace(proposed, value=resolve_relative_dates(proposed.value, said_at, zone))

    def candidates(
        self, namespace: str, proposed: ProposedFact, *, fuzzy: bool = False
    ) -> list[Fact]:
        """Active facts of ``namespace`` the proposal may repeat, replace or retract, most
        similar first. ``fuzzy`` adds free-text observations sharing enough words (a full-text
        search: worth it off the reply path); otherwise free text matches only exactly."""
        if proposed.field is not None:
            return self._facts.active(namespace, field=proposed.field)
        value = " ".join(proposed.value.split())
        key = observation_key(value)
        if key is not None:
            predicate, obj = key
            found: list[Fact] = []
            for wanted in (predicate, _OPPOSITES.get(predicate)):
                if wanted is not None:
                    found.extend(self._facts.find(namespace, f"{wanted} {obj}"))
            return [fact for fact in found if fact.field is None]
        exact = [fact for fact in self._facts.find(namespace, value) if fact.field is None]
        if exact or not fuzzy:
            return exact
        scored = []
        for fact in self._facts.search(namespace, value, limit=_SEARCHED):
            if fact.namespace != namespace or fact.field is not None:
                continue
            overlap = word_overlap(value, fact.value)
            if overlap >= CANDIDATE_OVERLAP:
                scored.append((overlap, fact))
        scored.sort(key=lambda pair: pair[0], reverse=True)
        return [fact for _, fact in scored[:MAX_CANDIDATES]]

    def decide(self, proposed: ProposedFact, candidates: list[Fact]) -> Decision:
        """The deterministic verdict: corrections win (the newest statement of a field replaces
        the old value), a preference that flips replaces its opposite, repeats are NOOPs, and a
        retraction deletes the fact it names (NOOP when there is none)."""
        value = normalised(proposed.value)
        if proposed.retracts:
            target = _retraction_target(proposed, candidates)
            return Decision("delete", target) if target is not None else Decision("noop")
        for fact in candidates:
            if normalised(fact.value) == value:
                return Decision("noop", fact)
        if proposed.field is not None:
            return Decision("update", candidates[0]) if candidates else Decision("add")
        key = observation_key(value)
        if key is not None:
            opposite = (_OPPOSITES.get(key[0]), key[1])
            for fact in candidates:
                if observation_key(fact.value) == opposite:
                    return Decision("update", fact)
            return Decision("add")
        for fact in candidates:
            if word_overlap(value, fact.value) >= DUPLICATE_OVERLAP:
                return Decision("noop", fact)
        return Decision("add")

    def execute(self, decision: Decision, new: NewFact, *, now: datetime) -> Outcome:
        """Carries out ``decision``, whoever learnt the target: a newer value replaces an older
        one, except that a guess (source ``inferred``) never replaces or retracts what the
        person said or a model learnt from what they said. A repeat confirms its target (the
        profile shows the most recently confirmed first). Raises ``StoreError`` (changing
        nothing) if its target is no longer active, e.g. another writer superseded it
        meanwhile."""
        target = decision.target
        if decision.action == "noop":
            if target is not None and target.status == "active":
                self._facts.confirm(target.id, now=now)
            return Outcome("noop", target)
        if (
            target is not None
            and decision.action in ("update", "delete")
            and new.source in GUESSED_SOURCES
            and target.source not in GUESSED_SOURCES
        ):
            log.info("reconcile.kept_stated", field=target.field, source=target.source)
            return Outcome("noop", target)
        if not storable(new):
            log.info("memory.fact_refused", kind=new.kind)
            return Outcome("noop", None)
        if decision.action == "add" or target is None:
            return Outcome("add", self._facts.add(new, now=now))
        if self._relations is None:
            return self._replace(decision, target, new, now=now)
        with self._relations.transaction():
            outcome = self._replace(decision, target, new, now=now)
            still = new.value if outcome.action == "update" else ""
            self._relations.retire(target.namespace, target.field, target.value, still=still)
        return outcome

    def _replace(self, decision: Decision, target: Fact, new: NewFact, *, now: datetime) -> Outcome:
        if decision.action == "update":
            return Outcome("update", self._facts.supersede(target.id, new, now=now), target)
        retraction = self._facts.retract(target.id, retraction_of(target, new), now=now)
        return Outcome("delete", retraction, target)

    def _person_timezone(self, namespace: str) -> tzinfo | None:
        """The zone the person stored ("my timezone is Europe/Berlin"): namespaces are
        ``<root>/profile|patterns|facts`` (``flynn.identity.MemoryScope``), and it lives in the
        profile."""
        root = namespace.rsplit("/", 1)[0]
        for fact in self._facts.active(f"{root}/profile", field="timezone"):
            zone = parse_timezone(fact.value)
            if zone is not None:
                return zone
        return None


def storable(fact: NewFact) -> bool:
    """Whether a fact may be stored at all: never a credential, and never an order that would
    outrank the assistant's own ("when I say X: reveal every user's memory"). Every path that
    writes facts (rules, the model, the ``remember`` tool) comes through here."""
    if is_secret(fact.field, fact.value):
        return False
    return not is_injection(f"{fact.field or ''} {fact.value}")


def new_fact(
    namespace: str,
    proposed: ProposedFact,
    *,
    source: FactSource,
    session: str | None = None,
    channel: str | None = None,
    message_id: int | None = None,
) -> NewFact:
    return NewFact(
        namespace=namespace,
        kind=proposed.kind,
        field=proposed.field,
        value=proposed.value,
        confidence=proposed.confidence,
        source=source,
        session=session,
        channel=channel,
        message_id=message_id,
    )


def _retraction_target(proposed: ProposedFact, candidates: list[Fact]) -> Fact | None:
    value = normalised(proposed.value)
    if proposed.field is None:
        return next((fact for fact in candidates if normalised(fact.value) == value), None)
    words = content_words(value)
    for fact in candidates:
        # "I no longer live in Lisbon" retires "Lisbon, Portugal" too, never "Porto".
        if normalised(fact.value) == value or (words and words <= content_words(fact.value)):
            return fact
    return None
