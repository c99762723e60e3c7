"""The memory page's reads on PostgreSQL: ``flynn.memory.browse``'s statements with psycopg's
parameters, a namespace list as an array."""

from __future__ import annotations

from collections.abc import Sequence

from flynn.memory.browse import SqlMemoryBrowser, browse_dialect
from flynn.memory.graph import entity_from_row
from flynn.memory.graph_store import Entity
from flynn.memory.sql import NamedRow
from flynn.postgres.database import PostgresDatabase, psycopg_statement, utc
from flynn.postgres.facts import POSTGRES_FACTS


def _names(namespaces: Sequence[str]) -> list[str]:
    return list(namespaces)


def _entity(row: NamedRow) -> Entity:
    return entity_from_row(row, utc)


POSTGRES_BROWSE = browse_dialect(
    in_namespaces="namespace = ANY(?::text[]) AND status = 'active'",
    parameters=psycopg_statement,
    names=_names,
    fact=POSTGRES_FACTS.fact,
    entity_row=_entity,
)


class PostgresMemoryBrowser(SqlMemoryBrowser):
    """``MemoryBrowsing`` on PostgreSQL."""

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__(db, POSTGRES_BROWSE)
