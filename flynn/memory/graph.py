"""The knowledge graph in SQLite: entities, typed relations and the messages that mention them.

Identity is ``(namespace, name_key)``; the key comes from ``graph_names``, as do text lookups.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from flynn.credentials import redact
from flynn.errors import StoreError
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.graph_names import GENERIC_TYPE, candidate_keys, name_key, type_name
from flynn.memory.graph_store import Entity, Relation
from flynn.memory.namespaces import namespace_scope, scope_params

MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 500
MAX_VISITED = 10_000
"""Bound on the entities one ``path`` search visits, so a hub cannot make it unbounded."""

ENTITY_COLUMNS = "id, namespace, name, type, description, confidence, mentions, updated_at"
_E_COLUMNS = ", ".join(f"e.{column.strip()}" for column in ENTITY_COLUMNS.split(","))

# In DO UPDATE every bare column is the stored value, so each CASE compares old with new.
# A lower-case name is replaced by a capitalised spelling of it: "maya" from a lower-case message
# first, then "Maya" shows as Maya.
_UPSERT = f"""
INSERT INTO entities (namespace, name, name_key, type, description, confidence, mentions,
                      created_at, updated_at)
VALUES (:namespace, :name, :key, :type, :description, :confidence, 1, :now, :now)
ON CONFLICT (namespace, name_key) DO UPDATE SET
    name = CASE WHEN name = lower(name) AND excluded.name != lower(excluded.name)
                THEN excluded.name ELSE name END,
    type = CASE WHEN excluded.type = '{GENERIC_TYPE}' THEN type
                WHEN type = '{GENERIC_TYPE}' OR excluded.confidence > confidence
                THEN excluded.type ELSE type END,
    description = coalesce(excluded.description, description),
    confidence = max(confidence, excluded.confidence),
    mentions = mentions + 1,
    updated_at = excluded.updated_at
RETURNING {ENTITY_COLUMNS}
"""
_FIND = f"SELECT {ENTITY_COLUMNS} FROM entities WHERE namespace = ? AND name_key = ?"
# The key list drives the join: one seek of entities_name_key per candidate n-gram. The unary
# plus keeps the planner from walking the namespace's entities instead.
_ENTITIES_IN = f"""
SELECT {_E_COLUMNS}
FROM json_each(?) AS k CROSS JOIN entities AS e ON e.name_key = k.value
WHERE {namespace_scope("+e.namespace")}
ORDER BY e.confidence DESC, e.mentions DESC, e.id
LIMIT ?
"""
# The SELECT form inserts nothing when either end is missing or in another namespace. It needs a
# WHERE clause for SQLite to parse the ON CONFLICT that follows.
_RELATE = """
INSERT INTO relations (namespace, source_id, target_id, type, confidence, created_at, updated_at)
SELECT s.namespace, s.id, t.id, :type, :confidence, :now, :now
FROM entities AS s, entities AS t
WHERE s.id = :source AND t.id = :target AND s.namespace = :namespace AND t.namespace = :namespace
ON CONFLICT (source_id, target_id, type) DO UPDATE SET
    confidence = max(confidence, excluded.confidence),
    updated_at = excluded.updated_at
RETURNING id
"""
_SELECT_RELATIONS = """
SELECT r.id, r.namespace, r.source_id, r.target_id, r.type, r.confidence, r.updated_at,
       s.name AS source_name, t.name AS target_name
FROM relations AS r
JOIN entities AS s ON s.id = r.source_id
JOIN entities AS t ON t.id = r.target_id
"""
_RELATION = _SELECT_RELATIONS + "WHERE r.id = ?"
_RELATIONS_OF = (
    _SELECT_RELATIONS
    + """
WHERE r.id IN (SELECT id FROM relations WHERE source_id = :id
               UNION ALL SELECT id FROM relations WHERE target_id = :id)
