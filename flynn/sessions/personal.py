"""What is the person's own beside their memory: their folder (``data_dir/<namespace>/``, for the
pictures and files they send), their timezone, and the personal files the persona tiers load in
their prompt (USER.md, the distilled MEMORY_*.md, TASKS.json and SCRATCH.md from their files,
REMINDERS.md from their files and the schedule)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import structlog

from flynn.dates import parse_timezone
from flynn.errors import StoreError, UnreadableFile
from flynn.memory.store import Facts
from flynn.people.files import person_directory
from flynn.people.store import (
    MEMORY_FILES,
    REMINDERS_FILE,
    SCRATCH_FILE,
    TASKS_FILE,
    USER_FILE,
    PersonFiles,
)
from flynn.people.tasks import parse_tasks, render_tasks
from flynn.persona import clean_file_text
from flynn.schedule.jobs import Schedule

log = structlog.get_logger(__name__)

MAX_PROMPT_REMINDERS = 20
_NOTES = (USER_FILE, *MEMORY_FILES.values(), REMINDERS_FILE)
"""The person's files read as notes: comments dropped, re-read only when they change."""


TimezoneSource = Literal["fact", "config", "host"]
"""Where a person's timezone came from: their own stored fact, ``persona.timezone``, or the
machine Flynn runs on."""

_FROM: dict[TimezoneSource, str] = {
    "fact": "from what you told me",
    "config": "from persona.timezone",
    "host": "the host's",
}


@dataclass(frozen=True, slots=True)
class PersonTimezone:
    """A person's timezone, the IANA name the schedule reads cron expressions in, and where it
    came from."""

    zone: tzinfo
    name: str
    source: TimezoneSource

    def describe(self) -> str:
        """``Europe/Lisbon, from what you told me``: what ``/status`` says of it."""
        return f"{self.name}, {_FROM[self.source]}"


@dataclass(frozen=True, slots=True)
class _Read:
    raw: str
    text: str


