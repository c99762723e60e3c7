"""The schedule's data and its seams: ``Schedule`` (durable jobs, each due time claimed exactly
once), ``Pushes`` (the outbox of unprompted messages a reminder's firings produce) and ``Runs``
(the firings of work Flynn does itself, ``WORK_KINDS``, run by the handler registered for the kind).

Times are timezone-aware; the store keeps UTC. A repeating job's ``repeat`` is a cron
expression read in the job's own ``timezone`` (the person's), so "every day at 8" stays 8 o'clock
across daylight-saving changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, Protocol

from flynn.messages import PushKind

JobKind = Literal["reminder", "distill"]
JobStatus = Literal["active", "done", "cancelled"]
RunOutcome = Literal["done", "given_up"]

WORK_KINDS: frozenset[JobKind] = frozenset({"distill"})
"""Job kinds Flynn does itself: a firing queues a ``Run`` for the scheduler's handler of the kind,
never a message to anyone (such a job has no ``target``)."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where a job's message goes: a chat (``chat_id``, the one the reminder was set in), or,
    with ``chat_id`` empty, the account ``recipient`` on ``channel`` (the person's ``notify``
    channel in ``users:``)."""

    channel: str
    chat_id: str = ""
    thread: str | None = None
    recipient: str | None = None


@dataclass(frozen=True, slots=True)
class Job:
    id: int
    namespace: str
    """Whose job it is: the memory namespace of the person (``user``, ``users/alice``)."""
    kind: JobKind
    text: str
    repeat: str | None
    """A cron expression, or None for a job that fires once."""
    timezone: str
    """IANA name the cron expression is read in."""
    next_at: datetime | None
    """When it fires next; None once done or cancelled."""
    target: Target | None
    status: JobStatus
    created_at: datetime
    last_fired_at: datetime | None = None
    fired_count: int = 0
    number: int | None = None
    """A reminder's number as its person sees and types it (1, 2, 3 in the order they set them,
    never reused); None for other kinds. ``id`` is the schedule's own, across everyone."""


@dataclass(frozen=True, slots=True)
class Push:
    """An unprompted message waiting to be delivered (or delivered)."""

    id: int
    namespace: str
    kind: PushKind
    text: str
    target: Target
    created_at: datetime
    job_id: int | None = None
    due_at: datetime | None = None
    late: bool = False
    """The job fired well after its time (the daemon was down then)."""
    failures: int = 0
    """Sends that raised so far (``Pushes.failed``); each waits longer before the next try."""
    occurrences: int = 1
    """How many firings of its repeating job this push stands for: the job fired again while
    the push waited, and the push was updated (``due_at`` the last of them) instead of another
    queued."""
    first_due_at: datetime | None = None
    """The first of those firings' due times (``due_at`` is the last)."""
    digest: bool = False
    """The note that tells the person what was dropped while they were away (expired, or held
    back by the caps); it is updated while it waits and never expires."""
    delivered_at: datetime | None = None
    """When a channel delivered it (for a protocol 2 client: when it was acknowledged)."""


@dataclass(frozen=True, slots=True)
class Run:
    """One firing of a job of a ``WORK_KINDS`` kind, waiting for (or done by) its handler."""

    id: int
    job_id: int | None
    namespace: str
    kind: JobKind
    text: str
    """The job's text: what to do (a distillation's tier)."""
    due_at: datetime
    late: bool = False
    failures: int = 0
    """Runs of it that failed so far; each waits longer before the next."""


@dataclass(frozen=True, slots=True)
class PushLimits:
    """How many pushes may wait, and for how long (``schedule:`` in the configuration).

    Past ``per_person`` pending pushes of a person, or ``total`` over everyone, a repeating
    reminder's firing is held back into the person's digest (counted there) instead of queued;
    a one-off reminder is always queued, making room by moving the oldest waiting repeating
    reminder into the digest. A push whose due time (or, without one, creation) is older than
    ``expire_after`` is moved into the digest as expired."""

    per_person: int = 50
    total: int = 1000
    expire_after: timedelta = timedelta(days=7)


