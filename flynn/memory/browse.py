"""Bounded reads for looking at one person's memory (the gateway's memory page): their newest
active facts with how many there are, and the entities of their knowledge graph, most mentioned
first. Every read filters by namespace in SQL and stops at its limit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from flynn.memory.database import Database
from flynn.memory.facts import FACT_COLUMNS, fact_from_row
from flynn.memory.graph import ENTITY_COLUMNS, entity_from_row
from flynn.memory.graph_store import Entity
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.store import Fact

_IN_NAMESPACES = "namespace IN (SELECT value FROM json_each(?)) AND status = 'active'"
_NEWEST_FACTS = (
    f"SELECT {FACT_COLUMNS} FROM facts WHERE {_IN_NAMESPACES} "
    "ORDER BY created_at DESC, id DESC LIMIT ?"
)
_COUNT_FACTS = f"SELECT count(*) FROM facts WHERE {_IN_NAMESPACES}"
_ENTITIES = (
    f"SELECT {ENTITY_COLUMNS} FROM entities WHERE {namespace_scope('namespace')} "
    "ORDER BY mentions DESC, confidence DESC, id LIMIT ?"
)
_ENTITY = f"SELECT {ENTITY_COLUMNS} FROM entities WHERE id = ?"


@dataclass(frozen=True, slots=True)
class NewestFacts:
    """The newest ``facts`` (newest first) of ``total`` active ones."""

    facts: tuple[Fact, ...]
    total: int


class SqliteMemoryBrowser:
    """What the memory page reads beyond the stores' own calls."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def newest_facts(self, namespaces: Sequence[str], *, limit: int) -> NewestFacts:
        """The newest ``limit`` active facts of exactly these namespaces, and how many active
        facts they hold in all."""
        wanted = json.dumps(list(namespaces))
        rows = self._db.fetchall(_NEWEST_FACTS, (wanted, limit)) if limit > 0 else []
        count = self._db.fetchone(_COUNT_FACTS, (wanted,))
        return NewestFacts(tuple(fact_from_row(row) for row in rows), int(count[0]) if count else 0)

    def entities(self, namespace_prefix: str, *, limit: int) -> list[Entity]:
        """The entities under ``namespace_prefix``, most mentioned first."""
        if limit <= 0:
            return []
        rows = self._db.fetchall(_ENTITIES, (*scope_params(namespace_prefix), limit))
        return [entity_from_row(row) for row in rows]

    def entity(self, entity_id: int) -> Entity | None:
        row = self._db.fetchone(_ENTITY, (entity_id,))
        return None if row is None else entity_from_row(row)
