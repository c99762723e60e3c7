"""The knowledge graph: entities, typed relations and the messages that mention them. The logic
once, on any SQL database (``SqlGraph``), and SQLite's statements (``SqliteGraph``).

Identity is ``(namespace, name_key)``; the key comes from ``graph_names``, as do text lookups.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flynn.credentials import redact
from flynn.errors import StoreError
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.graph_names import GENERIC_TYPE, candidate_keys, name_key, type_name
from flynn.memory.graph_store import Entity, Relation
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.sql import NamedRow, TransactionalSql

MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 500
MAX_VISITED = 10_000
"""Bound on the entities one ``path`` search visits, so a hub cannot make it unbounded."""

ENTITY_COLUMNS = "id, namespace, name, type, description, confidence, mentions, updated_at"
_E_COLUMNS = ", ".join(f"e.{column.strip()}" for column in ENTITY_COLUMNS.split(","))

# The statements, written once with named parameters (``:name``, SQLite's style); ``{keys}``,
# ``{frontier}`` and ``{unindexed}`` are where the backends differ (``graph_dialect``).
# In DO UPDATE every bare column is the stored value, so each CASE compares old with new.
# A lower-case name is replaced by a capitalised spelling of it: "maya" from a lower-case message
# first, then "Maya" shows as Maya.
_UPSERT = f"""
INSERT INTO entities (namespace, name, name_key, type, description, confidence, mentions,
                      created_at, updated_at)
VALUES (:namespace, :name, :key, :type, :description, :confidence, 1, :now, :now)
ON CONFLICT (namespace, name_key) DO UPDATE SET
    name = CASE WHEN entities.name = lower(entities.name)
                     AND excluded.name != lower(excluded.name)
                THEN excluded.name ELSE entities.name END,
    type = CASE WHEN excluded.type = '{GENERIC_TYPE}' THEN entities.type
                WHEN entities.type = '{GENERIC_TYPE}' OR excluded.confidence > entities.confidence
                THEN excluded.type ELSE entities.type END,
    description = coalesce(excluded.description, entities.description),
    confidence = CASE WHEN excluded.confidence > entities.confidence
                      THEN excluded.confidence ELSE entities.confidence END,
    mentions = entities.mentions + 1,
    updated_at = excluded.updated_at
RETURNING {ENTITY_COLUMNS}
"""
_FIND = f"SELECT {ENTITY_COLUMNS} FROM entities WHERE namespace = :namespace AND name_key = :key"
# The key list drives the join: one seek of entities_name_key per candidate n-gram (on SQLite,
# the unary plus keeps the planner from walking the namespace's entities instead).
_ENTITIES_IN = f"""
SELECT {_E_COLUMNS}
FROM {{keys}} entities AS e ON e.name_key = k.value
WHERE ({{unindexed}}e.namespace = :root OR ({{unindexed}}e.namespace >= :below
                               AND {{unindexed}}e.namespace < :after))
