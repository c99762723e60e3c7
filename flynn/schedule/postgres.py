"""The schedule and the push outbox in PostgreSQL, for several workers on one database:
``flynn.schedule.store``'s logic with PostgreSQL's dialect (the tables are in
``flynn.postgres.migrations``).

What several workers add to SQLite's one writer at a time:

- a due job is fired by one worker: the claim's compare-and-set on its due time (a second
  ``UPDATE`` of the row waits for the first to commit, then finds the time gone), after the due
  jobs are read again with ``FOR UPDATE SKIP LOCKED``, so workers firing at once take disjoint jobs;
- a firing queues one push or run (compare-and-set, and unique on job and due time);
- a push or run is leased to one sender (claimed with ``FOR UPDATE SKIP LOCKED`` and the lease
  checked again as the row is updated); a worker that dies holding one leaves a lease that runs
  out, and another worker takes it;
- a reminder's number is taken under a lock on its namespace, so two workers adding at once
  number their reminders 1 and 2, not both 1;
- ``generation`` is a count in the database, moved at the commit of any change to ``jobs``.

Only the composition root (``flynn.app``) builds these.
"""

from __future__ import annotations

from flynn.postgres.database import PostgresDatabase, aware, psycopg_statement, utc
from flynn.schedule.dialect import ScheduleDialect
from flynn.schedule.jobs import PushLimits
from flynn.schedule.runs import SqlRuns
from flynn.schedule.store import SqlPushes, SqlSchedule

_NUMBERS_LOCK_CLASS = 0x466C7972  # "Flyr": the namespace whose reminders are being numbered


POSTGRES_SCHEDULE = ScheduleDialect(
    statement=psycopg_statement,
    time=aware,
    stored_time=utc,
    claim_lock=" FOR UPDATE SKIP LOCKED",
    counted_pushes="pushes",
    drops_order="seq",
    numbers_lock=f"SELECT pg_advisory_xact_lock({_NUMBERS_LOCK_CLASS}, hashtext(:namespace))",
)


class PostgresSchedule(SqlSchedule):
    """``Schedule`` on PostgreSQL's ``jobs`` table."""

    def __init__(self, db: PostgresDatabase, limits: PushLimits | None = None) -> None:
        super().__init__(db, POSTGRES_SCHEDULE, limits)

    def generation(self) -> tuple[int, int]:
        """Differs after any change to any job committed by any worker (one small read)."""
        row = self._db.fetchone("SELECT n FROM jobs_generation")
        assert row is not None
        return int(row["n"]), 0


class PostgresPushes(SqlPushes):
    """``Pushes`` on PostgreSQL's ``pushes`` table."""

    def __init__(self, db: PostgresDatabase, limits: PushLimits | None = None) -> None:
        super().__init__(db, POSTGRES_SCHEDULE, limits)


class PostgresRuns(SqlRuns):
    """``Runs`` on PostgreSQL's ``job_runs`` table."""

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__(db, POSTGRES_SCHEDULE)
