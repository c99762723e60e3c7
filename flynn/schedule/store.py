"""The schedule and the push outbox (tables ``jobs`` and ``pushes``; a work job's firing queues a
``job_runs`` row instead, ``flynn.schedule.runs``), written once for any ``ScheduleSql`` database
with its ``ScheduleDialect`` (SQLite: ``flynn.schedule.sqlite``; PostgreSQL:
``flynn.schedule.postgres``).

Exactly once across connections rests on the claim: a job is claimed by compare-and-set on the
due time it was read with, inside the transaction that advances it and queues its push, so of two
workers firing the same due time only the one whose ``UPDATE`` changed the row queues it (SQLite
serialises the writers with ``BEGIN IMMEDIATE``; on PostgreSQL a second ``UPDATE`` of the row waits
for the first to commit and then finds the due time gone). On PostgreSQL the due jobs are read
again inside that transaction with ``FOR UPDATE SKIP LOCKED``, so workers firing at once take
disjoint jobs instead of queueing behind each other's row locks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

import structlog

from flynn.credentials import redact
from flynn.cron import Cron, zone
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.sql import NamedRow
from flynn.messages import PushKind
from flynn.schedule.backlog import Backlog, SqlBacklog
from flynn.schedule.dialect import ScheduleDialect, ScheduleSql
from flynn.schedule.jobs import WORK_KINDS, Job, JobKind, JobStatus, Push, PushLimits, Target
from flynn.schedule.runs import queue_run

log = structlog.get_logger(__name__)

JOB_KINDS: tuple[JobKind, ...] = ("reminder", "distill")

# A reminder's number (``jobs.number``, migration 11): the next after every reminder its
# namespace ever had, cancelled and done ones included, so a number is never handed out twice.
# Read inside the insert, in its transaction, after ``ScheduleDialect.numbers_lock``: no other
# writer gets between.
_NEXT_NUMBER = (
    "CASE WHEN :kind = 'reminder' THEN (SELECT coalesce(max(number), 0) + 1 FROM jobs "
    "WHERE namespace = :namespace AND kind = 'reminder') END"
)
_FORGET_JOBS = f"DELETE FROM jobs WHERE {namespace_scope('namespace')}"
_FORGET_PUSHES = f"DELETE FROM pushes WHERE {namespace_scope('namespace')}"
_FORGET_RUNS = f"DELETE FROM job_runs WHERE {namespace_scope('namespace')}"


@dataclass(frozen=True, slots=True)
class ScheduleSummary:
    """What ``flynn doctor`` says about the schedule."""

    active: int
    overdue: int
    """Active jobs whose due time has passed (a daemon fires them when it runs)."""
    next_job: Job | None


class SqlSchedule:
    """``Schedule`` on a ``jobs`` table, but for ``generation``, which each backend keeps its
    own way. Each method is one transaction; ``StoreError`` when storage fails. A firing's push
    is queued within ``limits`` (``flynn.schedule.backlog``)."""

    def __init__(
        self, db: ScheduleSql, dialect: ScheduleDialect, limits: PushLimits | None = None
    ) -> None:
        self._db = db
        self._sql = dialect
        self._backlog = SqlBacklog(db, dialect, limits or PushLimits())

    def add(
        self,
        *,
        namespace: str,
        kind: JobKind,
        text: str,
        at: datetime,
        repeat: str | None,
        timezone: str,
        target: Target | None,
        now: datetime,
    ) -> Job:
        """Stores a job first due at ``at`` (a repeating one: its first cron time at or after
        ``at``); a reminder gets its namespace's next ``number``. ``ValueError`` for an invalid
        cron expression, timezone or kind. A credential in ``text`` is redacted."""
        text = redact(text)[0]
        if kind not in JOB_KINDS:
            raise ValueError(f"unknown job kind {kind!r}: one of {', '.join(JOB_KINDS)}")
        zone(timezone)
        first = at if repeat is None else Cron(repeat, timezone).first_at_or_after(at)
        channel, chat_id, thread, recipient = _target_columns(target)
        values = {
            "namespace": namespace,
            "kind": kind,
            "text": text,
            "repeat": repeat,
            "timezone": timezone,
            "next_at": self._sql.time(first),
            "channel": channel,
            "chat_id": chat_id,
            "thread": thread,
            "recipient": recipient,
            "now": self._sql.time(now),
        }
        with self._db.transaction():
            if self._sql.numbers_lock and kind == "reminder":
                self._db.execute(self._sql.statement(self._sql.numbers_lock), values)
            row = self._db.fetchone(
                self._sql.statement(
                    "INSERT INTO jobs (namespace, kind, number, text, repeat, timezone, next_at, "
                    "channel, chat_id, thread, recipient, status, created_at, updated_at) "
                    f"VALUES (:namespace, :kind, {_NEXT_NUMBER}, :text, :repeat, :timezone, "
                    ":next_at, :channel, :chat_id, :thread, :recipient, 'active', :now, :now) "
                    "RETURNING *"
                ),
                values,
            )
            self._added()
        assert row is not None
        return self._job(row)

    def _added(self) -> None:
        """Called inside ``add``'s transaction: a backend whose ``generation`` does not see
        inserts by itself counts this one."""

    def jobs(
        self, namespace: str | None, *, kind: JobKind | None = None, limit: int | None = None
    ) -> list[Job]:
        """Active jobs of ``namespace`` (every namespace when None), soonest first; the first
        ``limit`` of them when given."""
        where, params = _active(namespace, kind)
        sql = f"SELECT * FROM jobs WHERE {where} ORDER BY next_at, id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [self._job(row) for row in self._db.fetchall(self._sql.statement(sql), params)]

    def count(self, namespace: str | None, *, kind: JobKind | None = None) -> int:
        """How many active jobs ``namespace`` has (every namespace when None)."""
        where, params = _active(namespace, kind)
        row = self._db.fetchone(
            self._sql.statement(f"SELECT count(*) AS n FROM jobs WHERE {where}"), params
        )
        return 0 if row is None else int(row["n"])

    def cancel(self, namespace: str, job_id: int, *, now: datetime) -> Job | None:
        """Cancels ``namespace``'s active job ``job_id``; None if it has no such job (another
        person's job is no such job)."""
        with self._db.transaction():
            row = self._db.fetchone(
                self._sql.statement(
                    "UPDATE jobs SET status = 'cancelled', next_at = NULL, updated_at = ? "
                    "WHERE id = ? AND namespace = ? AND status = 'active' RETURNING *"
                ),
                (self._sql.time(now), job_id, namespace),
            )
        return None if row is None else self._job(row)

    def number_unnumbered(self) -> int:
        """Numbers reminders stored without a number (set by a daemon of the version before
        migration 11, still running when a newer command migrated the database), each after
        its namespace's last, in the order they were set; returns how many. Run at start."""
        with self._db.transaction():
            return self._db.execute(
                "UPDATE jobs SET number = numbered.n FROM ("
                " SELECT id, (SELECT coalesce(max(number), 0) FROM jobs AS known"
                "  WHERE known.namespace = fresh.namespace AND known.kind = 'reminder')"
                "  + row_number() OVER (PARTITION BY namespace ORDER BY id) AS n"
                " FROM jobs AS fresh WHERE kind = 'reminder' AND number IS NULL"
                ") AS numbered WHERE jobs.id = numbered.id"
            )

    def forget_namespace(self, prefix: str) -> dict[str, int]:
        """Deletes for real the jobs under ``prefix``, their pushes (with the drops a digest
        lists) and their queued runs, inside the caller's transaction
        (``SqliteMemory.forget_namespace``, ``PostgresMemory.forget_namespace``); counts the
        jobs."""
        scope = scope_params(prefix)
        self._db.execute(self._sql.statement(_FORGET_PUSHES), scope)
        self._db.execute(self._sql.statement(_FORGET_RUNS), scope)
        return {"jobs": self._db.execute(self._sql.statement(_FORGET_JOBS), scope)}

    def next_due(self) -> datetime | None:
        """When the soonest active job is due, over every namespace (one index seek)."""
        row = self._db.fetchone("SELECT min(next_at) AS due FROM jobs WHERE status = 'active'")
        return None if row is None else self._sql.optional_time(row["due"])

    def fire_due(self, *, now: datetime, late_after_seconds: float, limit: int) -> list[Push]:
        """Claims up to ``limit`` jobs due at or before ``now``, advances each (to its next
        cron time strictly after ``now``, or done) and queues its push, all in one transaction
        (one commit per batch, not per job: a burst of due jobs is what it speeds up); jobs
        another connection claimed first are skipped. A job due more than
        ``late_after_seconds`` before ``now`` fires once, marked late. A job without a target
        advances but queues nothing (logged: nobody could receive it); a job of a ``WORK_KINDS``
        kind queues its run (``Runs``), not a push. The returned pushes are
        those queued or updated (a repeating reminder's waiting push counts the firing in);
        a firing held back over the caps is in its person's digest instead."""
        due = (
            "SELECT * FROM jobs WHERE status = 'active' AND next_at <= ? "
            "ORDER BY next_at, id LIMIT ?"
        )
        params = (self._sql.time(now), limit)
        rows = self._db.fetchall(self._sql.statement(due), params)
        if not rows:
            return []
        pushes = []
        with self._db.transaction():
            if self._sql.claim_lock:
                # Read again, locking the jobs no other worker holds: each takes its own.
                rows = self._db.fetchall(self._sql.statement(due + self._sql.claim_lock), params)
            for row in rows:
                push = self._fire(self._job(row), now, late_after_seconds)
                if push is not None:
                    pushes.append(push)
        for push in pushes:
            log.info(
                "schedule.job_fired",
                job_id=push.job_id,
                push_id=push.id,
                late=push.late,
                occurrences=push.occurrences,
            )
        return pushes

    def timezone_of(self, job_id: int) -> str | None:
        """The timezone job ``job_id`` was set in (whatever its status); None when there is no
        such job."""
        row = self._db.fetchone(
            self._sql.statement("SELECT timezone FROM jobs WHERE id = ?"), (job_id,)
        )
        return None if row is None else str(row["timezone"])

    def summary(self, now: datetime) -> ScheduleSummary:
        """Counts for ``flynn doctor``: active and overdue jobs, and the next one due."""
        row = self._db.fetchone(
            self._sql.statement(
                "SELECT count(*) AS active, "
                "coalesce(sum(CASE WHEN next_at <= ? THEN 1 ELSE 0 END), 0) AS overdue "
                "FROM jobs WHERE status = 'active'"
            ),
            (self._sql.time(now),),
        )
        assert row is not None
        first = self._db.fetchone(
            "SELECT * FROM jobs WHERE status = 'active' ORDER BY next_at, id LIMIT 1"
        )
        return ScheduleSummary(
            active=int(row["active"]),
            overdue=int(row["overdue"]),
            next_job=None if first is None else self._job(first),
        )

    def _fire(self, job: Job, now: datetime, late_after_seconds: float) -> Push | None:
        """One job's claim (compare-and-set on the due time it was read with), advance and
        push; None when the claim was lost or nobody can receive it."""
        assert job.next_at is not None
        due = job.next_at
        late = (now - due).total_seconds() > late_after_seconds
        next_at: datetime | None = None
        if job.repeat is not None:
            try:
                next_at = Cron(job.repeat, job.timezone).next_after(now)
            except ValueError as exc:
                # Validated when added, so only a timezone database that lost the zone gets
                # here: the job fires this once and ends rather than failing every tick.
                log.warning("schedule.job_unreadable", job_id=job.id, error=str(exc))
        status: JobStatus = "active" if next_at is not None else "done"
        stamp = self._sql.time(now)
        with self._db.transaction():
            claimed = self._db.execute(
                self._sql.statement(
                    "UPDATE jobs SET next_at = ?, status = ?, last_fired_at = ?, "
                    "fired_count = fired_count + 1, updated_at = ? "
                    "WHERE id = ? AND status = 'active' AND next_at = ?"
                ),
                (
                    None if next_at is None else self._sql.time(next_at),
                    status,
                    stamp,
                    stamp,
                    job.id,
                    self._sql.time(due),
                ),
            )
            if not claimed:
                return None  # another connection fired (or someone cancelled) it first
            if job.kind in WORK_KINDS:
                run = queue_run(self._db, self._sql, job, due=due, late=late, now=now)
                if run is not None:
                    log.info("schedule.run_queued", job_id=job.id, run_id=run.id, kind=job.kind)
                return None
            if job.target is None:
                log.warning("schedule.job_undeliverable", job_id=job.id, namespace=job.namespace)
                return None
            row = self._backlog.queue_firing(job, due=due, late=late, now=now)
        return None if row is None else push_of(row, self._sql)

    def _job(self, row: NamedRow) -> Job:
        channel = row["channel"]
        target = (
            None
            if channel is None
            else Target(
                channel=channel,
                chat_id=row["chat_id"] or "",
                thread=row["thread"],
                recipient=row["recipient"],
            )
        )
        return Job(
            id=int(row["id"]),
            namespace=row["namespace"],
            kind=cast(JobKind, row["kind"]),
            text=row["text"],
            repeat=row["repeat"],
            timezone=row["timezone"],
            next_at=self._sql.optional_time(row["next_at"]),
            target=target,
            status=cast(JobStatus, row["status"]),
            created_at=self._sql.stored_time(row["created_at"]),
            last_fired_at=self._sql.optional_time(row["last_fired_at"]),
            fired_count=int(row["fired_count"]),
            number=row["number"],
        )


