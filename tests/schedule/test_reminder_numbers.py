"""Each person's reminders are numbered on their own (1, 2, 3 in the order they set them), in
what ``reminder_set``, ``reminder_list`` and ``reminder_cancel`` say and take: the distillation
jobs and other people's reminders share the schedule but not the numbers, and a number is never
handed out twice, so cancelling one renumbers nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from schedule.conftest import ScheduleStore

from flynn.distill.distiller import TIERS
from flynn.distill.runs import plan_jobs
from flynn.memory.database import Database
from flynn.messages import SessionKey
from flynn.providers.base import ToolCall
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.postgres import PostgresSchedule
from flynn.schedule.sqlite import SqliteSchedule
from flynn.tools.base import ToolContext, ToolRegistry
from flynn.tools.reminders import ReminderCancel, ReminderList, ReminderSet

NOW = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
CHAT = Target(channel="gateway", chat_id="laptop")
ALICE = "users/alice"
BOB = "users/bob"


@pytest.fixture
def schedule(store: ScheduleStore) -> SqliteSchedule | PostgresSchedule:
    """On both backends."""
    return store.schedule(None)


def _distill_jobs(schedule: SqliteSchedule | PostgresSchedule, *namespaces: str) -> None:
    """What a daemon's first start schedules: three distillation runs per person."""
    crons = dict.fromkeys(TIERS, "0 3 * * *")
    assert plan_jobs(schedule, dict.fromkeys(namespaces, "UTC"), crons, now=NOW) == 3 * len(
        namespaces
    )


async def _call(
    schedule: SqliteSchedule | PostgresSchedule,
    namespace: str,
    name: str,
    arguments: dict[str, object],
) -> tuple[bool, str]:
    context = ToolContext(
        namespace=namespace,
        session=SessionKey("gateway", namespace),
        person_dir=Path("/nonexistent"),
        timezone=UTC,
        timezone_name="UTC",
        now=NOW,
    )
    registry = ToolRegistry(
        [
            ReminderSet(schedule, lambda _: CHAT, lambda: None),
            ReminderList(schedule),
            ReminderCancel(schedule, lambda: None),
        ]
    )
    (result,) = await registry.run([ToolCall("1", name, json.dumps(arguments))], context)
    return result.is_error, result.content


async def _set(
    schedule: SqliteSchedule | PostgresSchedule, namespace: str, text: str, minutes: int
) -> str:
    failed, reply = await _call(
        schedule, namespace, "reminder_set", {"text": text, "in_seconds": minutes * 60}
    )
    assert not failed, reply
    return reply


async def _listed(schedule: SqliteSchedule | PostgresSchedule, namespace: str) -> list[str]:
    failed, text = await _call(schedule, namespace, "reminder_list", {})
    assert not failed, text
    return [line.split(": ")[0] for line in text.splitlines()]


async def test_a_persons_first_reminder_is_1_after_the_distillation_jobs(
    schedule: SqliteSchedule | PostgresSchedule,
) -> None:
    _distill_jobs(schedule, "user")
    reply = await _set(schedule, "user", "stretch", 10)
    assert reply == "Reminder set: 1. stretch: Mon 2 Nov 2026 09:40 (UTC)"
    assert await _listed(schedule, "user") == ["1. stretch"]
    assert [job.number for job in schedule.jobs("user", kind="distill")] == [None] * 3


async def test_two_people_each_number_their_own_reminders_from_1(
    schedule: SqliteSchedule | PostgresSchedule,
) -> None:
    _distill_jobs(schedule, ALICE, BOB)
    assert (await _set(schedule, ALICE, "call mum", 30)).startswith("Reminder set: 1. call mum")
    assert (await _set(schedule, BOB, "water plants", 20)).startswith("Reminder set: 1. water")
    assert (await _set(schedule, BOB, "bins out", 40)).startswith("Reminder set: 2. bins out")
    assert (await _set(schedule, ALICE, "dentist", 10)).startswith("Reminder set: 2. dentist")
    # Listed soonest first, each by the number it was given.
    assert await _listed(schedule, ALICE) == ["2. dentist", "1. call mum"]
    assert await _listed(schedule, BOB) == ["1. water plants", "2. bins out"]


