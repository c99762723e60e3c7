"""The schedule and the push outbox in SQLite (tables ``jobs`` and ``pushes``, migrations 8, 11,
13, 19 in ``flynn.schedule.migrations``): ``flynn.schedule.store``'s logic with SQLite's dialect,
and ``generation`` from the connection's own count of rewrites and ``data_version``.

Every write is in a ``BEGIN IMMEDIATE`` transaction, so writers on one file take turns.
"""

from __future__ import annotations

from flynn.memory.database import Database
from flynn.schedule.dialect import SQLITE_SCHEDULE
from flynn.schedule.jobs import PushLimits
from flynn.schedule.store import SqlPushes, SqlSchedule


class SqliteSchedule(SqlSchedule):
    """``Schedule`` on SQLite's ``jobs`` table."""

    def __init__(self, db: Database, limits: PushLimits | None = None) -> None:
        db.watch_rewrites("jobs")
        super().__init__(db, SQLITE_SCHEDULE, limits)
        self._database = db

    def generation(self) -> tuple[int, int]:
        """Differs after any job was added, or updated or deleted by any SQL on this
        connection (firing, cancelling, forgetting), or after another connection committed."""
        return self._database.rewrites("jobs")

    def _added(self) -> None:
        self._database.note_write("jobs")  # an insert: ``generation`` must move for it too


class SqlitePushes(SqlPushes):
    """``Pushes`` on SQLite's ``pushes`` table."""

    def __init__(self, db: Database, limits: PushLimits | None = None) -> None:
        super().__init__(db, SQLITE_SCHEDULE, limits)