class SqlPushes:
    """``Pushes`` on a ``pushes`` table: the outbox, leased to one sender at a time; what waits
    too long expires into a digest (``flynn.schedule.backlog``)."""

    def __init__(
        self, db: ScheduleSql, dialect: ScheduleDialect, limits: PushLimits | None = None
    ) -> None:
        self._db = db
        self._sql = dialect
        self._backlog = SqlBacklog(db, dialect, limits or PushLimits())

    def add(
        self,
        *,
        namespace: str,
        kind: PushKind,
        text: str,
        target: Target,
        now: datetime,
    ) -> Push:
        """Queues a push not tied to a job (a finished distillation, a notice); a
        credential in ``text`` is redacted."""
        text = redact(text)[0]
        with self._db.transaction():
            row = self._db.fetchone(
                self._sql.statement(
                    "INSERT INTO pushes (namespace, kind, text, channel, chat_id, thread, "
                    "recipient, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *"
                ),
                (
                    namespace,
                    kind,
                    text,
                    target.channel,
                    target.chat_id,
                    target.thread,
                    target.recipient,
                    self._sql.time(now),
                ),
            )
        assert row is not None
        return push_of(row, self._sql)

    def claim_pending(
        self,
        *,
        now: datetime,
        lease_seconds: float,
        channel: str | None = None,
        chat_id: str | None = None,
        limit: int = 100,
    ) -> list[Push]:
        """Undelivered pushes whose lease (if any) ran out, oldest first, leased until
        ``now + lease_seconds``. With ``channel``, only that channel's; with ``chat_id`` too,
        only those addressed there: to that recipient, or without a recipient to that chat.
        Of workers claiming at once, each gets other pushes: the outer condition is checked
        again on the row as it is when updated."""
        pending = "delivered_at IS NULL AND (leased_until IS NULL OR leased_until <= :now)"
        sql = (
            "UPDATE pushes SET leased_until = :until "
            f"WHERE id IN (SELECT id FROM pushes WHERE {pending}"
        )
        if channel is not None:
            sql += " AND channel = :channel"
            if chat_id is not None:
                sql += " AND (recipient = :chat_id OR (recipient IS NULL AND chat_id = :chat_id))"
        elif chat_id is not None:
            raise ValueError("chat_id needs its channel")
        sql += f" ORDER BY id LIMIT :limit{self._sql.claim_lock}) AND {pending} RETURNING *"
        until = now + timedelta(seconds=lease_seconds)
        params = {
            "until": self._sql.time(until),
            "now": self._sql.time(now),
            "channel": channel,
            "chat_id": chat_id,
            "limit": limit,
        }
        with self._db.transaction():
            rows = self._db.fetchall(self._sql.statement(sql), params)
        return sorted((push_of(row, self._sql) for row in rows), key=lambda push: push.id)

    def delivered(self, push_id: int, *, now: datetime) -> bool:
        """Marks the push delivered, so it is never sent again; False when it already was (a
        second tab's acknowledgement) or there is no such push."""
        with self._db.transaction():
            changed = self._db.execute(
                self._sql.statement(
                    "UPDATE pushes SET delivered_at = ?, leased_until = NULL "
                    "WHERE id = ? AND delivered_at IS NULL"
                ),
                (self._sql.time(now), push_id),
            )
        return changed > 0

    def delivered_to(self, channel: str, chat_id: str, *, limit: int) -> list[Push]:
        """The newest ``limit`` pushes delivered on ``channel`` to ``chat_id`` (addressed to
        that recipient, or without a recipient to that chat), oldest delivery first: what the
        web page shows again after a reload."""
        rows = self._db.fetchall(
            self._sql.statement(
                "SELECT * FROM pushes WHERE delivered_at IS NOT NULL AND channel = :channel "
                "AND (recipient = :chat_id OR (recipient IS NULL AND chat_id = :chat_id)) "
                "ORDER BY delivered_at DESC, id DESC LIMIT :limit"
            ),
            {"channel": channel, "chat_id": chat_id, "limit": limit},
        )
        return [push_of(row, self._sql) for row in reversed(rows)]

    def release(self, push_id: int) -> None:
        """Gives the lease back without delivering (the recipient is away): pending again."""
        with self._db.transaction():
            self._db.execute(
                self._sql.statement(
                    "UPDATE pushes SET leased_until = NULL WHERE id = ? AND delivered_at IS NULL"
                ),
                (push_id,),
            )

    def failed(self, push_id: int, *, retry_at: datetime) -> None:
        """After a send that raised: pending again from ``retry_at``, one more failure."""
        with self._db.transaction():
            self._db.execute(
                self._sql.statement(
                    "UPDATE pushes SET leased_until = ?, failures = failures + 1 "
                    "WHERE id = ? AND delivered_at IS NULL"
                ),
                (self._sql.time(retry_at), push_id),
            )

    def expire(self, *, now: datetime) -> int:
        """Moves pushes waiting longer than ``PushLimits.expire_after`` into their person's
        digest (told on their next contact); returns how many."""
        return self._backlog.expire(now=now)

    def backlog(self) -> Backlog:
        """What waits to be delivered, for ``flynn doctor``."""
        return self._backlog.summary()

    def undelivered(self) -> int:
        """How many pushes wait to be delivered (leased or not)."""
        row = self._db.fetchone("SELECT count(*) AS n FROM pushes WHERE delivered_at IS NULL")
        assert row is not None
        return int(row["n"])


