"""The Scheduler service: fires due jobs, delivers through a callback, retries what was not
delivered. Time is an injected clock the tests move; they wait on events, never on sleep()."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from flynn.memory.database import Database
from flynn.messages import Delivery
from flynn.schedule.jobs import Push, Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.scheduler import Scheduler, SchedulerConfig
from flynn.schedule.sqlite import SqlitePushes, SqliteSchedule

START = datetime(2026, 3, 25, 9, 0, tzinfo=UTC)
CHAT = Target(channel="gateway", chat_id="web-1")


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class Recipient:
    """A deliver callback: answers from ``outcomes`` (True: delivered, False: deferred, a
    ``Delivery``, or an exception to raise), then ``default``; records every offer and signals
    each one."""

    def __init__(self, default: bool = True) -> None:
        self.default = default
        self.outcomes: list[bool | Delivery | Exception] = []
        self.offered: list[Push] = []
        self.delivered: list[Push] = []
        self.offer = asyncio.Event()

    async def __call__(self, push: Push) -> Delivery:
        self.offered.append(push)
        self.offer.set()
        outcome = self.outcomes.pop(0) if self.outcomes else self.default
        if isinstance(outcome, Exception):
            raise outcome
        if isinstance(outcome, bool):
            outcome = Delivery.delivered() if outcome else Delivery.deferred()
        if outcome.is_delivered:
            self.delivered.append(push)
        return outcome

    async def next_offer(self, within: float = 2.0) -> Push:
        async with asyncio.timeout(within):
            await self.offer.wait()
        self.offer.clear()
        return self.offered[-1]


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    with Database.open(tmp_path / "flynn.db", SCHEMA) as database:
        yield database


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


def _remind(
    db: Database,
    *,
    at: datetime,
    text: str = "stretch",
    repeat: str | None = None,
    target: Target = CHAT,
) -> int:
    return (
        SqliteSchedule(db)
        .add(
            namespace="user",
            kind="reminder",
            text=text,
            at=at,
            repeat=repeat,
            timezone="UTC",
            target=target,
            now=START - timedelta(hours=1),
        )
        .id
    )


def _scheduler(db: Database, recipient: Recipient, clock: Clock, **config: float) -> Scheduler:
    return Scheduler(
        SqliteSchedule(db),
        SqlitePushes(db),
        recipient,
        clock=clock,
        config=SchedulerConfig(**config),  # type: ignore[arg-type]
    )


@pytest.fixture
async def running() -> AsyncIterator[list[asyncio.Task[None]]]:
    """Tasks started by a test, cancelled (and awaited) at its end."""
    tasks: list[asyncio.Task[None]] = []
    yield tasks
    for task in tasks:
        task.cancel()
    for task in tasks:
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_a_due_job_is_delivered_once_through_the_callback(db: Database, clock: Clock) -> None:
    recipient = Recipient()
    scheduler = _scheduler(db, recipient, clock)
    job_id = _remind(db, at=START + timedelta(minutes=1))
    assert await scheduler.tick() == 0
    assert recipient.offered == []
    clock.advance(60)
    assert await scheduler.tick() == 1
    (push,) = recipient.delivered
    assert push.job_id == job_id and push.text == "stretch" and push.target == CHAT
    assert not push.late
    assert await scheduler.tick() == 0  # delivered means never again
    assert SqlitePushes(db).undelivered() == 0


async def test_an_away_recipient_keeps_the_push_until_their_client_says_hello(
    db: Database, clock: Clock
) -> None:
    recipient = Recipient(default=False)
    scheduler = _scheduler(db, recipient, clock)
    _remind(db, at=START)
    elsewhere = _remind(db, at=START, text="elsewhere", target=Target("gateway", "web-2"))
    assert await scheduler.tick() == 0
    assert len(recipient.offered) == 2
    assert SqlitePushes(db).undelivered() == 2  # released, pending again

    recipient.default = True
    assert await scheduler.deliver_pending("gateway", "web-1") == 1
    assert [p.text for p in recipient.delivered] == ["stretch"]
    # Only that chat's: the other one is still waiting for its own client.
    assert SqlitePushes(db).undelivered() == 1
    assert await scheduler.tick() == 1
    assert recipient.delivered[-1].job_id == elsewhere


async def test_a_chat_that_is_away_is_not_offered_its_later_pushes(
    db: Database, clock: Clock
) -> None:
    recipient = Recipient()
    recipient.outcomes = [False]
    scheduler = _scheduler(db, recipient, clock)
    for n in range(3):
        _remind(db, at=START + timedelta(seconds=n), text=f"r{n}")
    clock.advance(10)
    assert await scheduler.tick() == 0
    assert [p.text for p in recipient.offered] == ["r0"]
    assert await scheduler.tick() == 3
    assert [p.text for p in recipient.delivered] == ["r0", "r1", "r2"]  # in order


async def test_more_away_pushes_than_a_batch_end_the_round(db: Database, clock: Clock) -> None:
    recipient = Recipient(default=False)
    scheduler = _scheduler(db, recipient, clock, batch=10)
    pushes = SqlitePushes(db)
    for n in range(25):
        pushes.add(
            namespace="user",
            kind="notice",
            text=str(n),
            target=Target("gateway", f"chat-{n}"),
            now=START,
        )
    assert await scheduler.tick() == 0
    assert len(recipient.offered) == 25  # each once, then the round ends
    assert pushes.undelivered() == 25


async def test_a_failed_send_is_logged_and_retried_with_backoff(db: Database, clock: Clock) -> None:
    recipient = Recipient()
    recipient.outcomes = [RuntimeError("chat blocked"), RuntimeError("still blocked")]
    scheduler = _scheduler(db, recipient, clock, backoff_seconds=30)
    _remind(db, at=START)
    with capture_logs() as logs:
        assert await scheduler.tick() == 0
    failure = next(e for e in logs if e["event"] == "schedule.delivery_failed")
    assert failure["failures"] == 1 and failure["log_level"] == "warning"
    assert any(e["event"] == "schedule.delivery_crashed" for e in logs)  # with the traceback
    clock.advance(29)
    assert await scheduler.tick() == 0 and len(recipient.offered) == 1
    clock.advance(1)
    assert await scheduler.tick() == 0 and len(recipient.offered) == 2
    assert recipient.offered[-1].failures == 1
    clock.advance(59)  # the second failure doubles the wait
    assert await scheduler.tick() == 0 and len(recipient.offered) == 2
    clock.advance(1)
    assert await scheduler.tick() == 1
    assert len(recipient.delivered) == 1


async def test_a_send_that_hangs_times_out_and_is_retried(db: Database, clock: Clock) -> None:
    hang = asyncio.Event()

    async def never(push: Push) -> Delivery:
        await hang.wait()
        return Delivery.delivered()

    scheduler = Scheduler(
        SqliteSchedule(db),
        SqlitePushes(db),
        never,
        clock=clock,
        config=SchedulerConfig(send_timeout_seconds=0.05),
    )
    _remind(db, at=START)
    with capture_logs() as logs:
        assert await scheduler.tick() == 0
    assert [e["event"] for e in logs if e["event"] == "schedule.delivery_failed"]
    assert SqlitePushes(db).undelivered() == 1


async def test_jobs_missed_while_down_fire_at_start_marked_late(
    db: Database, clock: Clock, running: list[asyncio.Task[None]]
) -> None:
    _remind(db, at=START - timedelta(hours=3), text="missed", repeat="0 * * * *")
    recipient = Recipient()
    scheduler = _scheduler(db, recipient, clock)
    running.append(asyncio.create_task(scheduler.run()))
    push = await recipient.next_offer()
    assert push.text == "missed" and push.late
    assert push.due_at == START - timedelta(hours=3)
    assert len(recipient.offered) == 1  # once, not once per missed hour
    (job,) = SqliteSchedule(db).jobs("user")
    assert job.next_at == START + timedelta(hours=1)


async def test_wake_makes_a_job_added_while_asleep_fire_on_time(
    db: Database, running: list[asyncio.Task[None]]
) -> None:
    """Real time here: the service sleeps until the job is due (1 s), not the 60 s cap."""
    recipient = Recipient()
    scheduler = Scheduler(
        SqliteSchedule(db),
        SqlitePushes(db),
        recipient,
        clock=lambda: datetime.now(UTC),
        config=SchedulerConfig(max_sleep_seconds=60, retry_seconds=60),
    )
    running.append(asyncio.create_task(scheduler.run()))
    # Nothing is due: the service sleeps on its 60 s cap.
    async with asyncio.timeout(2):
        await scheduler.asleep.wait()
    started = time.monotonic()
    due = datetime.now(UTC) + timedelta(seconds=1)
    _remind(db, at=due, text="in a second")
    scheduler.wake()
    push = await recipient.next_offer(within=2.5)
    elapsed = time.monotonic() - started
    assert push.text == "in a second" and not push.late
    assert 0.9 <= elapsed < 2.0
    assert datetime.now(UTC) >= due


async def test_wake_while_running_looks_again_at_once(
    db: Database, clock: Clock, running: list[asyncio.Task[None]]
) -> None:
    """With a clock that does not move by itself: only wake() can make the service look."""
    recipient = Recipient()
    scheduler = _scheduler(db, recipient, clock)
    running.append(asyncio.create_task(scheduler.run()))
    async with asyncio.timeout(2):
        await scheduler.asleep.wait()
    _remind(db, at=START, text="now")
    scheduler.wake()
    assert (await recipient.next_offer()).text == "now"
    SqlitePushes(db).add(namespace="user", kind="notice", text="notice", target=CHAT, now=START)
    scheduler.wake()
    assert (await recipient.next_offer()).text == "notice"


async def test_a_storage_failure_is_logged_and_the_service_goes_on(
    db: Database, clock: Clock, running: list[asyncio.Task[None]]
) -> None:
    recipient = Recipient()
    scheduler = _scheduler(db, recipient, clock)
    db.execute("ALTER TABLE jobs RENAME TO jobs_away")
    with capture_logs() as logs:
        running.append(asyncio.create_task(scheduler.run()))
        async with asyncio.timeout(2):
            await scheduler.asleep.wait()
        assert any(e["event"] == "schedule.tick_failed" for e in logs)
        db.execute("ALTER TABLE jobs_away RENAME TO jobs")
        _remind(db, at=START)
        scheduler.wake()
        assert (await recipient.next_offer()).text == "stretch"
    assert not running[0].done()


async def test_a_push_awaiting_its_acknowledgement_lets_the_next_follow(
    db: Database, clock: Clock
) -> None:
    """A gateway client speaking protocol 2 has been sent the push but has not acknowledged
    it: the chat's next push goes too, and both stay pending until acknowledged."""
    recipient = Recipient()
    recipient.outcomes = [Delivery.deferred(["p1"]), Delivery.deferred(["p2"])]
    scheduler = _scheduler(db, recipient, clock)
    _remind(db, at=START, text="one")
    _remind(db, at=START, text="two")
    assert await scheduler.tick() == 0
    assert [push.text for push in recipient.offered] == ["one", "two"]
    pushes = SqlitePushes(db)
    assert pushes.undelivered() == 2
    first = recipient.offered[0].id
    assert pushes.delivered(first, now=clock()) is True  # the acknowledgement
    assert pushes.delivered(first, now=clock()) is False  # another tab's: once only
    assert pushes.undelivered() == 1


async def test_a_push_nobody_can_take_holds_the_chats_next_ones(db: Database, clock: Clock) -> None:
    recipient = Recipient()
    recipient.outcomes = [Delivery.deferred()]
    scheduler = _scheduler(db, recipient, clock)
    _remind(db, at=START, text="one")
    _remind(db, at=START, text="two")
    assert await scheduler.tick() == 0
    assert [push.text for push in recipient.offered] == ["one"]


async def test_a_failed_delivery_is_retried_with_backoff_like_a_raise(
    db: Database, clock: Clock
) -> None:
    recipient = Recipient()
    recipient.outcomes = [Delivery.failed("Discord refused the message (403)")]
    scheduler = _scheduler(db, recipient, clock, backoff_seconds=30)
    _remind(db, at=START)
    with capture_logs() as logs:
        assert await scheduler.tick() == 0
    [failure] = [e for e in logs if e["event"] == "schedule.delivery_failed"]
    assert failure["reason"] == "Discord refused the message (403)"
    clock.advance(29)
    assert await scheduler.tick() == 0 and len(recipient.offered) == 1
    clock.advance(1)
    assert await scheduler.tick() == 1 and len(recipient.delivered) == 1
