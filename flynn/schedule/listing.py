"""Jobs as people read them (``flynn reminders``, ``flynn doctor``): times in the job's own zone."""

from __future__ import annotations

from datetime import datetime

from flynn.cron import zone
from flynn.schedule.jobs import Job, Target
from flynn.schedule.routes import OWN_CHANNEL


def local_next(job: Job) -> datetime | None:
    """When ``job`` fires next, in its timezone (UTC if that zone is gone)."""
    if job.next_at is None:
        return None
    try:
        return job.next_at.astimezone(zone(job.timezone))
    except ValueError:
        return job.next_at


def describe_target(target: Target | None) -> str:
    if target is None:
        return "nowhere (no chat can receive it)"
    if target.channel == OWN_CHANNEL:
        return "Flynn itself"
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
    when = local_next(job)
    at = "no further time" if when is None else f"{when:%a %d %b %Y %H:%M} ({job.timezone})"
    repeat = f", repeats {job.repeat}" if job.repeat else ", once"
    owner = f"[{job.namespace}] " if with_namespace else ""
    label = f"{job.number}. " if job.kind == "reminder" else f"({job.kind}) "
    return f"{owner}{label}{job.text}: next {at}{repeat}, to {describe_target(job.target)}"


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
