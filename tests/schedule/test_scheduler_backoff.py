"""A push whose sends keep failing (a chat that blocked the bot) backs off at most
``max_backoff_seconds`` for as long as it keeps failing, and never stops the scheduler, which
runs in the daemon's TaskGroup: whatever escaped it would take the daemon down."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flynn.memory.database import Database, encode_time
from flynn.messages import Delivery
from flynn.schedule.jobs import Push, Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.scheduler import Scheduler, SchedulerConfig
from flynn.schedule.sqlite import SqlitePushes, SqliteSchedule

NOW = datetime(2026, 3, 25, 9, 0, tzinfo=UTC)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    with Database.open(tmp_path / "flynn.db", SCHEMA) as database:
        yield database


async def _blocked(push: Push) -> Delivery:
    raise RuntimeError("Forbidden: bot was blocked by the user")


async def test_a_push_that_failed_a_thousand_times_still_backs_off_at_most_the_cap(
    db: Database,
) -> None:
    pushes = SqlitePushes(db)
    push = pushes.add(
        namespace="user",
        kind="reminder",
        text="stretch",
        target=Target(channel="telegram", chat_id="42"),
        now=NOW,
    )
    # An hour apart at most, 1,100 failures are some 46 days of a chat that blocked the bot.
    db.execute("UPDATE pushes SET failures = 1100 WHERE id = ?", (push.id,))
    scheduler = Scheduler(
        SqliteSchedule(db),
        pushes,
        _blocked,
        clock=lambda: NOW,
        config=SchedulerConfig(backoff_seconds=30, max_backoff_seconds=3600),
    )
    assert await scheduler.tick() == 0
    row = db.fetchone("SELECT failures, leased_until FROM pushes WHERE id = ?", (push.id,))
    assert row is not None
    assert row["failures"] == 1101
    assert row["leased_until"] == encode_time(NOW + timedelta(seconds=3600))
