"""The firings of work Flynn does itself (``WORK_KINDS``), table ``job_runs``: queued in the
transaction that claims the job's due time, leased to one runner at a time, finished once; on any
``ScheduleSql`` database (``SqlRuns``) and on SQLite's (``SqliteRuns``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import cast

from flynn.memory.database import Database
from flynn.memory.sql import NamedRow
from flynn.schedule.dialect import SQLITE_SCHEDULE, ScheduleDialect, ScheduleSql
from flynn.schedule.jobs import Job, JobKind, Run, RunOutcome


class SqlRuns:
    """``Runs`` on a ``job_runs`` table; each method is one transaction."""

    def __init__(self, db: ScheduleSql, dialect: ScheduleDialect) -> None:
        self._db = db
        self._sql = dialect

    def claim_pending(self, *, now: datetime, lease_seconds: float, limit: int) -> list[Run]:
        """Unfinished runs whose lease ran out, oldest first, leased until
        ``now + lease_seconds``. Of workers claiming at once, each gets other runs: the outer
        condition is checked again on the row as it is when updated."""
        until = now + timedelta(seconds=lease_seconds)
        pending = "finished_at IS NULL AND (leased_until IS NULL OR leased_until <= :now)"
        with self._db.transaction():
            rows = self._db.fetchall(
                self._sql.statement(
                    "UPDATE job_runs SET leased_until = :until WHERE id IN ("
                    f"SELECT id FROM job_runs WHERE {pending} ORDER BY id LIMIT :limit"
                    f"{self._sql.claim_lock}) AND {pending} RETURNING *"
                ),
                {"until": self._sql.time(until), "now": self._sql.time(now), "limit": limit},
            )
        return sorted((_run(row, self._sql) for row in rows), key=lambda run: run.id)

    def finish(self, run_id: int, *, outcome: RunOutcome, now: datetime) -> bool:
        with self._db.transaction():
            changed = self._db.execute(
                self._sql.statement(
                    "UPDATE job_runs SET finished_at = ?, outcome = ?, leased_until = NULL "
                    "WHERE id = ? AND finished_at IS NULL"
                ),
                (self._sql.time(now), outcome, run_id),
            )
        return changed > 0

    def failed(self, run_id: int, *, retry_at: datetime) -> None:
        with self._db.transaction():
            self._db.execute(
                self._sql.statement(
                    "UPDATE job_runs SET leased_until = ?, failures = failures + 1 "
                    "WHERE id = ? AND finished_at IS NULL"
                ),
                (self._sql.time(retry_at), run_id),
            )

    def release(self, run_id: int) -> None:
        with self._db.transaction():
            self._db.execute(
                self._sql.statement(
                    "UPDATE job_runs SET leased_until = NULL WHERE id = ? AND finished_at IS NULL"
                ),
                (run_id,),
            )

    def pending(self) -> int:
        """How many runs wait to be finished (leased or not)."""
        row = self._db.fetchone(
            "SELECT count(*) AS n FROM job_runs WHERE finished_at IS NULL",
        )
        assert row is not None
        return int(row["n"])


class SqliteRuns(SqlRuns):
    """``Runs`` on SQLite's ``job_runs`` table."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, SQLITE_SCHEDULE)


def queue_run(
    db: ScheduleSql,
    dialect: ScheduleDialect,
    job: Job,
    *,
    due: datetime,
    late: bool,
    now: datetime,
) -> Run | None:
    """Queues the run of ``job``'s firing at ``due``, inside the caller's transaction (the one
    that claimed the due time); None when that due time already has its run."""
    row = db.fetchone(
        dialect.statement(
            "INSERT INTO job_runs (job_id, namespace, kind, text, due_at, late, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING *"
        ),
        (
            job.id,
            job.namespace,
            job.kind,
            job.text,
            dialect.time(due),
            int(late),
            dialect.time(now),
        ),
    )
    return None if row is None else _run(row, dialect)


def _run(row: NamedRow, dialect: ScheduleDialect) -> Run:
    """A ``job_runs`` row as a ``Run``."""
    return Run(
        id=int(row["id"]),
        job_id=row["job_id"],
        namespace=row["namespace"],
        kind=cast(JobKind, row["kind"]),
        text=row["text"],
        due_at=dialect.stored_time(row["due_at"]),
        late=bool(row["late"]),
        failures=int(row["failures"]),
    )
