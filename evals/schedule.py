"""``flynn bench schedule``: what the durable schedule costs, on a temporary database.

Adding reminders one transaction each; a ``fire_due`` look when many are stored and few are
due; the lag from due time to delivery when a burst falls due in the same second (a real
``Scheduler`` on the real clock); and what a turn pays to read the schedule.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from evals.turn import percentile
from flynn.memory.database import Database
from flynn.messages import Delivery
from flynn.schedule.jobs import Push, Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.scheduler import Scheduler
from flynn.schedule.sqlite import SqlitePushes, SqliteSchedule

PEOPLE = 500
"""Stored jobs are spread over this many namespaces (20 each at 10,000)."""
SPREAD_DAYS = 30
LOOKS = 500
LOOK_EVERY = timedelta(minutes=5)
READS = 2000


async def bench_schedule(*, jobs: int, burst: int, seed: int = 7) -> dict[str, object]:
    rng = random.Random(seed)
    # The stored jobs fall due far beyond the burst, which runs on the real clock.
    base = datetime.now(UTC).replace(microsecond=0) + timedelta(days=400)
    with (
        tempfile.TemporaryDirectory(prefix="flynn-bench-") as tmp,
        Database.open(Path(tmp) / "flynn.db", SCHEMA) as db,
    ):
        schedule = SqliteSchedule(db)
        add_seconds = _add(schedule, rng, base, jobs)
        next_due = _time_calls(schedule.next_due, READS)
        person = _time_calls(lambda: schedule.jobs("users/p7", kind="reminder"), READS)
        burst_result = await _burst(db, burst)
        looks, fired = _looks(schedule, base)
    return {
        "bench": "schedule",
        "jobs": jobs,
        "add_s": round(add_seconds, 3),
        "add_per_job_ms": round(add_seconds * 1000 / max(jobs, 1), 4),
        "fire_due_looks": len(looks),
        "fire_due_fired": fired,
        "fire_due_p50_ms": round(percentile(looks, 0.50), 3),
        "fire_due_p99_ms": round(percentile(looks, 0.99), 3),
        "next_due_p50_ms": round(percentile(next_due, 0.50), 4),
        "next_due_p99_ms": round(percentile(next_due, 0.99), 4),
        "person_jobs_p99_ms": round(percentile(person, 0.99), 4),
        **burst_result,
    }


def _add(schedule: SqliteSchedule, rng: random.Random, base: datetime, jobs: int) -> float:
    started = time.perf_counter()
    for index in range(jobs):
        at = base + timedelta(seconds=rng.randrange(SPREAD_DAYS * 86400))
        schedule.add(
            namespace=f"users/p{index % PEOPLE}",
            kind="reminder",
            text=f"reminder {index}",
            at=at,
            repeat=f"{at.minute} {at.hour} * * *" if index % 2 else None,
            timezone="Europe/Lisbon",
            target=Target("telegram", str(index % PEOPLE)),
            now=base,
        )
    return time.perf_counter() - started


def _time_calls(call: Callable[[], object], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _looks(schedule: SqliteSchedule, base: datetime) -> tuple[list[float], int]:
    """A look every five minutes of schedule time: a few due each, among all those stored."""
    samples = []
    fired = 0
    for step in range(1, LOOKS + 1):
        now = base + step * LOOK_EVERY
        started = time.perf_counter()
        fired += len(schedule.fire_due(now=now, late_after_seconds=300, limit=100))
        samples.append((time.perf_counter() - started) * 1000)
    return samples, fired


async def _burst(db: Database, count: int) -> dict[str, object]:
    """``count`` jobs due in the same second, to as many chats, delivered instantly: how long
    after its due time each push reached the deliver callback (claimed and handed over)."""
    if count < 1:
        return {"burst_jobs": 0}
    schedule = SqliteSchedule(db)
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
    for index in range(count):
        schedule.add(
            namespace=f"users/p{index % PEOPLE}",
            kind="reminder",
            text=f"burst {index}",
            at=due,
            repeat=None,
            timezone="UTC",
            target=Target("gateway", f"chat-{index}"),
            now=due,
        )
    lags: list[float] = []
    everything = asyncio.Event()

    async def deliver(push: Push) -> Delivery:
        assert push.due_at is not None
        lags.append((datetime.now(UTC) - push.due_at).total_seconds() * 1000)
        if len(lags) >= count:
            everything.set()
        return Delivery.delivered()

    scheduler = Scheduler(schedule, SqlitePushes(db), deliver, clock=lambda: datetime.now(UTC))
    runner = asyncio.create_task(scheduler.run())
    try:
        async with asyncio.timeout(30):
            await everything.wait()
    finally:
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
    return {
        "burst_jobs": count,
        "burst_lag_p50_ms": round(percentile(lags, 0.50), 1),
        "burst_lag_max_ms": round(max(lags), 1),
    }
