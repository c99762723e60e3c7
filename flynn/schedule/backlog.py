"""Bounded pushes: a repeating reminder's firings collapse into its waiting push, caps on how
many pushes wait per person and in total, expiry, and the digest push that tells a person what
was held back or expired while they were away (``PushLimits``, ``schedule:`` settings).

Every write runs inside the caller's transaction (``transaction`` nests), so a firing's claim, its
collapse or hold, and the digest's update land together or not at all. The statements are written
once, in SQLite's form, for any ``ScheduleSql`` database (``flynn.schedule.dialect``). Nothing is
dropped unannounced: a push leaves the queue only into a digest entry that names it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Literal

import structlog

from flynn.cron import zone
from flynn.memory.sql import NamedRow
from flynn.schedule.dialect import ScheduleDialect, ScheduleSql
from flynn.schedule.jobs import Job, PushLimits, Target

log = structlog.get_logger(__name__)

Reason = Literal["expired", "held"]

DIGEST_ENTRIES = 10
"""Entries a digest names per reason; the rest are counted ("and 140 more")."""
ENTRY_CHARS = 80

# A push nobody is sending now: never leased, or its lease (or its wait after a failed send) ran
# out. Only such a push is updated, moved into a digest or expired; one being sent goes as read.
_UNLEASED = "({p}leased_until IS NULL OR {p}leased_until <= :now)"
# What the caps count: pending pushes, digests aside. SQLite reads the counts from the partial
# index ``pushes_counted`` (as the ``job_runs`` migration made it; PostgreSQL has its twin), whose
# condition this is, without visiting the table.
_COUNTED = "delivered_at IS NULL AND digest = 0"


@dataclass(frozen=True, slots=True)
class Drop:
    """One digest entry: a reminder (or notice) that will not come as a message of its own."""

    key: str
    """``job:<id>`` (every firing of one reminder merges into one entry) or ``push:<id>``."""
    kind: str
    text: str
    timezone: str
    occurrences: int
    first_due_at: datetime | None
    last_due_at: datetime | None


@dataclass(frozen=True, slots=True)
class Backlog:
    """What waits to be delivered, for ``flynn doctor``."""

    pending: int
    """Pending pushes (digests aside)."""
    by_person: tuple[tuple[str, int], ...]
    """The namespaces with the most pending pushes, most first."""
    oldest_at: datetime | None
    """When the longest-waiting pending push was due (or queued)."""
    digests: int
    """Digests waiting: people who will be told of held-back or expired reminders."""


class SqlBacklog:
    """Collapse, caps, expiry and digests on the ``pushes`` and ``push_drops`` tables."""

    def __init__(self, db: ScheduleSql, dialect: ScheduleDialect, limits: PushLimits) -> None:
        self._db = db
        self._sql = dialect
        self._limits = limits

    def queue_firing(
        self, job: Job, *, due: datetime, late: bool, now: datetime
    ) -> NamedRow | None:
        """The push row for ``job``'s firing at ``due`` (claimed by the caller, in its
        transaction). A reminder that repeats updates its waiting push if it has one; over a
        cap it is held back into the digest instead (None). A one-off reminder is always
        queued, first moving the oldest waiting repeating reminder into the digest if over a
        cap. Other jobs' pushes are queued as they are."""
        assert job.target is not None
        if job.kind == "reminder":
            if job.repeat is not None:
                merged = self._merge(job, due=due, late=late, now=now)
                if merged is not None:
                    return merged
                if self._over_cap(job.namespace):
                    drop = Drop(f"job:{job.id}", job.kind, job.text, job.timezone, 1, due, due)
                    self._note(job.namespace, job.target, "held", drop, now=now)
                    log.info("schedule.firing_held", job_id=job.id, namespace=job.namespace)
                    return None
            else:
                self._make_room(job.namespace, now=now)
        target = job.target
        row = self._db.fetchone(
            self._sql.statement(
                "INSERT INTO pushes (namespace, kind, text, channel, chat_id, thread, recipient, "
                "job_id, due_at, first_due_at, late, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *"
            ),
            (
                job.namespace,
                job.kind,
                job.text,
                target.channel,
                target.chat_id,
                target.thread,
                target.recipient,
                job.id,
                self._sql.time(due),
                self._sql.time(due),
                int(late),
                self._sql.time(now),
            ),
        )
        assert row is not None
        return row

    def expire(self, *, now: datetime) -> int:
        """Moves every push waiting since before ``now - expire_after`` (its last due time, or
        when it was queued) into its person's digest; returns how many. Digests never expire;
        a repeating reminder's push is renewed by each firing, so it expires only once the
        reminder stopped (cancelled, done) and it still waits."""
        cutoff = now - self._limits.expire_after
        rows = self._db.fetchall(
            self._sql.statement(
                "SELECT p.*, j.timezone AS job_timezone FROM pushes AS p "
                "LEFT JOIN jobs AS j ON j.id = p.job_id "
                "WHERE p.delivered_at IS NULL AND p.digest = 0 "
                f"AND coalesce(p.due_at, p.created_at) <= :cutoff AND {_UNLEASED.format(p='p.')} "
                "ORDER BY p.id"
            ),
            {"cutoff": self._sql.time(cutoff), "now": self._sql.time(now)},
        )
        if not rows:
            return 0
        with self._db.transaction():
            for row in rows:
                self._move(row, "expired", now=now)
        log.info("schedule.pushes_expired", count=len(rows))
        return len(rows)

    def summary(self, *, top: int = 3) -> Backlog:
        """The pending backlog: in total, the ``top`` people with most, the oldest, digests."""
        head = self._db.fetchone(
            "SELECT count(*) AS n, min(coalesce(due_at, created_at)) AS oldest FROM pushes "
            f"WHERE {_COUNTED}"
        )
        assert head is not None
        people = self._db.fetchall(
            self._sql.statement(
                f"SELECT namespace, count(*) AS n FROM pushes WHERE {_COUNTED} "
                "GROUP BY namespace ORDER BY n DESC, namespace LIMIT ?"
            ),
            (top,),
        )
        digests = self._db.fetchone(
            "SELECT count(*) AS n FROM pushes WHERE delivered_at IS NULL AND digest = 1"
        )
        assert digests is not None
        return Backlog(
            pending=int(head["n"]),
            by_person=tuple((row["namespace"], int(row["n"])) for row in people),
            oldest_at=self._sql.optional_time(head["oldest"]),
            digests=int(digests["n"]),
        )

    def _merge(self, job: Job, *, due: datetime, late: bool, now: datetime) -> NamedRow | None:
        """Counts this firing into ``job``'s waiting push (due now at ``due``), if it has one
        nobody is sending."""
        # ``late`` only ever turns on: a late firing marks the push late, a timely one leaves it.
        return self._db.fetchone(
            self._sql.statement(
                "UPDATE pushes SET occurrences = occurrences + 1, due_at = :due, "
                "first_due_at = coalesce(first_due_at, due_at), "
                "late = CASE WHEN :late = 1 THEN 1 ELSE late END "
                "WHERE id = (SELECT max(id) FROM pushes WHERE job_id = :job "
                f"AND delivered_at IS NULL AND digest = 0 AND {_UNLEASED.format(p='')}) "
                "RETURNING *"
            ),
            {
                "due": self._sql.time(due),
                "late": int(late),
                "job": job.id,
                "now": self._sql.time(now),
            },
        )

    def _pending(self, namespace: str | None) -> int:
        sql = f"SELECT count(*) AS n FROM {self._sql.counted_pushes} WHERE {_COUNTED}"
        params: tuple[str, ...] = ()
        if namespace is not None:
            sql += " AND namespace = ?"
            params = (namespace,)
        row = self._db.fetchone(self._sql.statement(sql), params)
        assert row is not None
        return int(row["n"])

    def _over_cap(self, namespace: str) -> bool:
        return (
            self._pending(namespace) >= self._limits.per_person
            or self._pending(None) >= self._limits.total
        )

    def _make_room(self, namespace: str, *, now: datetime) -> None:
        """Before a one-off reminder is queued over a cap: the oldest waiting repeating
        reminder (the person's, or anyone's for the total cap) moves into its digest. With
        none to move, the one-off is queued over the cap all the same (logged)."""
        if self._pending(namespace) >= self._limits.per_person:
            scope: str | None = namespace
        elif self._pending(None) >= self._limits.total:
            scope = None
        else:
            return
        sql = (
            "SELECT p.*, j.timezone AS job_timezone FROM pushes AS p "
            "JOIN jobs AS j ON j.id = p.job_id "
            "WHERE p.delivered_at IS NULL AND p.digest = 0 AND j.kind = 'reminder' "
            f"AND j.repeat IS NOT NULL AND {_UNLEASED.format(p='p.')}"
        )
        params: dict[str, object] = {"now": self._sql.time(now)}
        if scope is not None:
            sql += " AND p.namespace = :namespace"
            params["namespace"] = scope
        oldest = self._db.fetchone(self._sql.statement(sql + " ORDER BY p.id LIMIT 1"), params)
        if oldest is None:
            log.warning("schedule.backlog_over_cap", namespace=namespace)
            return
        self._move(oldest, "held", now=now)

    def _move(self, row: NamedRow, reason: Reason, *, now: datetime) -> None:
        """Moves the push ``row`` (with its job's ``job_timezone``) into its digest."""
        job_id = row["job_id"]
        due = self._sql.optional_time(row["due_at"])
        drop = Drop(
            key=f"job:{job_id}" if job_id is not None else f"push:{row['id']}",
            kind=row["kind"],
            text=row["text"],
            timezone=row["job_timezone"] or "UTC",
            occurrences=int(row["occurrences"]),
            first_due_at=self._sql.optional_time(row["first_due_at"]) or due,
            last_due_at=due,
        )
        target = Target(row["channel"], row["chat_id"], row["thread"], row["recipient"])
        self._note(row["namespace"], target, reason, drop, now=now)
        self._db.execute(self._sql.statement("DELETE FROM pushes WHERE id = ?"), (row["id"],))
        log.info("schedule.push_moved", push_id=row["id"], reason=reason)

    def _note(
        self, namespace: str, target: Target, reason: Reason, drop: Drop, *, now: datetime
    ) -> None:
        """Adds ``drop`` to the waiting digest of ``namespace`` on ``target`` (a new digest if
        none waits, or the one waiting is being sent), and rewrites the digest's text."""
        stamp = self._sql.time(now)
        where = {
            "namespace": namespace,
            "channel": target.channel,
            "chat_id": target.chat_id,
            "thread": target.thread,
            "recipient": target.recipient,
            "now": stamp,
        }
        row = self._db.fetchone(
            self._sql.statement(
                "SELECT max(id) AS id FROM pushes WHERE digest = 1 AND delivered_at IS NULL "
                "AND namespace = :namespace AND channel = :channel AND chat_id = :chat_id "
                "AND thread IS :thread AND recipient IS :recipient "
                f"AND {_UNLEASED.format(p='')}"
            ),
            where,
        )
        digest_id = None if row is None else row["id"]
        if digest_id is None:
            created = self._db.fetchone(
                self._sql.statement(
                    "INSERT INTO pushes (namespace, kind, text, channel, chat_id, thread, "
                    "recipient, created_at, digest) VALUES (:namespace, 'notice', '', :channel, "
                    ":chat_id, :thread, :recipient, :now, 1) RETURNING id"
                ),
                where,
            )
            assert created is not None
            digest_id = int(created["id"])
        first = None if drop.first_due_at is None else self._sql.time(drop.first_due_at)
        last = None if drop.last_due_at is None else self._sql.time(drop.last_due_at)
        # The earlier first and the later last time of the two, either where the other has none.
        self._db.execute(
            self._sql.statement(
                "INSERT INTO push_drops (digest_id, reason, key, kind, text, timezone, "
                "occurrences, first_due_at, last_due_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (digest_id, reason, key) DO UPDATE SET "
                "occurrences = push_drops.occurrences + excluded.occurrences, "
                "first_due_at = CASE WHEN push_drops.first_due_at IS NULL "
                "OR excluded.first_due_at < push_drops.first_due_at "
                "THEN excluded.first_due_at ELSE push_drops.first_due_at END, "
                "last_due_at = CASE WHEN push_drops.last_due_at IS NULL "
                "OR excluded.last_due_at > push_drops.last_due_at "
                "THEN excluded.last_due_at ELSE push_drops.last_due_at END"
            ),
            (
                digest_id,
                reason,
                drop.key,
                drop.kind,
                drop.text,
                drop.timezone,
                drop.occurrences,
                first,
                last,
            ),
        )
        entries = self._db.fetchall(
            self._sql.statement(
                f"SELECT * FROM push_drops WHERE digest_id = ? ORDER BY {self._sql.drops_order}"
            ),
            (digest_id,),
        )
        held = [self._drop(entry) for entry in entries if entry["reason"] == "held"]
        expired = [self._drop(entry) for entry in entries if entry["reason"] == "expired"]
        text = digest_text(held=held, expired=expired, expire_after=self._limits.expire_after)
        self._db.execute(
            self._sql.statement("UPDATE pushes SET text = ? WHERE id = ?"), (text, digest_id)
        )

    def _drop(self, row: NamedRow) -> Drop:
        return Drop(
            key=row["key"],
            kind=row["kind"],
            text=row["text"],
            timezone=row["timezone"],
            occurrences=int(row["occurrences"]),
            first_due_at=self._sql.optional_time(row["first_due_at"]),
            last_due_at=self._sql.optional_time(row["last_due_at"]),
        )


