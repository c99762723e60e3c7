"""One reminder's time is written one way wherever a person reads it: the chat's reminder tools
(``reminder_set``, and ``reminder_list`` behind ``/reminders``), the memory page's data, and
``flynn reminders`` (its lines): in the reminder's zone, as ``local_when`` writes it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from flynn.identity import Identity
from flynn.memory.browse import SqliteMemoryBrowser
from flynn.memory.stores import SqliteMemory
from flynn.memory_view import MemoryView
from flynn.messages import SessionKey
from flynn.people.files import DirectoryPersonFiles
from flynn.providers.base import ToolCall
from flynn.schedule.jobs import Target
from flynn.schedule.listing import job_line, local_when
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqliteSchedule
from flynn.tools.base import ToolContext, ToolRegistry
from flynn.tools.reminders import ReminderList, ReminderSet

NOW = datetime(2025, 12, 1, 22, 15, tzinfo=UTC)
LISBON = ZoneInfo("Europe/Lisbon")
WHEN = "Tue 2 Dec 2025 09:30 (Europe/Lisbon)"


async def test_one_reminder_reads_the_same_in_chat_on_the_page_and_in_the_cli(
    tmp_path: Path,
) -> None:
    with SqliteMemory.open(tmp_path / "flynn.db", SCHEMA) as memory:
        schedule = SqliteSchedule(memory.db)
        context = ToolContext(
            namespace="user",
            session=SessionKey("gateway", "laptop"),
            person_dir=tmp_path / "user",
            timezone=LISBON,
            timezone_name="Europe/Lisbon",
            now=NOW,
        )
        registry = ToolRegistry(
            [
                ReminderSet(schedule, lambda _: Target("gateway", "laptop"), lambda: None),
                ReminderList(schedule),
            ]
        )
        arguments = {"text": "call mum", "at": "09:30"}  # the next 09:30 in Lisbon: tomorrow
        set_, listed = await registry.run(
            [
                ToolCall("1", "reminder_set", json.dumps(arguments)),
                ToolCall("2", "reminder_list", "{}"),
            ],
            context,
        )
        assert set_.content == f"Reminder set: 1. call mum: {WHEN}"
        assert listed.content == f"1. call mum: {WHEN}"

        view = MemoryView(
            memory,
            SqliteMemoryBrowser(memory.db),
            Identity(user_namespace="user", users={}),
            files=DirectoryPersonFiles(tmp_path),
            clock=lambda: NOW,
            schedule=schedule,
        )
        shown = await view.overview("laptop")
        reminders = shown["reminders"]
        assert isinstance(reminders, dict)
        (page,) = reminders["items"]
        assert page["when"] == WHEN

        (job,) = schedule.jobs("user")
        assert job_line(job) == f"1. call mum: next {WHEN}, once, to gateway chat laptop"


def test_local_when_shows_seconds_only_when_there_are_some_and_names_a_lost_zone() -> None:
    half = timezone(timedelta(hours=5, minutes=30))
    assert local_when(datetime(2026, 3, 5, 2, 0, 7, tzinfo=half), "UTC+05:30") == (
        "Thu 5 Mar 2026 02:00:07 (UTC+05:30)"
    )
    assert local_when(datetime(2026, 3, 5, 9, 0, tzinfo=UTC), "Mars/Olympus") == (
        "Thu 5 Mar 2026 09:00 (UTC)"
    )
