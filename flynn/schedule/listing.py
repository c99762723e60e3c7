"""Jobs as people read them (``flynn reminders``, ``flynn doctor``, the chat's reminder tools,
the memory page): times in the job's own zone, written by ``local_when`` everywhere."""

from __future__ import annotations

from datetime import UTC, datetime

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


def local_when(moment: datetime, timezone: str) -> str:
    """``Tue 2 Dec 2025 09:30 (Europe/Lisbon)``: ``moment`` in ``timezone`` (an IANA name or a
    fixed offset such as ``UTC+05:30``), seconds only when there are some. The one way a
    reminder's time is written, in chat, on the memory page and by ``flynn reminders``; a zone
    that is gone is shown as UTC, and named so."""
    try:
        local = moment.astimezone(zone(timezone))
    except ValueError:
        local, timezone = moment.astimezone(UTC), "UTC"
    clock = f"{local:%H:%M}" + (f":{local:%S}" if local.second else "")
    return f"{local:%a} {local.day} {local:%b %Y} {clock} ({timezone})"


def job_when(job: Job) -> str:
    """When ``job`` fires next, as ``local_when`` writes it; "no further time" when never."""
    return "no further time" if job.next_at is None else local_when(job.next_at, job.timezone)


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
    at = job_when(job)
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