class PersonalFiles:
    """Reads a person's files and schedule for their prompt; writes nothing but the templates
    of their first message."""

    def __init__(
        self,
        data_dir: Path,
        facts: Facts,
        *,
        files: PersonFiles,
        schedule: Schedule | None,
        default_timezone: str,
        default_source: Literal["config", "host"] = "config",
    ) -> None:
        """``default_timezone`` is the zone of people who stored none: ``persona.timezone``
        (``default_source`` "config") or the machine's ("host")."""
        self._data_dir = data_dir
        self._facts = facts
        self.files = files
        self._schedule = schedule
        self._default = default_timezone
        self._default_source: TimezoneSource = default_source
        self._read: dict[tuple[str, str], _Read] = {}
        self._unreadable: dict[tuple[str, str], str] = {}
        # Each person's timezone as of the facts' generation it was found in.
        self._zones: dict[str, tuple[tuple[int, int], PersonTimezone]] = {}
        # Each person's reminders as shown, as of the jobs' and the facts' generations.
        self._shown: dict[str, tuple[tuple[tuple[int, int], tuple[int, int]], str]] = {}

    def directory(self, namespace: str) -> Path:
        """The person's folder for the pictures and files they send."""
        return person_directory(self._data_dir, namespace)

    def ensure_templates(self, namespace: str) -> None:
        """Gives a person their files' templates at their first message (the owner's come
        from ``flynn init``); files that cannot be written are logged, never raised."""
        try:
            written = self.files.write_templates(namespace)
        except (OSError, StoreError) as exc:
            log.warning("person.templates_not_written", namespace=namespace, error=str(exc))
            return
        if written:
            log.info("person.templates_written", namespace=namespace, files=len(written))

    def timezone(self, namespace: str) -> tuple[tzinfo, str]:
        """Their stored timezone, else the configured one, else the host's, with
        an IANA name the schedule can read cron expressions in."""
        found = self.timezone_of(namespace)
        return found.zone, found.name

    def timezone_of(self, namespace: str) -> PersonTimezone:
        """Their timezone and where it came from: the newest stored ``timezone`` fact that
        names a zone, whoever learnt it (the rules and the ``remember`` tool keep it in
        ``<namespace>/profile``, the extraction model in ``<namespace>/facts``), else the
        configured zone, else the host's. Looked up again whenever any fact changed
        (``Facts.generation``: here or in another process), so a fact learnt during a
        conversation applies from the next turn."""
        generation = self._facts.generation()
        known = self._zones.get(namespace)
        if known is not None and known[0] == generation:
            return known[1]
        found = self._find_timezone(namespace)
        self._zones[namespace] = (generation, found)
        return found

    def _find_timezone(self, namespace: str) -> PersonTimezone:
        stated = [
            fact
            for where in (f"{namespace}/profile", f"{namespace}/facts")
            for fact in self._facts.active(where, field="timezone")
        ]
        stated.sort(key=lambda fact: fact.updated_at, reverse=True)
        for fact in stated:
            zone = parse_timezone(fact.value)
            if zone is not None:
                return PersonTimezone(zone, zone_name(zone), "fact")
        zone = parse_timezone(self._default)
        if zone is None:
            return PersonTimezone(ZoneInfo("UTC"), "UTC", self._default_source)
        return PersonTimezone(zone, zone_name(zone), self._default_source)

    def prompt_files(
        self, namespace: str, files: Iterable[str], *, now: datetime
    ) -> dict[str, str]:
        """The text of each personal file among ``files`` (those the persona tier loads)."""
        wanted = set(files)
        found = self.files.read_each(
            namespace, [name for name in (*_NOTES, TASKS_FILE, SCRATCH_FILE) if name in wanted]
        )
        texts: dict[str, str] = {}
        for name in _NOTES:
            if name in wanted:
                texts[name] = self._note(namespace, name, found[name])
        if REMINDERS_FILE in wanted:
            scheduled = self._reminders(namespace, now)
            texts[REMINDERS_FILE] = "\n\n".join(
                text for text in (texts[REMINDERS_FILE], scheduled) if text
            )
        if TASKS_FILE in wanted:
            texts[TASKS_FILE] = _tasks(found[TASKS_FILE])
        if SCRATCH_FILE in wanted:
            scratch = found[SCRATCH_FILE]
            # Read every turn: a file the person broke must not cost them their turns.
            texts[SCRATCH_FILE] = (
                f"(the scratchpad cannot be read: {scratch})"
                if isinstance(scratch, UnreadableFile)
                else scratch
            )
        return texts

    def _note(self, namespace: str, name: str, raw: str | UnreadableFile) -> str:
        """The file's text (``raw``, as read) without its guidance comments, '' when it is
        missing or cannot be read (logged once per change of what is wrong, not once per turn).
        Cleaned again only when the text changed."""
        key = (namespace, name)
        if isinstance(raw, UnreadableFile):
            if self._unreadable.get(key) != str(raw):
                log.warning("person.file_unreadable", namespace=namespace, error=str(raw))
                self._unreadable[key] = str(raw)
            self._read.pop(key, None)
            return ""
        self._unreadable.pop(key, None)
        if not raw:
            self._read.pop(key, None)
            return ""
        cached = self._read.get(key)
        if cached is not None and cached.raw == raw:
            return cached.text
        text = clean_file_text(name, raw)
        self._read[key] = _Read(raw, text)
        return text

    def _reminders(self, namespace: str, now: datetime) -> str:
        """The person's next reminders as listed in their prompt, listed again only when a job
        or a fact (their timezone) changed."""
        if self._schedule is None:
            return ""
        generations = (self._schedule.generation(), self._facts.generation())
        shown = self._shown.get(namespace)
        if shown is not None and shown[0] == generations:
            return shown[1]
        text = self._list_reminders(self._schedule, namespace)
        self._shown[namespace] = (generations, text)
        return text

    def _list_reminders(self, schedule: Schedule, namespace: str) -> str:
        jobs = schedule.jobs(namespace, kind="reminder", limit=MAX_PROMPT_REMINDERS + 1)
        if not jobs:
            return ""
        zone, _ = self.timezone(namespace)
        lines = ["Pending reminders (Flynn sends each when it is due):"]
        for job in jobs[:MAX_PROMPT_REMINDERS]:
            when = job.next_at.astimezone(zone) if job.next_at else None
            at = f"{when:%Y-%m-%d %H:%M}" if when else "-"
            repeat = f", repeats {job.repeat}" if job.repeat else ""
            lines.append(f"- {job.number}. {job.text} (next {at}{repeat})")
        if len(jobs) > MAX_PROMPT_REMINDERS:
            # Not counted: with thousands of reminders, a count would cost every turn a scan.
            lines.append("- … and more (reminder_list shows them all)")
        return "\n".join(lines)


def _tasks(raw: str | UnreadableFile) -> str:
    """The task list as the prompt shows it: the open tasks, or why the list cannot be read."""
    if isinstance(raw, UnreadableFile):
        return f"(the task list cannot be read: {raw})"
    try:
        tasks = parse_tasks(raw)
    except UnreadableFile as exc:
        return f"(the task list cannot be read: {exc})"
    return render_tasks(tasks) if tasks else ""


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
    # Read back by flynn.cron.zone (as flynn.dates.parse_timezone reads it).
    return f"UTC{sign}{whole_minutes // 60:02d}:{whole_minutes % 60:02d}"
