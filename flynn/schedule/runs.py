"""The firings of work Flynn does itself (``WORK_KINDS``) in SQLite (table ``job_runs``): queued
in the transaction that claims the job's due time, leased to one runner at a time, finished once.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from typing import cast

from flynn.memory.database import Database, decode_time, encode_time
from flynn.schedule.jobs import Job, JobKind, Run, RunOutcome


class SqliteRuns:
    """``Runs`` on a ``Database``; each method is one transaction."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def claim_pending(self, *, now: datetime, lease_seconds: float, limit: int) -> list[Run]:
        """Unfinished runs whose lease ran out, oldest first, leased until
        ``now + lease_seconds``."""
        until = now + timedelta(seconds=lease_seconds)
        with self._db.transaction():
            rows = self._db.fetchall(
                "UPDATE job_runs SET leased_until = :until WHERE id IN ("
                "SELECT id FROM job_runs WHERE finished_at IS NULL "
                "AND (leased_until IS NULL OR leased_until <= :now) ORDER BY id LIMIT :limit"
                ") RETURNING *",
                {"until": encode_time(until), "now": encode_time(now), "limit": limit},
            )
        return sorted((_run(row) for row in rows), key=lambda run: run.id)

    def finish(self, run_id: int, *, outcome: RunOutcome, now: datetime) -> bool:
        with self._db.transaction():
            changed = self._db.execute(
                "UPDATE job_runs SET finished_at = ?, outcome = ?, leased_until = NULL "
                "WHERE id = ? AND finished_at IS NULL",
                (encode_time(now), outcome, run_id),
            )
        return changed > 0

    def failed(self, run_id: int, *, retry_at: datetime) -> None:
        with self._db.transaction():
            self._db.execute(
                "UPDATE job_runs SET leased_until = ?, failures = failures + 1 "
                "WHERE id = ? AND finished_at IS NULL",
                (encode_time(retry_at), run_id),
            )

    def release(self, run_id: int) -> None:
        with self._db.transaction():
            self._db.execute(
                "UPDATE job_runs SET leased_until = NULL WHERE id = ? AND finished_at IS NULL",
                (run_id,),
            )

    def pending(self) -> int:
        """How many runs wait to be finished (leased or not)."""
        row = self._db.fetchone("SELECT count(*) FROM job_runs WHERE finished_at IS NULL")
        assert row is not None
        return int(row[0])


def queue_run(db: Database, job: Job, *, due: datetime, late: bool, now: datetime) -> Run | None:
    """Queues the run of ``job``'s firing at ``due``, inside the caller's transaction (the one
    that claimed the due time); None when that due time already has its run."""
    row = db.fetchone(
        "INSERT INTO job_runs (job_id, namespace, kind, text, due_at, late, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING *",
        (job.id, job.namespace, job.kind, job.text, encode_time(due), int(late), encode_time(now)),
    )
    return None if row is None else _run(row)


def _run(row: sqlite3.Row) -> Run:
    return Run(
        id=int(row["id"]),
        job_id=row["job_id"],
        namespace=row["namespace"],
        kind=cast(JobKind, row["kind"]),
        text=row["text"],
        due_at=decode_time(row["due_at"]),
        late=bool(row["late"]),
        failures=int(row["failures"]),
    )
