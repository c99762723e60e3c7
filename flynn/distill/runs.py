"""Distillations on the durable schedule: one repeating ``distill`` job per person
and tier, in the person's time, kept in step with the ``distill:`` settings at every start.

``distill`` is a job kind the scheduler runs (``flynn.schedule.jobs.WORK_KINDS``): a firing queues
a run, as durable as a reminder, and ``DistillRuns.run`` is the handler the scheduler calls for
it, in the background. A run cut short by a stop runs again at the next start; one that failed is
retried with the schedule's backoff, then given up (the old file stays). Nobody is sent anything
but, with ``distill.notify``, the note that a mid or long rewrite finished.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

import structlog

from flynn.distill.distiller import TIERS, Distilled, Distiller, Tier
from flynn.errors import StoreError
from flynn.schedule.jobs import Pushes, Run, Schedule, Target

log = structlog.get_logger(__name__)

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
                    target=None,
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


class DistillRuns:
    """The scheduler's handler for ``distill`` runs (``run``). With ``notify``, a finished mid
    or long run (``ANNOUNCED``) queues a ``distill`` push to the person. Not ``enabled``
    (``distill.enabled: false``), a run left queued from before is dropped unrun."""

    def __init__(
        self,
        distiller: Distiller,
        pushes: Pushes,
        *,
        notify: Callable[[str], Target | None] | None,
        clock: Callable[[], datetime],
        enabled: bool = True,
    ) -> None:
        self._distiller = distiller
        self._pushes = pushes
        self._notify = notify
        self._clock = clock
        self._enabled = enabled

    async def run(self, run: Run) -> None:
        """Distills ``run``'s tier (its text) for its person. Raises ``DistillFailed`` when the
        run failed (the scheduler retries it); returns at once, unrun, for a tier this version
        does not know or when distillation is off. Cancellable: the old file stays."""
        tier = next((known for known in TIERS if known == run.text), None)
        if tier is None:
            log.warning("distill.unknown_tier", tier=run.text, run_id=run.id)
            return
        if not self._enabled:
            # Fired before distillation was turned off: off means no scheduled runs.
            log.info("distill.dropped", tier=tier, run_id=run.id, reason="disabled")
            return
        result = await self._distiller.run(tier, run.namespace)
        if tier not in ANNOUNCED or self._notify is None or result.empty:
            return
        target = self._notify(run.namespace)
        if target is not None:
            try:
                self._pushes.add(
                    namespace=run.namespace,
                    kind="distill",
                    text=notice(result),
                    target=target,
                    now=self._clock(),
                )
            except StoreError:
                log.exception("distill.notice_not_queued", tier=tier, namespace=run.namespace)


def notice(result: Distilled) -> str:
    """What the person is told when a distillation finished."""
    span = {"short": "recent days", "mid": "recent weeks", "long": "the long run"}[result.tier]
    if not result.changed:
        return f"I went over my notes on {span} ({result.name}); nothing new to add."
    return (
        f"I've updated my notes on {span} ({result.name}, {result.tokens:,} tokens). "
        "Ask me what I remember, or see the file in your folder."
    )
