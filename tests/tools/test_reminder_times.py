"""reminder_set's times: a repeating reminder never fires for a time already past, a time beyond
the delay cap is refused like an ``in_seconds`` one, and a person whose timezone is a fixed
offset that is not a whole hour gets repeats in their own time."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path

import pytest

from flynn.memory.database import Database
from flynn.messages import SessionKey
from flynn.providers.base import ToolCall
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqliteSchedule
from flynn.sessions.personal import zone_name
from flynn.tools.base import ToolContext, ToolRegistry
from flynn.tools.reminders import ReminderList, ReminderSet

NOW = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
CHAT = Target(channel="gateway", chat_id="laptop")


@pytest.fixture
def schedule(tmp_path: Path) -> Iterator[SqliteSchedule]:
    with Database.open(tmp_path / "flynn.db", SCHEMA) as db:
        yield SqliteSchedule(db)


def _context(tmp_path: Path, zone: tzinfo = UTC) -> ToolContext:
    return ToolContext(
        namespace="user",
        session=SessionKey("gateway", "laptop"),
        person_dir=tmp_path / "user",
        timezone=zone,
        timezone_name=zone_name(zone),
        now=NOW,
    )


async def _call(
    schedule: SqliteSchedule, context: ToolContext, name: str, arguments: dict[str, object]
) -> tuple[bool, str]:
    registry = ToolRegistry(
        [ReminderSet(schedule, lambda _: CHAT, lambda: None), ReminderList(schedule)]
    )
    (result,) = await registry.run([ToolCall("1", name, json.dumps(arguments))], context)
    return result.is_error, result.content


async def test_a_repeating_reminder_from_a_past_time_starts_at_its_next_time_not_now(
    schedule: SqliteSchedule, tmp_path: Path
) -> None:
    # It is 09:30; "every day at 8, from today 08:00" must not fire at once for 08:00 today.
    failed, _ = await _call(
        schedule,
        _context(tmp_path),
        "reminder_set",
        {"text": "vitamins", "at": "2026-11-02T08:00", "repeat": "0 8 * * *"},
    )
    assert not failed
    (job,) = schedule.jobs("user")
    assert job.next_at == datetime(2026, 11, 3, 8, 0, tzinfo=UTC)
    assert schedule.fire_due(now=NOW, late_after_seconds=300, limit=10) == []


async def test_a_time_beyond_the_delay_cap_is_refused_and_nothing_is_stored(
    schedule: SqliteSchedule, tmp_path: Path
) -> None:
    # Stored, a year-9999 time overflowed every later rendering in a zone east of UTC: the
    # person's prompt (each turn) and reminder_list.
    context = _context(tmp_path, timezone(timedelta(hours=14)))
    failed, text = await _call(
        schedule, context, "reminder_set", {"text": "x", "at": "9999-12-31T23:30:00Z"}
    )
    assert failed and "too far" in text
    assert schedule.jobs("user") == []
    failed, text = await _call(schedule, context, "reminder_list", {})
    assert not failed and text == "No reminders are set."


async def test_repeats_follow_a_half_hour_fixed_offset(
    schedule: SqliteSchedule, tmp_path: Path
) -> None:
    india = timezone(timedelta(hours=5, minutes=30))  # a timezone fact "UTC+5:30"
    context = _context(tmp_path, india)
    failed, text = await _call(
        schedule, context, "reminder_set", {"text": "walk", "repeat": "0 8 * * *"}
    )
    assert not failed, text
    (job,) = schedule.jobs("user")
    assert job.next_at is not None
    local = job.next_at.astimezone(india)
    assert (local.hour, local.minute) == (8, 0)
    assert "08:00 (UTC+05:30)" in text


async def test_at_reads_the_same_phrases_as_every_other_date_in_flynn(
    schedule: SqliteSchedule, tmp_path: Path
) -> None:
    context = _context(tmp_path)
    failed, text = await _call(
        schedule, context, "reminder_set", {"text": "tea", "at": "in 20 minutes"}
    )
    assert not failed, text
    failed, text = await _call(schedule, context, "reminder_set", {"text": "call", "at": "at 7pm"})
    assert not failed, text
    assert [job.next_at for job in schedule.jobs("user")] == [
        NOW + timedelta(minutes=20),
        datetime(2026, 11, 2, 19, 0, tzinfo=UTC),
    ]


async def test_a_day_without_a_time_is_refused_and_nothing_is_stored(
    schedule: SqliteSchedule, tmp_path: Path
) -> None:
    failed, text = await _call(
        schedule, _context(tmp_path), "reminder_set", {"text": "x", "at": "tomorrow"}
    )
    assert failed and "could not read the time 'tomorrow'" in text
    assert schedule.jobs("user") == []
