"""Telegram's webhook updates claimed once across workers in PostgreSQL: ``TelegramUpdates`` on the
``telegram_updates`` table, as ``flynn.memory.telegram_updates`` keeps them in SQLite."""

from __future__ import annotations

from datetime import timedelta

from flynn.memory.telegram_updates import SqlTelegramUpdates, UpdatesDialect
from flynn.postgres.database import PostgresDatabase, aware

POSTGRES_UPDATES = UpdatesDialect(statement=lambda sql: sql.replace("?", "%s"), time=aware)


class PostgresTelegramUpdates(SqlTelegramUpdates):
    """``TelegramUpdates`` on PostgreSQL's ``telegram_updates`` table."""

    def __init__(self, db: PostgresDatabase, *, lease: timedelta = timedelta(minutes=5)) -> None:
        super().__init__(db, POSTGRES_UPDATES, lease=lease)
