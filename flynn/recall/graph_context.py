"""The knowledge-graph block of a prompt: what the graph knows about the names in one message, in
seed 003's "Relevant Knowledge" format, within a character budget.
"""

from __future__ import annotations

from flynn.memory.graph_names import GENERIC_TYPE, spoken
from flynn.memory.graph_store import Entity, Graph, Relation

HEADER = "Relevant Knowledge:"
MAX_CONTEXT_CHARS = 1200
MAX_DESCRIPTION_CHARS = 200


class GraphContextBuilder:
    """Builds the block: the entities the text names (most confident, then most mentioned,
    first), then their relations. Lines that do not fit the budget are left out whole."""

    def __init__(
        self,
        graph: Graph,
        *,
        max_chars: int = MAX_CONTEXT_CHARS,
        max_entities: int = 8,
        relations_per_entity: int = 6,
    ) -> None:
        self._graph = graph
        self._max_chars = max_chars
        self._max_entities = max_entities
        self._relations_per_entity = relations_per_entity

    def build(self, namespace_prefix: str, text: str) -> str:
        """The block for ``text`` from the graph under ``namespace_prefix``, at most ``max_chars``
        long; empty when the text names nothing the graph knows."""
        found = self._graph.entities_in(namespace_prefix, text, limit=self._max_entities)
        entities = spoken(text, found)
        if not entities:
            return ""
        lines = [HEADER]
        used = len(HEADER)

        def add(line: str) -> None:
            nonlocal used
            if used + 1 + len(line) <= self._max_chars:
                lines.append(line)
                used += 1 + len(line)

        for entity in entities:
            # "Go (thing)" says nothing the message did not; its relations may.
            if entity.type != GENERIC_TYPE or entity.description:
                add(_entity_line(entity))
        relations: dict[int, tuple[int, Relation]] = {}
        for entity in entities:
            for relation in self._graph.relations_of(entity.id, limit=self._relations_per_entity):
                relations.setdefault(relation.id, (len(relations), relation))
        # Most confident first; ties keep the order of the entities they came from.
        for _, relation in sorted(
            relations.values(), key=lambda seen: (-seen[1].confidence, seen[0])
        ):
            add(_relation_line(relation))
        return "\n".join(lines) if len(lines) > 1 else ""


def _entity_line(entity: Entity) -> str:
    line = f"- {entity.name}"
    if entity.type != GENERIC_TYPE:
        line += f" ({entity.type.replace('_', ' ')})"
    if entity.description:
        description = entity.description
        if len(description) > MAX_DESCRIPTION_CHARS:
            description = description[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"
        line += f": {description}"
    return line


def _relation_line(relation: Relation) -> str:
    return f"- {relation.source_name} → {relation.type.replace('_', ' ')} → {relation.target_name}"
