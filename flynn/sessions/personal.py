"""What is the person's own beside their memory: their folder (``data_dir/<namespace>/``), their
timezone, and the personal files the persona tiers load in their prompt (REMINDERS.md from the
schedule, TASKS.json and SCRATCH.md from their folder)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flynn.dates import parse_timezone
from flynn.memory.store import Facts
from flynn.schedule.jobs import Schedule
from flynn.tools.base import ToolError
from flynn.tools.person_files import (
    REMINDERS_FILE,
    SCRATCH_FILE,
    TASKS_FILE,
    person_directory,
    read_text,
)
from flynn.tools.tasks import load_tasks, render_tasks

MAX_PROMPT_REMINDERS = 20


class PersonalFiles:
    """Reads a person's folder and schedule for their prompt; writes nothing."""

    def __init__(
        self,
        data_dir: Path,
        facts: Facts,
        *,
        schedule: Schedule | None,
        default_timezone: str,
    ) -> None:
        self._data_dir = data_dir
        self._facts = facts
        self._schedule = schedule
        self._default = default_timezone

    def directory(self, namespace: str) -> Path:
        return person_directory(self._data_dir, namespace)

    def timezone(self, namespace: str) -> tuple[tzinfo, str]:
        """Their stored timezone, else the configured one, else the host's (DESIGN.md 14), with
        an IANA name the schedule can read cron expressions in."""
        for fact in self._facts.active(f"{namespace}/profile", field="timezone"):
            zone = parse_timezone(fact.value)
            if zone is not None:
                return zone, zone_name(zone)
        zone = parse_timezone(self._default) or ZoneInfo("UTC")
        return zone, zone_name(zone)

    def prompt_files(
        self, namespace: str, files: Iterable[str], *, now: datetime
    ) -> dict[str, str]:
        """The text of each personal file among ``files`` (those the persona tier loads)."""
        wanted = set(files)
        texts: dict[str, str] = {}
        if REMINDERS_FILE in wanted:
            texts[REMINDERS_FILE] = self._reminders(namespace, now)
        folder = self.directory(namespace)
        if TASKS_FILE in wanted:
            try:
                tasks = load_tasks(folder / TASKS_FILE)
            except ToolError as exc:
                texts[TASKS_FILE] = f"(the task list cannot be read: {exc})"
            else:
                texts[TASKS_FILE] = render_tasks(tasks) if tasks else ""
        if SCRATCH_FILE in wanted:
            try:
                texts[SCRATCH_FILE] = read_text(folder / SCRATCH_FILE)
            except OSError as exc:
                # Read every turn: a file the person broke must not cost them their turns.
                texts[SCRATCH_FILE] = f"(the scratchpad cannot be read: {exc.strerror or exc})"
        return texts

    def _reminders(self, namespace: str, now: datetime) -> str:
        if self._schedule is None:
            return ""
        jobs = self._schedule.jobs(namespace, kind="reminder", limit=MAX_PROMPT_REMINDERS + 1)
        if not jobs:
            return ""
        zone, _ = self.timezone(namespace)
        lines = ["Pending reminders (Flynn sends each when it is due):"]
        for job in jobs[:MAX_PROMPT_REMINDERS]:
            when = job.next_at.astimezone(zone) if job.next_at else None
            at = f"{when:%Y-%m-%d %H:%M}" if when else "-"
            repeat = f", repeats {job.repeat}" if job.repeat else ""
            lines.append(f"- {job.id}. {job.text} (next {at}{repeat})")
        if len(jobs) > MAX_PROMPT_REMINDERS:
            # Not counted: with thousands of reminders, a count would cost every turn a scan.
            lines.append("- … and more (reminder_list shows them all)")
        return "\n".join(lines)


def zone_name(zone: tzinfo) -> str:
    """A name the schedule reads ``zone`` back from: its IANA key, or for a whole-hour fixed
    offset the ``Etc/GMT`` zone (whose sign is inverted by POSIX convention), or for any other
    fixed offset (``UTC+5:30``) the offset itself, as ``UTC+05:30``; UTC when ``zone`` tells
    no offset."""
    key = getattr(zone, "key", None)
    if isinstance(key, str):
        return key
    offset = zone.utcoffset(None)
    if offset is None or not offset:
        return "UTC"
    seconds = int(offset.total_seconds())
    hours, rest = divmod(seconds, 3600)
    if not rest:
        name = f"Etc/GMT{-hours:+d}"
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
        else:
            return name
    sign = "-" if seconds < 0 else "+"
    whole_minutes = abs(seconds) // 60
    # Read back by flynn.schedule.cron.zone (as flynn.dates.parse_timezone reads it).
    return f"UTC{sign}{whole_minutes // 60:02d}:{whole_minutes % 60:02d}"