ORDER BY r.confidence DESC, r.updated_at DESC, r.id DESC
LIMIT :limit
"""
)
# One BFS level: every relation touching the frontier, with the entity on the far side. The unary
# plus keeps SQLite from reading the whole namespace through relations_namespace instead.
_NEIGHBOURS = """
SELECT id, source_id AS near, target_id AS far, confidence FROM relations
WHERE source_id IN (SELECT value FROM json_each(:frontier)) AND +namespace = :namespace
UNION ALL
SELECT id, target_id, source_id, confidence FROM relations
WHERE target_id IN (SELECT value FROM json_each(:frontier)) AND +namespace = :namespace
ORDER BY confidence DESC, id
"""
_MENTION = "INSERT OR IGNORE INTO entity_mentions (entity_id, message_id) VALUES (?, ?)"
_MENTIONING = (
    "SELECT message_id FROM entity_mentions WHERE entity_id = ? ORDER BY message_id DESC LIMIT ?"
)
_UNRELATE = (
    "DELETE FROM relations WHERE namespace = ? AND source_id = ? AND target_id = ? AND type = ?"
)
_FORGET_RELATIONS = f"DELETE FROM relations WHERE {namespace_scope('namespace')}"
# Mentions go with their entities (ON DELETE CASCADE).
_FORGET_ENTITIES = f"DELETE FROM entities WHERE {namespace_scope('namespace')}"


class SqliteGraph:
    """``Graph`` on the ``entities``, ``relations`` and ``entity_mentions`` tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._db.transaction():
            yield

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
        """Creates or updates the entity named ``name`` (any case); see ``Graph.upsert_entity``.

        Raises ``ValueError`` for a name without words or holding a credential, or a
        confidence outside 0..1.
        """
        name = " ".join(name.split())[:MAX_NAME_CHARS]
        key = name_key(name)
        if not key:
            raise ValueError(f"not a name: {name!r}")
        if redact(name)[1]:
            raise ValueError("a credential is never a name")  # the name itself left unsaid
        _check_confidence(confidence)
        if description is not None:
            description = " ".join(redact(description)[0].split())[:MAX_DESCRIPTION_CHARS] or None
        row = self._db.fetchone(
            _UPSERT,
            {
                "namespace": namespace,
                "name": name,
                "key": key,
                "type": type_name(type) or GENERIC_TYPE,
                "description": description,
                "confidence": confidence,
                "now": encode_time(now),
            },
        )
        if row is None:
            raise StoreError("entity upsert returned no row")
        return entity_from_row(row)

    def find(self, namespace: str, name: str) -> Entity | None:
        row = self._db.fetchone(_FIND, (namespace, name_key(name)))
        return None if row is None else entity_from_row(row)

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
        """Creates ``source -type-> target`` or raises its confidence; see ``Graph.relate``."""
        relation_type = type_name(type)
        if not relation_type:
            raise ValueError(f"not a relation type: {type!r}")
        if source_id == target_id:
            raise ValueError(f"entity {source_id} cannot be related to itself")
        _check_confidence(confidence)
        params = {
            "namespace": namespace,
            "source": source_id,
            "target": target_id,
            "type": relation_type,
            "confidence": confidence,
            "now": encode_time(now),
        }
        with self._db.transaction():
            inserted = self._db.fetchone(_RELATE, params)
            if inserted is None:
                raise StoreError(
                    f"cannot relate entities {source_id} and {target_id}: "
                    f"missing, or not both in {namespace!r}"
                )
            row = self._db.fetchone(_RELATION, (inserted["id"],))
        if row is None:
            raise StoreError("relation vanished while it was written")
        return _relation(row)

    def unrelate(self, namespace: str, source_id: int, target_id: int, type: str) -> bool:
        """Deletes ``source -type-> target``; see ``Graph.unrelate``."""
        params = (namespace, source_id, target_id, type_name(type))
        return self._db.execute(_UNRELATE, params) > 0

    def mention(self, entity_id: int, message_id: int) -> None:
        self._db.execute(_MENTION, (entity_id, message_id))

    def entities_in(self, namespace_prefix: str, text: str, *, limit: int) -> list[Entity]:
        """Entities under the prefix named in ``text`` (any case); see ``Graph.entities_in``."""
        if limit <= 0:
            return []
        keys = candidate_keys(text)  # remembered for the last texts
        if not keys:
            return []
        params = (json.dumps(list(keys)), *scope_params(namespace_prefix), limit)
        return [entity_from_row(row) for row in self._db.fetchall(_ENTITIES_IN, params)]

    def relations_of(self, entity_id: int, *, limit: int) -> list[Relation]:
        if limit <= 0:
            return []
        rows = self._db.fetchall(_RELATIONS_OF, {"id": entity_id, "limit": limit})
        return [_relation(row) for row in rows]

    def path(
        self, namespace: str, from_id: int, to_id: int, *, max_depth: int = 4
    ) -> list[Relation]:
        """A shortest chain of relations from ``from_id`` to ``to_id``; see ``Graph.path``.

        Breadth-first, one query per level; gives up past ``MAX_VISITED`` entities.
        """
        if from_id == to_id:
            return []
        # entity -> (relation that reached it, entity it was reached from)
        reached: dict[int, tuple[int, int]] = {from_id: (0, 0)}
        frontier = [from_id]
        for _ in range(max_depth):
            params = {"frontier": json.dumps(frontier), "namespace": namespace}
            following: list[int] = []
            for row in self._db.fetchall(_NEIGHBOURS, params):
                far = int(row["far"])
                if far in reached:
                    continue
                reached[far] = (int(row["id"]), int(row["near"]))
                if far == to_id:
                    return self._walk_back(reached, to_id)
                following.append(far)
            if not following or len(reached) > MAX_VISITED:
                return []
            frontier = following
        return []

    def messages_mentioning(self, entity_ids: Sequence[int], *, limit: int) -> list[int]:
        """Newest first; see ``Graph.messages_mentioning``.

        One bounded index scan per entity, merged here: a single ``IN`` query would sort every
        mention of a much-mentioned entity before applying the limit.
        """
        if limit <= 0:
            return []
        runs = [
            [int(row[0]) for row in self._db.fetchall(_MENTIONING, (entity_id, limit))]
            for entity_id in dict.fromkeys(entity_ids)
        ]
        newest: list[int] = []
        for message_id in heapq.merge(*runs, reverse=True):
            if not newest or newest[-1] != message_id:
                newest.append(message_id)
                if len(newest) == limit:
                    break
        return newest

    def forget(self, namespace_prefix: str) -> int:
        """Deletes entities, relations and mentions under the prefix; returns how many entities."""
        scope = scope_params(namespace_prefix)
        with self._db.transaction():
            self._db.execute(_FORGET_RELATIONS, scope)
            return self._db.execute(_FORGET_ENTITIES, scope)

    def _walk_back(self, reached: dict[int, tuple[int, int]], to_id: int) -> list[Relation]:
        relation_ids: list[int] = []
        node = to_id
        while True:
            relation_id, previous = reached[node]
            if not relation_id:
                break
            relation_ids.append(relation_id)
            node = previous
        relations = []
        for relation_id in reversed(relation_ids):
            row = self._db.fetchone(_RELATION, (relation_id,))
            if row is None:
                raise StoreError(f"relation {relation_id} vanished during a path search")
            relations.append(_relation(row))
        return relations


def _check_confidence(confidence: float) -> None:
    if not 0.0 <= confidence <= 1.0:
        raise ValueError(f"confidence {confidence!r} is outside 0..1")


def entity_from_row(row: sqlite3.Row) -> Entity:
    """An entity from a row of ``ENTITY_COLUMNS``."""
    return Entity(
        id=row["id"],
        namespace=row["namespace"],
        name=row["name"],
        type=row["type"],
        description=row["description"],
        # RETURNING hands back a whole-number REAL as an int; the dataclass promises a float.
        confidence=float(row["confidence"]),
        mentions=row["mentions"],
        updated_at=decode_time(row["updated_at"]),
    )


def _relation(row: sqlite3.Row) -> Relation:
    return Relation(
        id=row["id"],
        namespace=row["namespace"],
        source_id=row["source_id"],
        target_id=row["target_id"],
        type=row["type"],
        confidence=float(row["confidence"]),
        updated_at=decode_time(row["updated_at"]),
        source_name=row["source_name"],
        target_name=row["target_name"],
    )
