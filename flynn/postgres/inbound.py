"""Durable intake in PostgreSQL: ``InboundLog`` on the ``intake`` table, the statements of
``flynn.memory.inbound`` with psycopg's parameters. Several workers may accept the same
message at once: one runs its turn, the others are told it is pending."""

from __future__ import annotations

from flynn.memory.inbound import SqlInboundLog, inbound_dialect
from flynn.postgres.database import PostgresDatabase, aware, psycopg_statement, utc

POSTGRES_INBOUND = inbound_dialect(psycopg_statement, aware, utc)


class PostgresInboundLog(SqlInboundLog):
    """``InboundLog`` on PostgreSQL's ``intake`` table."""

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__(db, POSTGRES_INBOUND)