ORDER BY e.confidence DESC, e.mentions DESC, e.id
LIMIT :limit
"""
# The SELECT form inserts nothing when either end is missing or in another namespace. It needs a
# WHERE clause for SQLite to parse the ON CONFLICT that follows.
_RELATE = """
INSERT INTO relations (namespace, source_id, target_id, type, confidence, created_at, updated_at)
SELECT s.namespace, s.id, t.id, :type, :confidence, :now, :now
FROM entities AS s, entities AS t
WHERE s.id = :source AND t.id = :target AND s.namespace = :namespace AND t.namespace = :namespace
ON CONFLICT (source_id, target_id, type) DO UPDATE SET
    confidence = CASE WHEN excluded.confidence > relations.confidence
                      THEN excluded.confidence ELSE relations.confidence END,
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
_RELATION = _SELECT_RELATIONS + "WHERE r.id = :id"
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
WHERE source_id {frontier} AND {unindexed}namespace = :namespace
UNION ALL
SELECT id, target_id, source_id, confidence FROM relations
WHERE target_id {frontier} AND {unindexed}namespace = :namespace
ORDER BY confidence DESC, id
"""
_MENTION = """
INSERT INTO entity_mentions (entity_id, message_id) VALUES (:entity, :message)
ON CONFLICT DO NOTHING
"""
_MENTIONING = """
SELECT message_id FROM entity_mentions WHERE entity_id = :entity
ORDER BY message_id DESC LIMIT :limit
"""
_UNRELATE = """
DELETE FROM relations
WHERE namespace = :namespace AND source_id = :source AND target_id = :target AND type = :type
"""
_FORGET_RELATIONS = f"DELETE FROM relations WHERE {namespace_scope('namespace')}"
# Mentions go with their entities (ON DELETE CASCADE).
_FORGET_ENTITIES = f"DELETE FROM entities WHERE {namespace_scope('namespace')}"


@dataclass(frozen=True, slots=True)
class GraphDialect:
    """One backend's statements for ``SqlGraph`` (built by ``graph_dialect``), and how it
    passes times and lists."""

    upsert: str
    find: str
    entities_in: str
    relate: str
    relation: str
    relations_of: str
    neighbours: str
    mention: str
    mentioning: str
    unrelate: str
    forget_relations: str
    forget_entities: str
    time: Callable[[datetime], object]
    """Raises ``ValueError`` for a naive time."""
    stored_time: Callable[[Any], datetime]
    """A stored time, back as an aware ``UTC`` datetime."""
    keys: Callable[[Sequence[str]], object]
    """The parameter ``keys`` of ``entities_in``."""
    ids: Callable[[Sequence[int]], object]
    """The parameter ``frontier`` of ``neighbours``."""


def graph_dialect(
    *,
    named: Callable[[str], str],
    placeholder: str,
    keys: str,
    frontier: str,
    unindexed: str,
    time: Callable[[datetime], object],
    stored_time: Callable[[Any], datetime],
    key_list: Callable[[Sequence[str]], object],
    id_list: Callable[[Sequence[int]], object],
) -> GraphDialect:
    """The statements above for one backend: ``named`` turns ``:name`` into its parameter,
    ``placeholder`` is its positional one; ``keys`` is a table ``k`` of the keys (a ``value``
    column) and the join to ``entities`` (on SQLite, a CROSS JOIN fixes the order);
    ``frontier`` is the condition "among the ids", ``unindexed`` what keeps an index out of a
    condition (or nothing)."""

    def sql(statement: str) -> str:
        return named(statement.format(keys=keys, frontier=frontier, unindexed=unindexed))

    def positional(statement: str) -> str:
        return statement.replace("?", placeholder)

    return GraphDialect(
        upsert=sql(_UPSERT),
        find=sql(_FIND),
        entities_in=sql(_ENTITIES_IN),
        relate=sql(_RELATE),
        relation=sql(_RELATION),
        relations_of=sql(_RELATIONS_OF),
        neighbours=sql(_NEIGHBOURS),
        mention=sql(_MENTION),
        mentioning=sql(_MENTIONING),
        unrelate=sql(_UNRELATE),
        forget_relations=positional(_FORGET_RELATIONS),
        forget_entities=positional(_FORGET_ENTITIES),
        time=time,
        stored_time=stored_time,
        keys=key_list,
        ids=id_list,
    )


def _json(values: Sequence[object]) -> str:
    return json.dumps(list(values))


SQLITE_GRAPH = graph_dialect(
    named=lambda statement: statement,
    placeholder="?",
    keys="json_each(:keys) AS k CROSS JOIN",
    frontier="IN (SELECT value FROM json_each(:frontier))",
    unindexed="+",
    time=encode_time,
    stored_time=decode_time,
    key_list=_json,
    id_list=_json,
)


class SqlGraph:
    """``Graph`` on the ``entities``, ``relations`` and ``entity_mentions`` tables."""

    def __init__(self, db: TransactionalSql, dialect: GraphDialect) -> None:
        self._db = db
        self._sql = dialect

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
            self._sql.upsert,
            {
                "namespace": namespace,
                "name": name,
                "key": key,
                "type": type_name(type) or GENERIC_TYPE,
                "description": description,
                "confidence": confidence,
                "now": self._sql.time(now),
            },
        )
        if row is None:
            raise StoreError("entity upsert returned no row")
        return self._entity(row)

    def find(self, namespace: str, name: str) -> Entity | None:
        row = self._db.fetchone(self._sql.find, {"namespace": namespace, "key": name_key(name)})
        return None if row is None else self._entity(row)

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
            "now": self._sql.time(now),
        }
        with self._db.transaction():
            inserted = self._db.fetchone(self._sql.relate, params)
            if inserted is None:
                raise StoreError(
                    f"cannot relate entities {source_id} and {target_id}: "
                    f"missing, or not both in {namespace!r}"
                )
            row = self._db.fetchone(self._sql.relation, {"id": inserted["id"]})
        if row is None:
            raise StoreError("relation vanished while it was written")
        return self._relation(row)

    def unrelate(self, namespace: str, source_id: int, target_id: int, type: str) -> bool:
        """Deletes ``source -type-> target``; see ``Graph.unrelate``."""
        params = {
            "namespace": namespace,
            "source": source_id,
            "target": target_id,
            "type": type_name(type),
        }
        return self._db.execute(self._sql.unrelate, params) > 0

    def mention(self, entity_id: int, message_id: int) -> None:
        self._db.execute(self._sql.mention, {"entity": entity_id, "message": message_id})

    def entities_in(self, namespace_prefix: str, text: str, *, limit: int) -> list[Entity]:
        """Entities under the prefix named in ``text`` (any case); see ``Graph.entities_in``."""
        if limit <= 0:
            return []
        keys = candidate_keys(text)  # remembered for the last texts
        if not keys:
            return []
        root, below, after = scope_params(namespace_prefix)
        params = {
            "keys": self._sql.keys(list(keys)),
            "root": root,
            "below": below,
            "after": after,
            "limit": limit,
        }
        return [self._entity(row) for row in self._db.fetchall(self._sql.entities_in, params)]

    def relations_of(self, entity_id: int, *, limit: int) -> list[Relation]:
        if limit <= 0:
            return []
        rows = self._db.fetchall(self._sql.relations_of, {"id": entity_id, "limit": limit})
        return [self._relation(row) for row in rows]

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
            params = {"frontier": self._sql.ids(frontier), "namespace": namespace}
            following: list[int] = []
            for row in self._db.fetchall(self._sql.neighbours, params):
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
            [
                int(row["message_id"])
                for row in self._db.fetchall(
                    self._sql.mentioning, {"entity": entity_id, "limit": limit}
                )
            ]
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
            self._db.execute(self._sql.forget_relations, scope)
            return self._db.execute(self._sql.forget_entities, scope)

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
            row = self._db.fetchone(self._sql.relation, {"id": relation_id})
            if row is None:
                raise StoreError(f"relation {relation_id} vanished during a path search")
            relations.append(self._relation(row))
        return relations

    def _entity(self, row: NamedRow) -> Entity:
        return entity_from_row(row, self._sql.stored_time)

    def _relation(self, row: NamedRow) -> Relation:
        return Relation(
            id=row["id"],
            namespace=row["namespace"],
            source_id=row["source_id"],
            target_id=row["target_id"],
            type=row["type"],
            confidence=float(row["confidence"]),
            updated_at=self._sql.stored_time(row["updated_at"]),
            source_name=row["source_name"],
            target_name=row["target_name"],
        )


class SqliteGraph(SqlGraph):
    """``Graph`` on SQLite's ``entities``, ``relations`` and ``entity_mentions`` tables."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, SQLITE_GRAPH)


def _check_confidence(confidence: float) -> None:
    if not 0.0 <= confidence <= 1.0:
        raise ValueError(f"confidence {confidence!r} is outside 0..1")


def entity_from_row(row: NamedRow, stored_time: Callable[[Any], datetime] = decode_time) -> Entity:
    """An entity from a row of ``ENTITY_COLUMNS`` (its time read by ``stored_time``: SQLite's
    by default)."""
    return Entity(
        id=row["id"],
        namespace=row["namespace"],
        name=row["name"],
        type=row["type"],
        description=row["description"],
        # RETURNING hands back a whole-number REAL as an int; the dataclass promises a float.
        confidence=float(row["confidence"]),
        mentions=row["mentions"],
        updated_at=stored_time(row["updated_at"]),
    )
