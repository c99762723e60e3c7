"""Work Flynn does itself (a distillation) is a job kind the scheduler runs: a firing queues a run,
the handler registered for the kind does it once, a failure is retried with backoff and then given
up, a stop gives a run back for the next start, and no person is sent anything. A database that
holds a run queued the old way (a push to the pretend channel ``flynn``) still runs it after the
upgrade. On both backends (``store``). Time is an injected clock; the tests wait on
``Scheduler.asleep``, never on sleep()."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from schedule.conftest import ScheduleStore, sqlite_store

from flynn.memory.database import Database, encode_time
from flynn.memory.stores import SqliteMemory
from flynn.messages import Delivery
from flynn.schedule.jobs import Push, Run, Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.scheduler import Scheduler, SchedulerConfig

START = datetime(2026, 3, 25, 9, 0, tzinfo=UTC)
CONFIG = SchedulerConfig(backoff_seconds=30, max_backoff_seconds=3600, run_attempts=3)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


class Handler:
    """A run handler: records each run, answers from ``outcomes`` (an exception to raise, or
    None), and can be held at ``gate`` to stand for a long run."""

    def __init__(self, *outcomes: Exception | None) -> None:
        self.outcomes = list(outcomes)
        self.runs: list[Run] = []
        self.gate: asyncio.Event | None = None
        self.entered = asyncio.Event()

    async def __call__(self, run: Run) -> None:
        self.runs.append(run)
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        outcome = self.outcomes.pop(0) if self.outcomes else None
        if outcome is not None:
            raise outcome


async def nobody(push: Push) -> Delivery:
    raise AssertionError(f"a push was offered: {push}")


def scheduler_for(
    store: ScheduleStore,
    handler: Handler,
    deliver: Callable[[Push], Awaitable[Delivery]] = nobody,
    *,
    clock: Clock | None = None,
) -> Scheduler:
    return Scheduler(
        store.schedule(None),
        store.pushes(None),
        deliver,
        clock=clock or Clock(),
        runs=store.runs(),
        handlers={"distill": handler},
        config=CONFIG,
    )


Running = Callable[..., Awaitable[Scheduler]]
"""Starts a scheduler running ``handler`` for distillations (on ``clock``, if given)."""


@pytest.fixture
async def running(store: ScheduleStore) -> AsyncIterator[Running]:
    tasks: list[asyncio.Task[None]] = []

    async def start(handler: Handler, clock: Clock | None = None) -> Scheduler:
        scheduler = scheduler_for(store, handler, clock=clock)
        tasks.append(asyncio.create_task(scheduler.run()))
        return scheduler

    yield start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def distill_job(store: ScheduleStore, *, repeat: str | None = None) -> int:
    job = store.schedule(None).add(
        namespace="user",
        kind="distill",
        text="short",
        at=START,
        repeat=repeat,
        timezone="UTC",
        target=None,
        now=START,
    )
    return job.id


def outcomes(store: ScheduleStore) -> list[tuple[str | None, int]]:
    rows = store.db.fetchall("SELECT outcome, failures FROM job_runs ORDER BY id")
    return [(row["outcome"], int(row["failures"])) for row in rows]


def leased_until(store: ScheduleStore) -> datetime | None:
    [row] = store.db.fetchall("SELECT leased_until FROM job_runs")
    return store.dialect.optional_time(row["leased_until"])


async def settled(scheduler: Scheduler) -> None:
    async with asyncio.timeout(5):
        await scheduler.asleep.wait()


async def test_a_firing_is_run_once_by_its_kinds_handler_and_nobody_is_sent_anything(
    store: ScheduleStore, running: Running
) -> None:
    job_id = distill_job(store)
    handler = Handler()
    scheduler = await running(handler)
    await settled(scheduler)
    assert [(run.job_id, run.kind, run.text, run.namespace) for run in handler.runs] == [
        (job_id, "distill", "short", "user")
    ]
    assert outcomes(store) == [("done", 0)]
    scheduler.wake()  # another look finds nothing more to do
    await settled(scheduler)
    assert len(handler.runs) == 1
    assert store.pushes(None).undelivered() == 0
    assert store.runs().pending() == 0


async def test_a_failed_run_is_retried_after_a_backoff_then_given_up(
    store: ScheduleStore, running: Running
) -> None:
    distill_job(store)
    clock = Clock()
    handler = Handler(RuntimeError("the model is down"), RuntimeError("still down"), None)
    scheduler = await running(handler, clock)
    await settled(scheduler)
    assert outcomes(store) == [(None, 1)]
    assert leased_until(store) == START + timedelta(seconds=30)

    clock.now += timedelta(seconds=29)  # not yet
    scheduler.wake()
    await settled(scheduler)
    assert len(handler.runs) == 1
    clock.now += timedelta(seconds=1)
    scheduler.wake()
    await settled(scheduler)
    assert outcomes(store) == [(None, 2)]
    assert leased_until(store) == clock.now + timedelta(seconds=60)  # doubled

    clock.now += timedelta(seconds=60)
    scheduler.wake()
    await settled(scheduler)
    assert [run.failures for run in handler.runs] == [0, 1, 2]
    assert outcomes(store) == [("done", 2)]  # the third try succeeded, and it is finished once


async def test_a_run_failing_every_time_is_given_up_until_its_next_time(
    store: ScheduleStore, running: Running
) -> None:
    distill_job(store, repeat="0 9 * * *")
    clock = Clock()
    handler = Handler(*(RuntimeError("down") for _ in range(5)))
    scheduler = await running(handler, clock)
    for _ in range(CONFIG.run_attempts):
        await settled(scheduler)
        clock.now += timedelta(hours=1)
        scheduler.wake()
    await settled(scheduler)
    assert len(handler.runs) == CONFIG.run_attempts
    assert outcomes(store) == [("given_up", 2)]
    assert store.runs().pending() == 0
    # The job itself goes on: its next time queues a new run.
    assert store.schedule(None).jobs("user", kind="distill")[0].next_at is not None


async def test_a_stop_gives_a_run_under_way_back_and_the_next_start_runs_it(
    store: ScheduleStore, running: Running
) -> None:
    distill_job(store)
    handler = Handler()
    handler.gate = asyncio.Event()  # never opened: the run is cut short by the stop
    task = asyncio.create_task(scheduler_for(store, handler).run())
    async with asyncio.timeout(5):
        await handler.entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert outcomes(store) == [(None, 0)]
    assert leased_until(store) is None  # given back, not left leased for an hour

    again = Handler()
    await settled(await running(again))
    assert [run.text for run in again.runs] == ["short"]
    assert outcomes(store) == [("done", 0)]


async def test_a_run_queued_the_old_way_runs_after_the_upgrade(tmp_path: Path) -> None:
    """Before job runs, a distillation's firing was a push to the pretend channel ``flynn``,
    and its job was addressed there."""
    path = tmp_path / "flynn.db"
    migration = next(
        number
        for number, script in enumerate(SCHEMA.migrations, start=1)
        if "CREATE TABLE job_runs" in script
    )
    stamp = encode_time(START)
    with Database.open(path, SCHEMA.up_to(migration - 1)) as old:
        old.execute(
            "INSERT INTO jobs (namespace, kind, text, repeat, timezone, next_at, channel, "
            "chat_id, status, created_at, updated_at) VALUES ('user', 'distill', 'mid', "
            "'30 3 * * 0', 'UTC', ?, 'flynn', 'user', 'active', ?, ?)",
            (encode_time(START + timedelta(days=3)), stamp, stamp),
        )
        old.execute(
            "INSERT INTO pushes (namespace, kind, text, channel, chat_id, job_id, due_at, "
            "first_due_at, created_at, failures) VALUES ('user', 'distill', 'mid', 'flynn', "
            "'user', 1, ?, ?, ?, 1)",
            (stamp, stamp, stamp),
        )
        old.execute(
            "INSERT INTO pushes (namespace, kind, text, channel, chat_id, created_at) "
            "VALUES ('user', 'reminder', 'water the plants', 'telegram', '42', ?)",
            (stamp,),
        )

    with SqliteMemory.open(path, SCHEMA) as memory:
        store = sqlite_store(memory)
        [job] = store.schedule(None).jobs("user", kind="distill")
        assert job.target is None
        handler = Handler()
        scheduler = scheduler_for(store, handler, nobody_but_the_reminder)
        task = asyncio.create_task(scheduler.run())
        try:
            await settled(scheduler)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert [(run.job_id, run.text, run.failures) for run in handler.runs] == [(1, "mid", 1)]
        assert outcomes(store) == [("done", 1)]
        rows = store.db.fetchall("SELECT channel FROM pushes")
        assert [row["channel"] for row in rows] == ["telegram"]  # the reminder stays queued


async def nobody_but_the_reminder(push: Push) -> Delivery:
    assert push.target == Target("telegram", "42"), push
    return Delivery.deferred()


def test_forgetting_a_person_deletes_their_queued_runs(store: ScheduleStore) -> None:
    """A queued run names its person (its namespace): forgetting them deletes it, and only
    theirs."""
    stamp = store.dialect.time(START)
    for namespace in ("users/alice", "users/bob"):
        store.db.execute(
            store.dialect.statement(
                "INSERT INTO job_runs (namespace, kind, text, due_at, created_at) "
                "VALUES (?, 'distill', 'mid', ?, ?)"
            ),
            (namespace, stamp, stamp),
        )
    store.schedule(None).forget_namespace("users/alice")
    left = [row["namespace"] for row in store.db.fetchall("SELECT namespace FROM job_runs")]
    assert left == ["users/bob"]
