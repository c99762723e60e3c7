"""Reminders on the durable schedule: ``reminder_set``, ``reminder_list``, ``reminder_cancel``.

Times are the person's: ``at`` without an offset, and ``repeat`` (a cron expression), are read in
their timezone. Where a reminder goes is decided by ``route`` (the chat it was set in, or the
person's ``notify`` channel).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import Field, model_validator

from flynn.dates import Absolute, parse_moment, read_when
from flynn.schedule.jobs import Job, Schedule, Target
from flynn.schedule.listing import job_when, local_when
from flynn.tools.base import Arguments, ToolContext, ToolError, TypedTool

Route = Callable[[ToolContext], Target | None]
"""Where a reminder set in this context is delivered; None when nowhere can reach the person."""

MAX_REMINDERS = 200
MAX_DELAY_SECONDS = 10 * 366 * 24 * 3600


@dataclass(frozen=True, slots=True)
class ReminderLimits:
    """How many active reminders one person, and everyone together, may hold
    (``schedule.max_reminders_per_person`` / ``max_reminders_total``)."""

    per_person: int = MAX_REMINDERS
    total: int = 10 * MAX_REMINDERS


def render_job(job: Job) -> str:
    """One line a person reads: their number for it, text, when (``local_when``), how often."""
    repeat = f", repeats {job.repeat}" if job.repeat else ""
    return f"{job.number}. {job.text}: {job_when(job)}{repeat}"


def parse_at(text: str, context: ToolContext) -> datetime:
    """An ISO-8601 date or date-time (without an offset: in the person's time), a clock time
    ``HH:MM`` (its next occurrence), or another phrase ``flynn.dates`` reads that has a time in
    it ("in 20 minutes", "at 7pm"). ``ToolError`` otherwise, and for a phrase naming only a day
    ("tomorrow"): a reminder at midnight is not what anyone means."""
    moment = parse_moment(text, now=context.now, tz=context.timezone)
    # An ISO date is a midnight written out; "tomorrow" is not.
    if moment is None or not (moment.has_time or isinstance(read_when(text), Absolute)):
        raise ToolError(
            f"could not read the time {text.strip()!r}: give an ISO date-time such as "
            "2026-05-09T18:30 (the person's local time) or a clock time such as 18:30"
        )
    return moment.at


class ReminderSetArguments(Arguments):
    text: str = Field(min_length=1, max_length=1000, description="What to remind the person of.")
    at: str | None = Field(
        default=None,
        description=(
            "When: an ISO-8601 date-time in the person's local time (2026-05-09T18:30), or a "
            "clock time (18:30, its next occurrence)."
        ),
    )
    in_seconds: int | None = Field(
        default=None, ge=1, le=MAX_DELAY_SECONDS, description="Or: how many seconds from now."
    )
    repeat: str | None = Field(
        default=None,
        max_length=100,
        description=(
            "To repeat: a cron expression in the person's time ('0 8 * * 1-5' is 08:00 on "
            "weekdays), or @daily, @weekly, @monthly. Leave out for a one-off reminder."
        ),
    )

    @model_validator(mode="after")
    def _one_time(self) -> ReminderSetArguments:
        if self.at is not None and self.in_seconds is not None:
            raise ValueError("give either at or in_seconds, not both")
        if self.at is None and self.in_seconds is None and self.repeat is None:
            raise ValueError("say when: at, in_seconds, or repeat")
        return self


class ReminderSet(TypedTool[ReminderSetArguments]):
    name = "reminder_set"
    description = (
        "Schedule a reminder for the person: once (at a time, or in some seconds) or repeating "
        "(a cron expression). Flynn sends it to them when it is due, even if they are not "
        "chatting then. Returns the reminder's number and when it fires."
    )
    arguments = ReminderSetArguments
    writes = True

    def __init__(
        self,
        schedule: Schedule,
        route: Route,
        on_change: Callable[[], None],
        limits: ReminderLimits | None = None,
    ) -> None:
        self._schedule = schedule
        self._route = route
        self._on_change = on_change
        self._limits = limits or ReminderLimits()

    async def run(self, args: ReminderSetArguments, context: ToolContext) -> str:
        target = self._route(context)
        if target is None:
            raise ToolError(
                "this chat cannot receive messages later; set a notify channel for the person "
                "in the configuration (users: NAME: notify: telegram), or set the reminder from "
                "Telegram, Discord or the web chat"
            )
        limits = self._limits
        if self._schedule.count(context.namespace, kind="reminder") >= limits.per_person:
            raise ToolError(
                f"the person already has {limits.per_person} reminders: cancel one first"
            )
        if self._schedule.count(None, kind="reminder") >= limits.total:
            # Unlisted gateway client ids are people of their own: this bounds them together.
            raise ToolError(
                f"this assistant already holds {limits.total} reminders over everyone "
                "(schedule.max_reminders_total): cancel one first"
            )
        if args.in_seconds is not None:
            at = context.now + timedelta(seconds=args.in_seconds)
        elif args.at is not None:
            at = parse_at(args.at, context)
            if at > context.now + timedelta(seconds=MAX_DELAY_SECONDS):
                # Like in_seconds: a time past the cap could not even be shown in every zone.
                raise ToolError(f"{args.at} is too far ahead: at most ten years from now")
            if at < context.now - timedelta(seconds=60) and args.repeat is None:
                it_is = local_when(context.now, context.timezone_name)
                raise ToolError(f"{args.at} is in the past (it is {it_is})")
            # A repeating one starts from now: its times already past must not fire at once.
            at = max(at, context.now)
        else:
            at = context.now
        try:
            job = self._schedule.add(
                namespace=context.namespace,
                kind="reminder",
                text=" ".join(args.text.split()),
                at=at,
                repeat=args.repeat,
                timezone=context.timezone_name,
                target=target,
                now=context.now,
            )
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        self._on_change()
        return "Reminder set: " + render_job(job)


class ReminderListArguments(Arguments):
    pass


class ReminderList(TypedTool[ReminderListArguments]):
    name = "reminder_list"
    description = "List the person's pending reminders with their numbers and next times."
    arguments = ReminderListArguments

    def __init__(self, schedule: Schedule) -> None:
        self._schedule = schedule

    async def run(self, args: ReminderListArguments, context: ToolContext) -> str:
        jobs = self._schedule.jobs(context.namespace, kind="reminder")
        if not jobs:
            return "No reminders are set."
        return "\n".join(render_job(job) for job in jobs)


class ReminderCancelArguments(Arguments):
    id: int = Field(ge=1, description="The reminder's number, as reminder_list shows it.")


class ReminderCancel(TypedTool[ReminderCancelArguments]):
    name = "reminder_cancel"
    description = "Cancel one of the person's reminders, by its number."
    arguments = ReminderCancelArguments
    writes = True

    def __init__(self, schedule: Schedule, on_change: Callable[[], None]) -> None:
        self._schedule = schedule
        self._on_change = on_change

    async def run(self, args: ReminderCancelArguments, context: ToolContext) -> str:
        # ``id`` (the argument's name is a contract) is the person's own number, not the
        # schedule's job id: only their active reminders are looked in.
        reminders = self._schedule.jobs(context.namespace, kind="reminder")
        chosen = next((job for job in reminders if job.number == args.id), None)
        job = (
            None
            if chosen is None
            else self._schedule.cancel(context.namespace, chosen.id, now=context.now)
        )
        if job is None:
            raise ToolError(
                f"there is no pending reminder {args.id} (cancelled, already sent, or never "
                "set); reminder_list (or /reminders in a chat) shows the numbers"
            )
        self._on_change()
        return f"Cancelled reminder {job.number}: {job.text}"