def digest_text(*, held: Sequence[Drop], expired: Sequence[Drop], expire_after: timedelta) -> str:
    """The digest as the person reads it: one line per reason, naming the first
    ``DIGEST_ENTRIES`` of each and counting the rest."""
    lines = []
    if expired:
        noun = _noun(expired, "reminder")
        lines.append(
            f"{len(expired)} {noun} expired while you were away (unsent for "
            f"{_span(expire_after)}): {_entries(expired)}"
        )
    if held:
        noun = _noun(held, "repeating reminder")
        lines.append(
            f"{len(held)} {noun} {'was' if len(held) == 1 else 'were'} held back while too many "
            f"messages waited for you: {_entries(held)}"
        )
    return "\n".join(lines)


def _noun(drops: Sequence[Drop], reminder: str) -> str:
    word = reminder if all(drop.kind == "reminder" for drop in drops) else "message"
    return word if len(drops) == 1 else word + "s"


def _entries(drops: Sequence[Drop]) -> str:
    named = "; ".join(_entry(drop) for drop in drops[:DIGEST_ENTRIES])
    rest = len(drops) - DIGEST_ENTRIES
    return named + (f"; and {rest} more" if rest > 0 else "")


def _entry(drop: Drop) -> str:
    text = " ".join(drop.text.split())
    if len(text) > ENTRY_CHARS:
        text = text[: ENTRY_CHARS - 1] + "…"
    where = _zone(drop.timezone)
    last = drop.last_due_at
    if last is None:
        return text
    if drop.occurrences > 1 and drop.first_due_at is not None:
        first = drop.first_due_at
        return f"{text} ({drop.occurrences} times, {_when(first, where)} to {_when(last, where)})"
    return f"{text} (due {_when(last, where)})"


def _when(moment: datetime, where: tzinfo) -> str:
    return f"{moment.astimezone(where):%a %d %b %H:%M}"


def _zone(name: str) -> tzinfo:
    try:
        return zone(name)
    except ValueError:
        return UTC


def _span(span: timedelta) -> str:
    hours = span.total_seconds() / 3600
    if hours >= 24 and hours % 24 == 0:
        days = int(hours // 24)
        return f"{days} day" + ("s" if days != 1 else "")
    return f"{hours:g} hour" + ("s" if hours != 1 else "")
