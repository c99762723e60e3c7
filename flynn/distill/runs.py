"""Distillations on the durable schedule: one repeating ``distill`` job per person
and tier, in the person's time, kept in step with the ``distill:`` settings at every start.

A job's firing queues a push addressed to Flynn itself (channel ``DISTILL_CHANNEL``, one chat
per person), so the run is as durable as a reminder: the daemon's delivery of that push *is*
the run, in the background; the push counts as delivered only once the run ended, so a run cut
short by a stop or a crash runs again at the next start, and one that failed is retried with
the schedule's backoff, then given up (the old file stays).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from datetime import datetime

import structlog

from flynn.distill.distiller import TIERS, Distilled, Distiller, DistillFailed, Tier
from flynn.errors import StoreError
from flynn.schedule.jobs import Push, Pushes, Schedule, Target
from flynn.schedule.routes import OWN_CHANNEL

log = structlog.get_logger(__name__)

DISTILL_CHANNEL = OWN_CHANNEL

MAX_ATTEMPTS = 3
"""Runs of one due distillation before it is given up until its next time."""

ANNOUNCED: frozenset[Tier] = frozenset({"mid", "long"})
"""The tiers whose finished runs the person hears about: the weekly and monthly
rewrites, not the daily digest, which would be a note a day about nothing they asked for."""


def plan_jobs(
    schedule: Schedule,
    people: Mapping[str, str],
    crons: Mapping[Tier, str | None],
    *,
    now: datetime,
) -> int:
    """Makes each person's ``distill`` jobs match ``crons`` (a tier's cron expression, or
    ``None`` for no schedule) read in their timezone (``people``: namespace -> IANA name or
    fixed offset): adds what is missing, replaces what changed, cancels what is turned off,
    and cancels the jobs of anyone no longer among ``people``. Returns how many jobs changed.
    Raises ``StoreError``."""
    changed = 0
    for namespace, timezone in people.items():
        target = Target(DISTILL_CHANNEL, chat_id=namespace)
        existing = {job.text: job for job in schedule.jobs(namespace, kind="distill")}
        for tier in TIERS:
            cron = crons.get(tier)
            job = existing.pop(tier, None)
            if job is not None and job.repeat == cron and job.timezone == timezone:
                continue
            if job is not None:
                schedule.cancel(namespace, job.id, now=now)
                changed += 1
            if cron is not None:
                schedule.add(
                    namespace=namespace,
                    kind="distill",
                    text=tier,
                    at=now,
                    repeat=cron,
                    timezone=timezone,
                    target=target,
                    now=now,
                )
                changed += 1
        for stray in existing.values():  # a tier this version does not know
            schedule.cancel(namespace, stray.id, now=now)
            changed += 1
    for job in schedule.jobs(None, kind="distill"):
        if job.namespace not in people:  # someone no longer configured (or the owner, gone)
            schedule.cancel(job.namespace, job.id, now=now)
            changed += 1
    if changed:
        log.info("distill.scheduled", people=len(people), jobs_changed=changed)
    return changed


def is_distillation(push: Push) -> bool:
    return push.target.channel == DISTILL_CHANNEL


class DistillRuns:
    """The daemon's side of scheduled distillations: ``deliver`` starts a push's run in the
    background and reports it delivered once it ended (``on_done`` asks the scheduler to look
    again then). With ``notify``, a finished mid or long run (``ANNOUNCED``) queues a
    ``distill`` push to the person. Not ``enabled`` (``distill.enabled: false``), a push left
    queued from before is dropped unrun."""

    def __init__(
        self,
        distiller: Distiller,
        pushes: Pushes,
        *,
        notify: Callable[[str], Target | None] | None,
        on_done: Callable[[], None],
        clock: Callable[[], datetime],
        enabled: bool = True,
    ) -> None:
        self._distiller = distiller
        self._pushes = pushes
        self._notify = notify
        self._on_done = on_done
        self._clock = clock
        self._enabled = enabled
        self._running: dict[int, asyncio.Task[Distilled]] = {}

    async def deliver(self, push: Push) -> bool:
        """The scheduler's delivery of a distillation push: False while its run goes on (it
        stays queued), True once it succeeded or was given up; raises ``DistillFailed`` after a
        failed run, so the scheduler retries it later."""
        task = self._running.get(push.id)
        if task is None:
            if push.text not in TIERS:
                log.warning("distill.unknown_tier", tier=push.text, push_id=push.id)
                return True
            if not self._enabled:
                # Fired before distillation was turned off: off means no scheduled runs.
                log.info("distill.dropped", tier=push.text, push_id=push.id, reason="disabled")
                return True
            task = asyncio.create_task(
                self._run(push.text, push.namespace), name=f"distill:{push.id}"
            )
            task.add_done_callback(lambda _: self._on_done())
            self._running[push.id] = task
            return False
        if not task.done():
            return False
        del self._running[push.id]
        error = task.exception()
        if error is None:
            return True
        if push.failures + 1 >= MAX_ATTEMPTS:
            log.warning(
                "distill.given_up",
                tier=push.text,
                namespace=push.namespace,
                attempts=push.failures + 1,
                error=str(error),
            )
            return True
        raise DistillFailed(f"distill {push.text} for {push.namespace}: {error}") from error

    async def _run(self, tier: Tier, namespace: str) -> Distilled:
        result = await self._distiller.run(tier, namespace)
        if tier not in ANNOUNCED or self._notify is None or result.empty:
            return result
        target = self._notify(namespace)
        if target is not None:
            try:
                self._pushes.add(
                    namespace=namespace,
                    kind="distill",
                    text=notice(result),
                    target=target,
                    now=self._clock(),
                )
            except StoreError:
                log.exception("distill.notice_not_queued", tier=tier, namespace=namespace)
        return result

    async def aclose(self) -> None:
        """Stops the runs in progress; their pushes stay queued and run at the next start."""
        tasks = list(self._running.values())
        self._running.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def notice(result: Distilled) -> str:
    """What the person is told when a distillation finished."""
    span = {"short": "recent days", "mid": "recent weeks", "long": "the long run"}[result.tier]
    if not result.changed:
        return f"I went over my notes on {span} ({result.path.name}); nothing new to add."
    return (
        f"I've updated my notes on {span} ({result.path.name}, {result.tokens:,} tokens). "
        "Ask me what I remember, or see the file in your folder."
    )
