"""Each person's own gateway tokens in PostgreSQL: ``person_tokens`` keeps SHA-256 digests only,
as ``flynn.memory.person_tokens`` does in SQLite, so every worker checks a ``hello`` alike."""

from __future__ import annotations

from flynn.memory.person_tokens import SqlPersonTokens, tokens_dialect
from flynn.postgres.database import PostgresDatabase, aware, psycopg_statement, utc

POSTGRES_TOKENS = tokens_dialect(psycopg_statement, aware, utc)


class PostgresPersonTokens(SqlPersonTokens):
    """People's gateway tokens in PostgreSQL's ``person_tokens`` table."""

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__(db, POSTGRES_TOKENS)
