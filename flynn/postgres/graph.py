"""The knowledge graph in PostgreSQL: ``Graph`` on the ``entities``, ``relations`` and
``entity_mentions`` tables, the statements of ``flynn.memory.graph`` with psycopg's parameters
and arrays for lists."""

from __future__ import annotations

from collections.abc import Sequence

from flynn.memory.graph import SqlGraph, graph_dialect
from flynn.postgres.database import PostgresDatabase, aware, psycopg_statement, utc


def _array(values: Sequence[object]) -> list[object]:
    return list(values)


POSTGRES_GRAPH = graph_dialect(
    named=psycopg_statement,
    placeholder="%s",
    keys="unnest(:keys::text[]) AS k(value) JOIN",
    frontier="= ANY(:frontier::bigint[])",
    unindexed="",
    time=aware,
    stored_time=utc,
    key_list=_array,
    id_list=_array,
)


class PostgresGraph(SqlGraph):
    """``Graph`` on PostgreSQL's graph tables."""

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__(db, POSTGRES_GRAPH)
