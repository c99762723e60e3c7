"""Telegram's webhook updates, each handled once (the ``telegram_updates`` table): a worker claims
an update's id before handling it and marks it done after, so a retried or doubly delivered post
is refused by the table's key, on one worker or several. A claim whose worker died is taken over
once its lease has passed. Ids only: nothing of the message, no secret. Written once for both
backends (``SqliteTelegramUpdates``; ``flynn.postgres.telegram_updates`` on PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from flynn.memory.database import Database, encode_time
from flynn.memory.sql import Sql

UpdateClaim = Literal["claimed", "done", "busy"]
"""What ``claim`` found: ``claimed`` (handle it now), ``done`` (handled before: drop it), or
``busy`` (another post of it is being handled, its lease running: let Telegram try later)."""

# One statement: on PostgreSQL a second worker's insert waits for the first's and then sees its
# fresh claim, so exactly one of them gets a row changed.
_CLAIM = """
INSERT INTO telegram_updates (bot_id, update_id, state, claimed_at) VALUES (?, ?, 'claimed', ?)
ON CONFLICT (bot_id, update_id) DO UPDATE SET claimed_at = excluded.claimed_at
WHERE telegram_updates.state = 'claimed' AND telegram_updates.claimed_at < ?
"""
_STATE = "SELECT state FROM telegram_updates WHERE bot_id = ? AND update_id = ?"
_DONE = "UPDATE telegram_updates SET state = 'done' WHERE bot_id = ? AND update_id = ?"
_RELEASE = "DELETE FROM telegram_updates WHERE bot_id = ? AND update_id = ? AND state = 'claimed'"
_PRUNE = "DELETE FROM telegram_updates WHERE claimed_at < ?"


@dataclass(frozen=True, slots=True)
class UpdatesDialect:
    """One backend's way with the statements above (written with ``?``) and with times
    (``ValueError`` for a naive one)."""

    statement: Callable[[str], str]
    time: Callable[[datetime], object]


SQLITE_UPDATES = UpdatesDialect(statement=lambda sql: sql, time=encode_time)


class SqlTelegramUpdates:
    """``TelegramUpdates`` on a ``telegram_updates`` table. Every method raises ``StoreError``
    when the database fails."""

    def __init__(
        self, db: Sql, dialect: UpdatesDialect, *, lease: timedelta = timedelta(minutes=5)
    ) -> None:
        self._db = db
        self._sql = dialect.statement
        self._time = dialect.time
        self._lease = lease

    def claim(self, bot_id: int, update_id: int, *, now: datetime) -> UpdateClaim:
        """Claims the update for this caller, unless it is done or claimed within the lease."""
        stale = self._time(now - self._lease)
        if self._db.execute(self._sql(_CLAIM), (bot_id, update_id, self._time(now), stale)):
            return "claimed"
        row = self._db.fetchone(self._sql(_STATE), (bot_id, update_id))
        # No row: released between the two statements; Telegram's next post claims it.
        return "done" if row is not None and row["state"] == "done" else "busy"

    def done(self, bot_id: int, update_id: int) -> None:
        """The update was handled: every later post of it is dropped."""
        self._db.execute(self._sql(_DONE), (bot_id, update_id))

    def release(self, bot_id: int, update_id: int) -> None:
        """The update was not handled (storage refused it): the next post of it is claimed anew."""
        self._db.execute(self._sql(_RELEASE), (bot_id, update_id))

    def prune(self, *, before: datetime) -> int:
        """Forgets updates claimed before ``before`` (Telegram keeps an update a day at most);
        returns how many."""
        return self._db.execute(self._sql(_PRUNE), (self._time(before),))


class SqliteTelegramUpdates(SqlTelegramUpdates):
    """``TelegramUpdates`` on SQLite's ``telegram_updates`` table."""

    def __init__(self, db: Database, *, lease: timedelta = timedelta(minutes=5)) -> None:
        super().__init__(db, SQLITE_UPDATES, lease=lease)
