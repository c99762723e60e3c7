"""Bounded reads for looking at one person's memory (the gateway's memory page): their newest
active facts with how many there are, and the entities of their knowledge graph, most mentioned
first. Every read filters by namespace in SQL and stops at its limit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from flynn.memory.database import Database
from flynn.memory.facts import FACT_COLUMNS, fact_from_row
from flynn.memory.graph import ENTITY_COLUMNS, entity_from_row
from flynn.memory.graph_store import Entity
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.sql import Sql
from flynn.memory.store import Fact

_IN_NAMESPACES = "namespace IN (SELECT value FROM json_each(?)) AND status = 'active'"


@dataclass(frozen=True, slots=True)
class BrowseDialect:
    """One backend's statements for ``SqlMemoryBrowser`` (``browse_dialect``), and how it passes
    a list of namespaces and reads rows."""

    newest_facts: str
    count_facts: str
    entities: str
    entity: str
    names: Callable[[Sequence[str]], object]
    fact: Callable[[Any], Fact]
    entity_row: Callable[[Any], Entity]


def browse_dialect(
    *,
    in_namespaces: str,
    parameters: Callable[[str], str],
    names: Callable[[Sequence[str]], object],
    fact: Callable[[Any], Fact],
    entity_row: Callable[[Any], Entity],
) -> BrowseDialect:
    """The statements for one backend: ``in_namespaces`` matches the active facts of a list
    of namespaces (one parameter, passed through ``names``); ``parameters`` turns ``?`` into
    the backend's."""
    return BrowseDialect(
        newest_facts=parameters(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE {in_namespaces} "
            "ORDER BY created_at DESC, id DESC LIMIT ?"
        ),
        count_facts=parameters(f"SELECT count(*) AS n FROM facts WHERE {in_namespaces}"),
        entities=parameters(
            f"SELECT {ENTITY_COLUMNS} FROM entities WHERE {namespace_scope('namespace')} "
            "ORDER BY mentions DESC, confidence DESC, id LIMIT ?"
        ),
        entity=parameters(f"SELECT {ENTITY_COLUMNS} FROM entities WHERE id = ?"),
        names=names,
        fact=fact,
        entity_row=entity_row,
    )


SQLITE_BROWSE = browse_dialect(
    in_namespaces=_IN_NAMESPACES,
    parameters=lambda statement: statement,
    names=lambda namespaces: json.dumps(list(namespaces)),
    fact=fact_from_row,
    entity_row=entity_from_row,
)


@dataclass(frozen=True, slots=True)
class NewestFacts:
    """The newest ``facts`` (newest first) of ``total`` active ones."""

    facts: tuple[Fact, ...]
    total: int


class MemoryBrowsing(Protocol):
    """What the memory page reads beyond the stores' own calls."""

    def newest_facts(self, namespaces: Sequence[str], *, limit: int) -> NewestFacts:
        """The newest ``limit`` active facts of exactly these namespaces, and how many active
        facts they hold in all."""
        ...

    def entities(self, namespace_prefix: str, *, limit: int) -> list[Entity]:
        """The entities under ``namespace_prefix``, most mentioned first."""
        ...

    def entity(self, entity_id: int) -> Entity | None: ...


class SqlMemoryBrowser:
    """``MemoryBrowsing`` on either backend's ``facts`` and ``entities`` tables."""

    def __init__(self, db: Sql, dialect: BrowseDialect) -> None:
        self._db = db
        self._sql = dialect

    def newest_facts(self, namespaces: Sequence[str], *, limit: int) -> NewestFacts:
        wanted = self._sql.names(namespaces)
        rows = self._db.fetchall(self._sql.newest_facts, (wanted, limit)) if limit > 0 else []
        count = self._db.fetchone(self._sql.count_facts, (wanted,))
        return NewestFacts(
            tuple(self._sql.fact(row) for row in rows), int(count["n"]) if count else 0
        )

    def entities(self, namespace_prefix: str, *, limit: int) -> list[Entity]:
        if limit <= 0:
            return []
        rows = self._db.fetchall(self._sql.entities, (*scope_params(namespace_prefix), limit))
        return [self._sql.entity_row(row) for row in rows]

    def entity(self, entity_id: int) -> Entity | None:
        row = self._db.fetchone(self._sql.entity, (entity_id,))
        return None if row is None else self._sql.entity_row(row)


class SqliteMemoryBrowser(SqlMemoryBrowser):
    """``MemoryBrowsing`` on SQLite."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, SQLITE_BROWSE)
