"""Feeding the knowledge graph: each stored user message (rule extraction, plus the known names it
mentions) and each LLM-extracted proposal land as one transaction of upserts and mention links.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from flynn.credentials import is_secret, redact
from flynn.learning.graph_extraction import GraphProposal
from flynn.memory.graph_names import GENERIC_TYPE, USER_ENTITY, candidate_keys, name_key, spoken
from flynn.memory.graph_store import Entity, Graph
from flynn.memory.store import StoredMessage

RULE_CONFIDENCE = 0.5
"""For rule proposals that carry none of their own (rules set theirs: 0.5 .. 0.9)."""

MAX_KNOWN_PER_MESSAGE = 10
"""Known entities a message can be linked to besides the ones extracted from it."""

_USER_KEY = name_key(USER_ENTITY)


class GraphExtractor(Protocol):
    def extract(self, text: str) -> GraphProposal: ...


class GraphIngestor:
    """Writes what a message says into the graph. Each call is one transaction, rolled back
    whole if any write fails (the ``StoreError`` propagates)."""

    def __init__(self, graph: Graph, extractor: GraphExtractor) -> None:
        self._graph = graph
        self._extractor = extractor

    def ingest(
        self, namespace: str, text: str, message_id: int | None, *, now: datetime
    ) -> list[Entity]:
        """Upserts the entities and relations the rules find in ``text``, bumps the known entities
        it names, and links them all to the stored message ``message_id`` (when given).

        Returns the entities touched, the extracted ones first.
        """
        text = redact(text)[0]  # 'my password is Hunter2Secret' names no one
        proposal = self._extractor.extract(text)
        if proposal.is_empty and not self._known(namespace, text):
            return []  # nothing to write: no transaction, no write lock
        with self._graph.transaction():
            # Looked up before the upserts, so the limit is spent on entities only the
            # lookup can find ("maya" written in lower case, a name without a cue).
            known = self._known(namespace, text)
            touched = self._apply(
                namespace, proposal, message_id, now=now, confidence=RULE_CONFIDENCE
            )
            for entity in known:
                key = name_key(entity.name)
                if key in touched:
                    continue
                # Upserting it as it is only counts the sighting.
                touched[key] = self._graph.upsert_entity(
                    namespace,
                    entity.name,
                    entity.type,
                    confidence=entity.confidence,
                    now=now,
                )
                if message_id is not None:
                    self._graph.mention(entity.id, message_id)
        return list(touched.values())

    def _known(self, namespace: str, text: str) -> list[Entity]:
        """The entities of ``namespace`` that ``text`` names (the person themself aside)."""
        found = spoken(text, self._graph.entities_in(namespace, text, limit=MAX_KNOWN_PER_MESSAGE))
        return [
            entity
            for entity in found
            if entity.namespace == namespace and name_key(entity.name) != _USER_KEY
        ]

    def ingest_proposal(
        self,
        namespace: str,
        proposal: GraphProposal,
        message_id: int | None,
        *,
        now: datetime,
        confidence: float,
    ) -> list[Entity]:
        """Upserts an (LLM-extracted) proposal, linking its entities to ``message_id`` when
        given; ``confidence`` applies where the proposal gives none. Returns the entities."""
        with self._graph.transaction():
            touched = self._apply(namespace, proposal, message_id, now=now, confidence=confidence)
        return list(touched.values())

    def ingest_batch(
        self,
        namespace: str,
        proposal: GraphProposal,
        messages: Sequence[StoredMessage],
        *,
        now: datetime,
        confidence: float,
    ) -> list[Entity]:
        """Upserts what the model proposed from a batch of ``messages``, linking each entity to
        the person's messages of the batch that name it; one transaction. Returns the entities."""
        with self._graph.transaction():
            touched = self._apply(namespace, proposal, None, now=now, confidence=confidence)
            named = [entity for key, entity in touched.items() if key != _USER_KEY]
            for message in messages:
                if message.role == "user":
                    for entity in spoken(message.content, _named_in(message.content, named)):
                        self._graph.mention(entity.id, message.id)
        return list(touched.values())

    def _apply(
        self,
        namespace: str,
        proposal: GraphProposal,
        message_id: int | None,
        *,
        now: datetime,
        confidence: float,
    ) -> dict[str, Entity]:
        touched: dict[str, Entity] = {}
        for proposed in proposal.entities:
            key = name_key(proposed.name)
            if not key or is_secret(None, proposed.name):
                continue  # a credential is never a name (the graph store refuses it too)
            touched[key] = self._graph.upsert_entity(
                namespace,
                proposed.name,
                proposed.type,
                description=proposed.description,
                confidence=_or(proposed.confidence, confidence),
                now=now,
            )
        for relation in proposal.relations:
            ends = []
            for name in (relation.source, relation.target):
                key = "" if is_secret(None, name) else name_key(name)
                if key and key not in touched:
                    kind = "person" if key == _USER_KEY else GENERIC_TYPE
                    touched[key] = self._graph.upsert_entity(
                        namespace, name, kind, confidence=confidence, now=now
                    )
                ends.append(touched.get(key))
            source, target = ends
            if source is None or target is None or source.id == target.id:
                continue
            self._graph.relate(
                namespace,
                source.id,
                target.id,
                relation.type,
                confidence=_or(relation.confidence, confidence),
                now=now,
            )
        if message_id is not None:
            for key, entity in touched.items():
                if key != _USER_KEY:
                    self._graph.mention(entity.id, message_id)
        return touched


def _named_in(text: str, entities: Sequence[Entity]) -> list[Entity]:
    """The ``entities`` whose names ``text`` holds as whole words (any case)."""
    keys = candidate_keys(text)
    return [entity for entity in entities if name_key(entity.name) in keys]


def _or(value: float | None, default: float) -> float:
    return default if value is None else value