class Schedule(Protocol):
    """Durable jobs. Every method is one transaction; ``StoreError`` when storage fails."""

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
        """Stores a job first due at ``at`` (for a repeating one: the first cron time at or
        after ``at``); a reminder gets its namespace's next ``number``. Raises ``ValueError``
        for an invalid cron expression or timezone."""
        ...

    def jobs(
        self, namespace: str | None, *, kind: JobKind | None = None, limit: int | None = None
    ) -> list[Job]:
        """Active jobs of ``namespace`` (every namespace when None), soonest first; the first
        ``limit`` of them when given."""
        ...

    def generation(self) -> tuple[int, int]:
        """A value that differs after any change to any job (added, fired, cancelled,
        forgotten; here or by another process), so readers can cache what they derive from
        jobs."""
        ...

    def count(self, namespace: str | None, *, kind: JobKind | None = None) -> int:
        """How many active jobs ``namespace`` has (every namespace when None)."""
        ...

    def cancel(self, namespace: str, job_id: int, *, now: datetime) -> Job | None:
        """Cancels ``namespace``'s active job ``job_id``; None if it has no such job."""
        ...

    def next_due(self) -> datetime | None:
        """When the soonest active job is due, over every namespace."""
        ...

    def fire_due(self, *, now: datetime, late_after_seconds: float, limit: int) -> list[Push]:
        """Claims up to ``limit`` jobs due at or before ``now``, each claim in the same
        transaction that advances the job (next cron time, or done) and queues its ``Push``: a
        due time is fired exactly once, whoever else (another daemon on the same data dir) is
        firing too.
        A job due more than ``late_after_seconds`` ago fires once (not once per missed time),
        marked late. A repeating reminder whose earlier push still waits updates that push
        (one more ``occurrences``) instead of queueing another; over the ``PushLimits`` caps
        its firing is held back into the person's digest push."""
        ...


class Pushes(Protocol):
    """The outbox of unprompted messages; rows stay until delivered (across restarts)."""

    def add(
        self,
        *,
        namespace: str,
        kind: PushKind,
        text: str,
        target: Target,
        now: datetime,
    ) -> Push:
        """Queues a push not tied to a job (a finished distillation, a notice)."""
        ...

    def claim_pending(
        self,
        *,
        now: datetime,
        lease_seconds: float,
        channel: str | None = None,
        chat_id: str | None = None,
        limit: int = 100,
    ) -> list[Push]:
        """Undelivered pushes (optionally of one channel and chat), oldest first, leased to the
        caller for ``lease_seconds`` so nobody else sends them meanwhile; a lease that runs out
        (the sender died) makes them pending again."""
        ...

    def delivered(self, push_id: int, *, now: datetime) -> bool:
        """Marks the push delivered, so it is never sent again (a gateway client acknowledged
        it, or its channel took it); False when it already was, or there is no such push."""
        ...

    def release(self, push_id: int) -> None:
        """Gives the lease back without delivering (the recipient is away): pending again."""
        ...

    def failed(self, push_id: int, *, retry_at: datetime) -> None:
        """Gives the lease back after a send that raised: pending again from ``retry_at``, with
        one more failure counted."""
        ...

    def expire(self, *, now: datetime) -> int:
        """Moves pushes waiting longer than ``PushLimits.expire_after`` (not leased, not a
        digest) into their person's digest, which tells them on their next contact; returns
        how many."""
        ...


class Runs(Protocol):
    """The firings of work Flynn does itself, queued by ``Schedule.fire_due`` in the claim's
    transaction; a run stays until it is finished (across restarts). ``StoreError`` when
    storage fails."""

    def claim_pending(self, *, now: datetime, lease_seconds: float, limit: int) -> list[Run]:
        """Unfinished runs whose lease (or wait after a failure) ran out, oldest first, leased
        to the caller for ``lease_seconds``."""
        ...

    def finish(self, run_id: int, *, outcome: RunOutcome, now: datetime) -> bool:
        """Records the run finished (its handler succeeded, or it failed too often and was given
        up until the job's next time); False when it already was, or there is no such run."""
        ...

    def failed(self, run_id: int, *, retry_at: datetime) -> None:
        """Gives the lease back after a failed run: pending again from ``retry_at``, with one
        more failure counted."""
        ...

    def release(self, run_id: int) -> None:
        """Gives the lease back unrun or cut short (the daemon stops): pending again now."""
        ...