def _active(namespace: str | None, kind: JobKind | None) -> tuple[str, list[object]]:
    where = "status = 'active'"
    params: list[object] = []
    if namespace is not None:
        where += " AND namespace = ?"
        params.append(namespace)
    if kind is not None:
        where += " AND kind = ?"
        params.append(kind)
    return where, params


def _target_columns(target: Target | None) -> tuple[str | None, ...]:
    if target is None:
        return (None, None, None, None)
    return (target.channel, target.chat_id, target.thread, target.recipient)


def push_of(row: NamedRow, dialect: ScheduleDialect) -> Push:
    """A ``pushes`` row as a ``Push``."""
    return Push(
        id=int(row["id"]),
        namespace=row["namespace"],
        kind=cast(PushKind, row["kind"]),
        text=row["text"],
        target=Target(
            channel=row["channel"],
            chat_id=row["chat_id"],
            thread=row["thread"],
            recipient=row["recipient"],
        ),
        created_at=dialect.stored_time(row["created_at"]),
        job_id=row["job_id"],
        due_at=dialect.optional_time(row["due_at"]),
        late=bool(row["late"]),
        failures=int(row["failures"]),
        occurrences=int(row["occurrences"]),
        first_due_at=dialect.optional_time(row["first_due_at"]),
        digest=bool(row["digest"]),
        delivered_at=dialect.optional_time(row["delivered_at"]),
    )
