"""The graph relation a stored fact stands for ("location = Lisbon" is User -lives_in-> Lisbon), so
a fact that stops being believed takes the relation learnt with it out of the graph.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from flynn.memory.fact_keys import observation_key
from flynn.memory.graph_names import USER_ENTITY, name_key, type_name
from flynn.memory.graph_store import Entity

MAX_TARGETS = 20
"""Entities one fact's value can name (its value is a place, a name, a path: a few words)."""

# Fields whose value is the far end of a relation from the user, as the graph rules type them.
_FIELD_RELATIONS = {
    "location": "lives_in",
    "city": "lives_in",
    "hometown": "from",
    "employer": "works_at",
    "company": "works_at",
    "workplace": "works_at",
}
_OBSERVATION_RELATIONS = {"working on": "works_on"}


@dataclass(frozen=True, slots=True)
class FactRelation:
    """User -``type``-> whatever ``target`` names (the fact's value, or an observation's
    object)."""

    type: str
    target: str


def fact_relation(field: str | None, value: str) -> FactRelation | None:
    """The relation the fact ``field`` = ``value`` (or the observation ``value``) states, or
    ``None`` when it states none the graph holds."""
    if field is None:
        key = observation_key(value)
        if key is not None and key[0] in _OBSERVATION_RELATIONS:
            return FactRelation(_OBSERVATION_RELATIONS[key[0]], key[1])
        return None
    if field in _FIELD_RELATIONS:
        return FactRelation(_FIELD_RELATIONS[field], value)
    # Any other field is a relation of the same name, as the extraction model states both
    # ("dog = Rex" and User -dog-> Rex; ``dog_name`` before the two were one field). Retiring a
    # relation the graph does not hold deletes nothing.
    kind = type_name(field.removesuffix("_name"))
    return FactRelation(kind, value) if kind else None


class RelationGraph(Protocol):
    """What retiring a fact's relation needs of the graph (``SqliteGraph`` is one)."""

    def transaction(self) -> AbstractContextManager[None]: ...

    def find(self, namespace: str, name: str) -> Entity | None: ...

    def entities_in(self, namespace_prefix: str, text: str, *, limit: int) -> list[Entity]: ...

    def unrelate(self, namespace: str, source_id: int, target_id: int, type: str) -> bool: ...


class FactRelations:
    """Retires the graph relations of facts that are superseded or retracted. The graph of a
    facts namespace (``<root>/profile``, ``<root>/facts``, see ``flynn.identity.MemoryScope``)
    is that of ``<root>``, where ``MemoryWriter`` ingests messages."""

    def __init__(self, graph: RelationGraph) -> None:
        self._graph = graph

    def transaction(self) -> AbstractContextManager[None]:
        """The graph's transaction: with ``SqliteMemory`` facts and graph share one database, so
        a fact's change and its relation's retirement land together."""
        return self._graph.transaction()

    def retire(self, namespace: str, field: str | None, value: str, *, still: str = "") -> int:
        """Deletes User -type-> X for each entity X that the fact's value names, except those
        ``still`` (the value replacing it) names too; returns how many relations went."""
        derived = fact_relation(field, value)
        if derived is None:
            return 0
        if (
            field is not None
            and field not in _FIELD_RELATIONS
            and still
            and not _capitalised(still)
        ):
            # "cat = sick" after "cat = Luna" says how Luna is, not that she is another cat: a
            # relative or a pet is replaced only by a name (capitalised, the one signal that
            # needs no word list).
            return 0
        root = namespace.rsplit("/", 1)[0]
        user = self._graph.find(root, USER_ENTITY)
        if user is None:
            return 0
        kept = {name_key(entity.name) for entity in self._named(root, still)}
        return sum(
            self._graph.unrelate(root, user.id, entity.id, derived.type)
            for entity in self._named(root, derived.target)
            if name_key(entity.name) not in kept
        )

    def _named(self, root: str, text: str) -> list[Entity]:
        if not text:
            return []
        found = self._graph.entities_in(root, text, limit=MAX_TARGETS)
        return [entity for entity in found if entity.namespace == root]


def _capitalised(value: str) -> bool:
    """Whether ``value`` opens as a name is written: a capital, not an acronym ("ADHD")."""
    first = value.split()[0] if value.split() else ""
    return first[:1].isupper() and not (len(first) > 1 and first.isupper())
