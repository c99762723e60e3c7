"""Jobs as people read them (``flynn reminders``, ``flynn doctor``, the chat's reminder tools,
the memory page): times in the job's own zone, written by ``flynn.dates.local_when`` everywhere."""

from __future__ import annotations

from datetime import datetime

from flynn.cron import zone
from flynn.dates import local_when
from flynn.schedule.jobs import WORK_KINDS, Job, Target

__all__ = ["describe_target", "job_json", "job_line", "job_when", "local_next", "local_when"]


def local_next(job: Job) -> datetime | None:
    """When ``job`` fires next, in its timezone (UTC if that zone is gone)."""
    if job.next_at is None:
        return None
    try:
        return job.next_at.astimezone(zone(job.timezone))
    except ValueError:
        return job.next_at


def job_when(job: Job) -> str:
    """When ``job`` fires next, as ``local_when`` writes it; "no further time" when never."""
    return "no further time" if job.next_at is None else local_when(job.next_at, job.timezone)


def describe_target(target: Target | None) -> str:
    if target is None:
        return "nowhere (no chat can receive it)"
    if target.recipient and not target.chat_id:
        where = f"{target.channel} to {target.recipient}"
    else:
        where = f"{target.channel} chat {target.chat_id}"
        if target.recipient:
            where += f" for {target.recipient}"
    return where + (f" thread {target.thread}" if target.thread else "")


def job_line(job: Job, *, with_namespace: bool = False) -> str:
    """``3. call mum: next Sat 28 Mar 2026 18:30 (Europe/Lisbon), repeats 0 8 * * *, to ...``:
    a reminder by its person's number (what they type to cancel it); another kind of job, which
    nobody cancels by number, by its kind (``(distill) short: ...``)."""
    at = job_when(job)
    repeat = f", repeats {job.repeat}" if job.repeat else ", once"
    owner = f"[{job.namespace}] " if with_namespace else ""
    label = f"{job.number}. " if job.kind == "reminder" else f"({job.kind}) "
    # Work Flynn does itself has no target: nobody is sent anything.
    to = "Flynn itself" if job.kind in WORK_KINDS else describe_target(job.target)
    return f"{owner}{label}{job.text}: next {at}{repeat}, to {to}"


def job_json(job: Job) -> dict[str, object]:
    """``id`` is the schedule's job id (unique across everyone); ``number`` a reminder's number
    as its person sees it (null for other kinds of job)."""
    when = local_next(job)
    target = job.target
    return {
        "id": job.id,
        "number": job.number,
        "namespace": job.namespace,
        "kind": job.kind,
        "text": job.text,
        "next_at": None if when is None else when.isoformat(),
        "timezone": job.timezone,
        "repeat": job.repeat,
        "target": None
        if target is None
        else {
            "channel": target.channel,
            "chat_id": target.chat_id,
            "thread": target.thread,
            "recipient": target.recipient,
        },
        "fired_count": job.fired_count,
        "last_fired_at": None if job.last_fired_at is None else job.last_fired_at.isoformat(),
        "created_at": job.created_at.isoformat(),
    }