async def test_cancelling_renumbers_nothing_and_a_number_is_never_reused(
    schedule: SqliteSchedule | PostgresSchedule,
) -> None:
    for minutes, text in enumerate(("one", "two", "three"), start=1):
        await _set(schedule, ALICE, text, minutes)
    failed, reply = await _call(schedule, ALICE, "reminder_cancel", {"id": 2})
    assert not failed and reply == "Cancelled reminder 2: two"
    assert await _listed(schedule, ALICE) == ["1. one", "3. three"]

    failed, reply = await _call(schedule, ALICE, "reminder_cancel", {"id": 3})
    assert not failed and reply == "Cancelled reminder 3: three"
    # The newest number is gone from the active ones; the next is still after it.
    assert (await _set(schedule, ALICE, "four", 4)).startswith("Reminder set: 4. four")

    # A reminder that fired and is done keeps its number too.
    assert len(schedule.fire_due(now=NOW + timedelta(minutes=1), late_after_seconds=60, limit=9))
    assert await _listed(schedule, ALICE) == ["4. four"]
    assert (await _set(schedule, ALICE, "five", 5)).startswith("Reminder set: 5. five")

    failed, reply = await _call(schedule, ALICE, "reminder_cancel", {"id": 2})
    assert failed and "no pending reminder 2" in reply and "reminder_list" in reply


async def test_another_persons_number_is_refused_and_theirs_is_untouched(
    schedule: SqliteSchedule | PostgresSchedule,
) -> None:
    for minutes, text in enumerate(("alice 1", "alice 2", "alice 3"), start=1):
        await _set(schedule, ALICE, text, minutes)
    await _set(schedule, BOB, "bob 1", 5)

    failed, reply = await _call(schedule, BOB, "reminder_cancel", {"id": 3})
    assert failed
    assert reply == (
        "error: there is no pending reminder 3 (cancelled, already sent, or never set); "
        "reminder_list (or /reminders in a chat) shows the numbers"
    )
    # Bob's 1 is his own, not alice's 1 (nor the job whose schedule-wide id is 1).
    failed, reply = await _call(schedule, BOB, "reminder_cancel", {"id": 1})
    assert not failed and reply == "Cancelled reminder 1: bob 1"
    assert await _listed(schedule, ALICE) == ["1. alice 1", "2. alice 2", "3. alice 3"]
    assert await _listed(schedule, BOB) == ["No reminders are set."]


async def test_a_job_id_is_not_a_reminder_number(
    schedule: SqliteSchedule | PostgresSchedule,
) -> None:
    _distill_jobs(schedule, ALICE)
    await _set(schedule, ALICE, "only one", 1)
    (job,) = schedule.jobs(ALICE, kind="reminder")
    assert (job.id, job.number) == (4, 1)
    failed, _ = await _call(schedule, ALICE, "reminder_cancel", {"id": job.id})
    assert failed
    assert await _listed(schedule, ALICE) == ["1. only one"]


async def test_reminders_stored_without_a_number_get_the_next_ones_at_start(
    tmp_path: Path,
) -> None:
    """A daemon of the version before migration 11, still running when a newer command
    migrated the database, stores reminders without a number; the next start numbers them
    after each person's last, in the order they were set, and numbers nothing twice."""
    with Database.open(tmp_path / "flynn.db", SCHEMA) as db:
        schedule = SqliteSchedule(db)
        await _set(schedule, ALICE, "numbered", 1)
        for text in ("old daemon a", "old daemon b"):
            await _set(schedule, ALICE, text, 2)
        await _set(schedule, BOB, "old daemon bob", 3)
        db.execute("UPDATE jobs SET number = NULL WHERE text LIKE 'old daemon%'")

        assert schedule.number_unnumbered() == 3
        assert schedule.number_unnumbered() == 0
        assert await _listed(schedule, ALICE) == [
            "1. numbered",
            "2. old daemon a",
            "3. old daemon b",
        ]
        assert await _listed(schedule, BOB) == ["1. old daemon bob"]
