"""The service that fires due jobs, hands their pushes to the channels and runs the work Flynn
does itself (a job kind's registered handler), until cancelled.

It sleeps until the next job is due, or until ``wake()`` (a job was added or cancelled), and
never longer than a cap, so clock jumps and jobs added by another process are noticed. The
database is the only state that matters: a restart picks up where it stopped. A push nobody here
could take is announced (``workers``) once it is given back, so the worker holding its
recipient's connection takes it (``deliver_pending``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Protocol

import structlog

from flynn.backoff import Backoff
from flynn.errors import StoreError
from flynn.messages import Delivery
from flynn.schedule.jobs import JobKind, Push, Pushes, Run, Runs, Schedule, Target

log = structlog.get_logger(__name__)

Deliver = Callable[[Push], Awaitable[Delivery]]
"""Sends a push and says what became of it: ``delivered`` (recorded so), ``deferred`` (the
recipient cannot take it now, or has it and not acknowledged it yet: it stays queued, offered
again later, and ``Pushes.delivered`` is called when the acknowledgement comes), ``failed``
(retried later with backoff). Raising counts as ``failed``."""

RunHandler = Callable[[Run], Awaitable[None]]
"""Does one run of a job kind's work (a distillation). Returning is success; raising is a
failure, retried with backoff (``SchedulerConfig.run_attempts`` in all, then given up until the
job's next time). Cancelled when the scheduler stops: the run is offered again at the next start.
"""

Clock = Callable[[], datetime]


class Workers(Protocol):
    """The other workers on the database (``flynn.coordination``'s ``Coordination``)."""

    def push_waiting(self, channel: str, client: str) -> None:
        """Nobody here could take a push for ``client`` (a chat or a recipient) on ``channel``."""
        ...

    def jobs_changed(self) -> None: ...


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    late_after_seconds: float = 300.0
    """A job that fires later than this after its time is marked late (the daemon was down)."""
    lease_seconds: float = 120.0
    """How long a claimed push is ours; longer than a send may take (``send_timeout_seconds``)."""
    retry_seconds: float = 30.0
    """How often undelivered pushes are offered again."""
    max_sleep_seconds: float = 60.0
    """The longest wait between looks at the schedule, whatever ``next_due`` says."""
    send_timeout_seconds: float = 30.0
    backoff_seconds: float = 30.0
    """Wait after a send that raised; doubled per further failure of that push."""
    max_backoff_seconds: float = 3600.0
    batch: int = 100
    concurrent_chats: int = 16
    """Chats sent to at once; each chat's pushes go one after another, oldest first."""
    run_lease_seconds: float = 3600.0
    """How long a run is ours: a run cut short by a crash is offered again once it ran out (a
    stop gives it back at once). Longer than a run may take."""
    run_attempts: int = 3
    """Runs of one firing before it is given up until the job's next time."""


class Scheduler:
    """Fires due jobs and delivers queued pushes through ``deliver``.

    Other processes may fire and deliver from the same database: claims and leases there keep
    every due time fired once and every push sent by one sender at a time.
    """

    def __init__(
        self,
        schedule: Schedule,
        pushes: Pushes,
        deliver: Deliver,
        *,
        clock: Clock,
        runs: Runs | None = None,
        handlers: Mapping[JobKind, RunHandler] | None = None,
        config: SchedulerConfig | None = None,
        workers: Workers | None = None,
    ) -> None:
        """``workers`` is told of each push nobody here could take (sent to nobody), after the
        round gave it back, and of jobs changed here (``changed``)."""
        self._workers = workers
        self._schedule = schedule
        self._pushes = pushes
        self._deliver = deliver
        self._clock = clock
        self._runs = runs
        self._handlers = dict(handlers or {})
        self._config = config or SchedulerConfig()
        self._wake = asyncio.Event()
        self._asleep = asyncio.Event()
        self._running: dict[int, asyncio.Task[None]] = {}
        """Runs under way here, by run id: each in the background, so a long one (a model
        rewriting notes for minutes) holds up no reminder."""

    def wake(self) -> None:
        """Looks at the schedule again now (a job was added or cancelled, a push queued)."""
        self._asleep.clear()
        self._wake.set()

    def changed(self) -> None:
        """A job was added or cancelled here: this scheduler and every other worker's look
        again."""
        self.wake()
        if self._workers is not None:
            self._workers.jobs_changed()

    @property
    def asleep(self) -> asyncio.Event:
        """Set while ``run`` has fired and delivered what it could, no run of work is under way,
        and it waits for the next due time or ``wake()`` (what was due or queued has been dealt
        with); cleared by ``wake()``.
        Part of the contract for whoever needs to know the schedule is settled (the tests, a
        drain); only the scheduler sets or clears it."""
        return self._asleep

    async def run(self) -> None:
        """Fires and delivers until cancelled; jobs missed while nothing ran fire at once,
        marked late. A storage failure is logged and retried after ``retry_seconds``.

        On cancellation a push being sent keeps its lease, so it is offered again once the
        lease runs out (it may have reached the person: at least once, never lost); runs under
        way are cancelled and given back, to run again at the next start."""
        log.info("schedule.started")
        try:
            while True:
                self._wake.clear()
                try:
                    await self.tick()
                    delay = self._delay()
                except StoreError:
                    log.exception("schedule.tick_failed")
                    delay = self._config.retry_seconds
                except Exception:  # task boundary: a bug in one job must not take the daemon down
                    log.exception("schedule.tick_crashed")
                    delay = self._config.retry_seconds
                if not self._running:
                    self._asleep.set()
                try:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(delay):
                            await self._wake.wait()
                finally:
                    self._asleep.clear()
        finally:
            await self._stop_runs()

    async def tick(self) -> int:
        """Fires every job due now, starts the queued runs of work (each in the background),
        expires pushes that waited too long (into a digest), then offers every pending push;
        returns how many pushes were delivered. Raises ``StoreError``."""
        now = self._clock()
        fired = 0
        while (due := self._schedule.next_due()) is not None and due <= now:
            fired += len(
                self._schedule.fire_due(
                    now=now,
                    late_after_seconds=self._config.late_after_seconds,
                    limit=self._config.batch,
                )
            )
        if fired:
            log.info("schedule.fired", pushes=fired)
        self._start_runs(now)
        self._pushes.expire(now=now)
        return await self._deliver_round(None, None)

    async def deliver_pending(self, channel: str, chat_id: str) -> int:
        """Delivers now what waits for ``chat_id`` on ``channel`` (pushes to that chat, or to
        that recipient): the gateway calls this when a client says hello. Returns how many
        were delivered; raises ``StoreError``."""
        return await self._deliver_round(channel, chat_id)

    def _start_runs(self, now: datetime) -> None:
        """Starts, each in the background, the queued runs whose kind has a handler here. A run
        of a kind nobody here handles keeps its lease, so it waits for a process that does."""
        if self._runs is None:
            return
        config = self._config
        for run in self._runs.claim_pending(
            now=now, lease_seconds=config.run_lease_seconds, limit=config.batch
        ):
            handler = self._handlers.get(run.kind)
            if handler is None:
                log.warning("schedule.no_handler", kind=run.kind, run_id=run.id)
            elif run.id not in self._running:  # one still going past its lease runs on
                task = asyncio.create_task(self._run(run, handler), name=f"run:{run.id}")
                self._running[run.id] = task

    async def _run(self, run: Run, handler: RunHandler) -> None:
        """One run and its outcome: finished once it succeeded (or failed ``run_attempts``
        times), else pending again after a backoff. Never raises but ``CancelledError``."""
        assert self._runs is not None
        runs = self._runs
        bound = structlog.contextvars.bound_contextvars(run_id=run.id, kind=run.kind)
        try:
            with bound:
                try:
                    await handler(run)
                except Exception as exc:
                    attempts = run.failures + 1
                    if attempts >= self._config.run_attempts:
                        log.warning(
                            "schedule.run_given_up",
                            attempts=attempts,
                            error=str(exc),
                            exc_info=True,
                        )
                        self._record(
                            lambda: runs.finish(run.id, outcome="given_up", now=self._clock())
                        )
                    else:
                        log.warning(
                            "schedule.run_failed", attempts=attempts, error=str(exc), exc_info=True
                        )
                        retry_at = self._retry_at(run.failures)
                        self._record(lambda: runs.failed(run.id, retry_at=retry_at))
                else:
                    log.info("schedule.run_done")
                    self._record(lambda: runs.finish(run.id, outcome="done", now=self._clock()))
        finally:
            self._running.pop(run.id, None)
        self.wake()

    async def _stop_runs(self) -> None:
        """Cancels the runs under way and gives them back, so the next start runs them."""
        tasks = dict(self._running)
        self._running.clear()
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        if self._runs is not None:
            for run_id in tasks:
                self._record(partial(self._runs.release, run_id))

    def _delay(self) -> float:
        config = self._config
        delay = min(config.max_sleep_seconds, config.retry_seconds)
        due = self._schedule.next_due()
        if due is not None:
            delay = min(delay, max(0.0, (due - self._clock()).total_seconds()))
        return delay

    async def _deliver_round(self, channel: str | None, chat_id: str | None) -> int:
        """Claims and sends batches until none is left. Pushes whose recipient is away keep
        their lease until the round ends, so the round does not claim them again."""
        away: list[int] = []
        nobody: list[Target] = []
        delivered = 0
        try:
            while True:
                claimed = self._pushes.claim_pending(
                    now=self._clock(),
                    lease_seconds=self._config.lease_seconds,
                    channel=channel,
                    chat_id=chat_id,
                    limit=self._config.batch,
                )
                if not claimed:
                    break
                delivered += await self._send_all(claimed, away, nobody)
                if len(claimed) < self._config.batch:
                    break
        finally:
            for push_id in away:
                self._record(partial(self._pushes.release, push_id))
            if self._workers is not None:
                for target in dict.fromkeys(nobody):
                    self._workers.push_waiting(target.channel, target.recipient or target.chat_id)
        return delivered

    async def _send_all(self, claimed: list[Push], away: list[int], nobody: list[Target]) -> int:
        by_chat: dict[Target, list[Push]] = {}
        for push in claimed:
            by_chat.setdefault(push.target, []).append(push)
        limit = asyncio.Semaphore(self._config.concurrent_chats)
        counts: list[int] = []

        async def send_chat(chat: list[Push]) -> None:
            async with limit:
                counts.append(await self._send_chat(chat, away, nobody))

        async with asyncio.TaskGroup() as group:
            for chat in by_chat.values():
                group.create_task(send_chat(chat))
        return sum(counts)

    async def _send_chat(self, chat: list[Push], away: list[int], nobody: list[Target]) -> int:
        """One chat's pushes in order; once one could not be sent, the rest wait with it.
        Returns how many were delivered."""
        delivered = 0
        for index, push in enumerate(chat):
            if not await self._send(push, away, nobody):
                away.extend(later.id for later in chat[index + 1 :])
                break
            delivered += push.id not in away
        return delivered

    async def _send(self, push: Push, away: list[int], nobody: list[Target]) -> bool:
        """Sends one push and records the outcome (an undelivered one joins ``away``, released
        when the round ends, and its target ``nobody`` when it was sent to nobody); whether the
        chat's next push may follow. Never raises but ``CancelledError``."""
        try:
            async with asyncio.timeout(self._config.send_timeout_seconds):
                delivery = await self._deliver(push)
        except Exception as exc:  # a task boundary: one push's send, whatever failed in it
            log.exception("schedule.delivery_crashed", push_id=push.id)
            delivery = Delivery.failed(type(exc).__name__)
        if delivery.state == "failed":
            log.warning(
                "schedule.delivery_failed",
                push_id=push.id,
                channel=push.target.channel,
                failures=push.failures + 1,
                reason=delivery.reason,
            )
            retry_at = self._retry_at(push.failures)
            self._record(lambda: self._pushes.failed(push.id, retry_at=retry_at))
            return False
        if delivery.is_delivered:
            log.info("schedule.push_delivered", push_id=push.id, kind=push.kind, late=push.late)
            self._record(lambda: self._pushes.delivered(push.id, now=self._clock()))
            return True
        log.info("schedule.push_deferred", push_id=push.id, channel=push.target.channel)
        away.append(push.id)
        if not delivery.ids:
            nobody.append(push.target)
        # Sent and awaiting its acknowledgement (``ids``): the chat's next pushes may follow it
        # now; with nobody to take it, they wait with it.
        return bool(delivery.ids)

    def _retry_at(self, failures: int) -> datetime:
        """When to try again after one more failure than ``failures``."""
        config = self._config
        # A chat that blocked the bot keeps failing for as long as the push waits (an hour apart,
        # 1,024 failures is six weeks): ``Backoff`` never overflows however many.
        backoff = Backoff(first=config.backoff_seconds, most=config.max_backoff_seconds)
        return self._clock() + timedelta(seconds=backoff.delay(failures + 1))

    @staticmethod
    def _record(write: Callable[[], object]) -> None:
        try:
            write()
        except StoreError:
            # The lease runs out and the push (or run) is offered again: at least once, never
            # lost.
            log.exception("schedule.outcome_not_recorded")
