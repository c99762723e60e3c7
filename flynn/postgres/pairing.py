"""Pairing codes and approved accounts in PostgreSQL, as ``flynn.memory.pairing`` keeps them in
SQLite. Workers asking for codes at once queue on a table lock (readers do not), so no more than
``max_pending`` codes ever wait; a code is spent by one approval only."""

from __future__ import annotations

from datetime import timedelta

from flynn.memory.pairing import CODE_TTL, MAX_PENDING, SqlPairing, pairing_dialect
from flynn.postgres.database import PostgresDatabase, aware, psycopg_statement, utc

# Conflicts with itself and with every write, not with reads; ends with the transaction.
_SERIALISE = "LOCK TABLE pairing_requests IN SHARE ROW EXCLUSIVE MODE"

POSTGRES_PAIRING = pairing_dialect(psycopg_statement, aware, utc, serialise=_SERIALISE)


class PostgresPairing(SqlPairing):
    """Pairing codes (``pairing_requests``) and approved accounts (``approved_accounts``)."""

    def __init__(
        self,
        db: PostgresDatabase,
        *,
        ttl: timedelta = CODE_TTL,
        max_pending: int = MAX_PENDING,
    ) -> None:
        super().__init__(db, POSTGRES_PAIRING, ttl=ttl, max_pending=max_pending)
