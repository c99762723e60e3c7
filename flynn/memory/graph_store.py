"""The knowledge graph's seam: the ``Graph`` Protocol and the entities and relations it returns
(``SqliteGraph`` in ``flynn.memory.graph`` implements it). Like ``flynn.memory.store``, what is
above ``flynn.memory`` talks to this, never to SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Entity:
    """A node of the knowledge graph: a person, place, project, tool ... named in conversation.

    ``mentions`` counts the times it was seen (created or upserted again)."""

    id: int
    namespace: str
    name: str
    type: str
    description: str | None
    confidence: float
    mentions: int
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Relation:
    """A typed edge ``source -type-> target`` between two entities of one namespace; the names
    are carried along so a relation can be shown without another lookup."""

    id: int
    namespace: str
    source_id: int
    target_id: int
    type: str
    confidence: float
    updated_at: datetime
    source_name: str
    target_name: str


class Graph(Protocol):
    """The knowledge graph. Names are identified case-insensitively within a namespace;
    types are lower-case words (``person``, ``works_at``); confidences lie in 0..1."""

    def transaction(self) -> AbstractContextManager[None]:
        """Makes the calls inside the block one transaction (nested blocks are savepoints)."""
        ...

    def upsert_entity(
        self,
        namespace: str,
        name: str,
        type: str,
        *,
        description: str | None = None,
        confidence: float,
        now: datetime,
    ) -> Entity:
        """Creates the entity, or updates the one with the same name (any case): confidence
        becomes the larger of the two, ``mentions`` grows by one, a given description replaces
        the old, and a specific type replaces ``thing`` (or a less confident type).

        Raises ``ValueError`` for a name without words or a confidence outside 0..1.
        """
        ...

    def find(self, namespace: str, name: str) -> Entity | None:
        """The entity of exactly this namespace with this name (any case)."""
        ...

    def relate(
        self,
        namespace: str,
        source_id: int,
        target_id: int,
        type: str,
        *,
        confidence: float,
        now: datetime,
    ) -> Relation:
        """Creates ``source -type-> target``, or raises the confidence of the existing one.

        Raises ``ValueError`` for a self-relation, an empty type or a confidence outside 0..1,
        and ``StoreError`` when either entity is missing or outside ``namespace``.
        """
        ...

    def unrelate(self, namespace: str, source_id: int, target_id: int, type: str) -> bool:
        """Deletes ``source -type-> target`` of ``namespace`` (the graph keeps no history of
        relations: one no longer believed goes); ``False`` when there was none."""
        ...

    def mention(self, entity_id: int, message_id: int) -> None:
        """Records that the stored message names the entity (idempotent). The link goes when
        either is deleted. Raises ``StoreError`` if either does not exist."""
        ...

    def entities_in(self, namespace_prefix: str, text: str, *, limit: int) -> list[Entity]:
        """Entities under ``namespace_prefix`` whose names occur in ``text`` as whole words (any
        case), most confident and most mentioned first. One indexed lookup, whatever the size
        of the graph."""
        ...

    def relations_of(self, entity_id: int, *, limit: int) -> list[Relation]:
        """Relations from or to the entity, most confident and most recent first."""
        ...

    def path(
        self, namespace: str, from_id: int, to_id: int, *, max_depth: int = 4
    ) -> list[Relation]:
        """A shortest chain of relations (followed in either direction) leading from ``from_id``
        to ``to_id`` within ``namespace``, at most ``max_depth`` long, in walking order. Empty
        when there is none within reach, or when the two are the same entity."""
        ...

    def messages_mentioning(self, entity_ids: Sequence[int], *, limit: int) -> list[int]:
        """Ids of stored messages naming any of the entities, newest first, without repeats."""
        ...

    def forget(self, namespace_prefix: str) -> int:
        """Deletes entities under the prefix with their relations and mentions, for real;
        returns how many entities."""
        ...
