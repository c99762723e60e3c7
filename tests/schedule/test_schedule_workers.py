"""Several workers on one PostgreSQL database: two ``PostgresDatabase`` objects (each its own pool
of connections, as two ``flynn run`` processes have) on one schema. Due jobs fire once across
them, a worker that dies holding a claim or a lease loses it to the other, a firing's push is
stored once. Threads meet at a barrier; leases run out on an injected clock, nothing sleeps."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from together import together

from flynn.errors import StoreError
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.memory import PostgresMemory
from flynn.schedule.jobs import JobKind, PushLimits, Target
from flynn.schedule.postgres import PostgresPushes, PostgresRuns, PostgresSchedule

NOW = datetime(2026, 3, 25, 9, 0, tzinfo=UTC)
CHAT = Target(channel="telegram", chat_id="42")
WIDE = PushLimits(per_person=1000, total=1000)


class WorkerDied(Exception):
    """What ends a worker's transaction half way, as a killed process's connection does."""


@pytest.fixture
def workers(postgres_url: str) -> Iterator[tuple[PostgresDatabase, PostgresDatabase]]:
    with PostgresDatabase.open(postgres_url) as one, PostgresDatabase.open(postgres_url) as two:
        yield one, two


def _add(
    db: PostgresDatabase,
    *,
    namespace: str = "user",
    kind: JobKind = "reminder",
    at: datetime = NOW,
    repeat: str | None = None,
    target: Target | None = CHAT,
) -> int:
    job = PostgresSchedule(db).add(
        namespace=namespace,
        kind=kind,
        text="stretch",
        at=at,
        repeat=repeat,
        timezone="UTC",
        target=target,
        now=NOW - timedelta(hours=1),
    )
    return job.id


def _count(db: PostgresDatabase, sql: str) -> int:
    row = db.fetchone(sql)
    assert row is not None
    return int(row["n"])


def test_fifty_due_jobs_fired_by_two_workers_at_once_fire_once_each(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    one, two = workers
    jobs = {
        _add(one, namespace=f"users/p{n % 5}", at=NOW - timedelta(seconds=n % 7), repeat=repeat)
        for n in range(50)
        for repeat in ["* * * * *" if n % 2 else None]
    }
    fired: list[list[tuple[int | None, datetime | None]]] = [[], []]

    def fire(slot: int, db: PostgresDatabase) -> Callable[[], None]:
        def firing() -> None:
            schedule = PostgresSchedule(db, WIDE)
            # As the Scheduler does: a batch the other worker won entirely is empty, so what is
            # still due decides when to stop.
            while (due := schedule.next_due()) is not None and due <= NOW:
                batch = schedule.fire_due(now=NOW, late_after_seconds=60, limit=7)
                fired[slot].extend((push.job_id, push.due_at) for push in batch)

        return firing

    together(fire(0, one), fire(1, two))
    both = fired[0] + fired[1]
    assert sorted(job_id for job_id, _ in both) == sorted(jobs)  # each job once, none missing
    assert _count(one, "SELECT count(*) AS n FROM pushes") == 50
    assert _count(one, "SELECT sum(fired_count) AS n FROM jobs") == 50


def test_a_due_job_claimed_by_a_worker_that_dies_is_fired_by_the_other(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    one, two = workers
    job_id = _add(one)
    with pytest.raises(WorkerDied), one.transaction():
        (claimed,) = PostgresSchedule(one).fire_due(now=NOW, late_after_seconds=60, limit=10)
        assert claimed.job_id == job_id
        # Claimed and not committed: the other worker skips the locked job, without waiting.
        assert PostgresSchedule(two).fire_due(now=NOW, late_after_seconds=60, limit=10) == []
        raise WorkerDied
    (fired,) = PostgresSchedule(two).fire_due(now=NOW, late_after_seconds=60, limit=10)
    assert fired.job_id == job_id
    assert _count(two, "SELECT count(*) AS n FROM pushes") == 1


def test_a_run_leased_by_a_worker_that_died_is_taken_by_the_other_when_its_lease_ends(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    one, two = workers
    _add(one, kind="distill", target=None)
    assert PostgresSchedule(one).fire_due(now=NOW, late_after_seconds=60, limit=10) == []
    (run,) = PostgresRuns(one).claim_pending(now=NOW, lease_seconds=600, limit=5)
    one.close()  # the worker dies holding the lease
    runs = PostgresRuns(two)
    assert runs.claim_pending(now=NOW + timedelta(seconds=599), lease_seconds=600, limit=5) == []
    (again,) = runs.claim_pending(now=NOW + timedelta(seconds=600), lease_seconds=600, limit=5)
    assert again.id == run.id
    assert runs.finish(run.id, outcome="done", now=NOW + timedelta(seconds=601))


def test_a_push_leased_by_a_worker_that_died_is_sent_by_the_other_when_its_lease_ends(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    one, two = workers
    added = PostgresPushes(one).add(
        namespace="user", kind="notice", text="memory tidied", target=CHAT, now=NOW
    )
    (leased,) = PostgresPushes(one).claim_pending(now=NOW, lease_seconds=60)
    one.close()
    pushes = PostgresPushes(two)
    assert pushes.claim_pending(now=NOW + timedelta(seconds=59), lease_seconds=60) == []
    (again,) = pushes.claim_pending(now=NOW + timedelta(seconds=60), lease_seconds=60)
    assert again.id == leased.id == added.id
    assert pushes.delivered(added.id, now=NOW + timedelta(seconds=61))
    assert pushes.claim_pending(now=NOW + timedelta(days=1), lease_seconds=60) == []


def test_pending_pushes_claimed_by_two_workers_at_once_are_each_leased_to_one(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    one, two = workers
    for n in range(40):
        PostgresPushes(one).add(namespace="user", kind="notice", text=str(n), target=CHAT, now=NOW)
    claimed: list[list[int]] = [[], []]

    def claim(slot: int, db: PostgresDatabase) -> Callable[[], None]:
        def claiming() -> None:
            pushes = PostgresPushes(db)
            while batch := pushes.claim_pending(now=NOW, lease_seconds=60, limit=3):
                claimed[slot].extend(push.id for push in batch)

        return claiming

    together(claim(0, one), claim(1, two))
    assert len(claimed[0]) + len(claimed[1]) == 40
    assert set(claimed[0]).isdisjoint(claimed[1])


def test_a_firing_recorded_by_two_workers_is_stored_once(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    """The compare-and-set itself: a worker that read the job before the other fired it."""
    one, two = workers
    _add(one, repeat="0 * * * *")
    (job,) = PostgresSchedule(two).jobs("user")
    assert len(PostgresSchedule(one).fire_due(now=NOW, late_after_seconds=60, limit=5)) == 1
    with two.transaction():
        assert PostgresSchedule(two)._fire(job, NOW, 60) is None
    assert _count(two, "SELECT count(*) AS n FROM pushes") == 1
    assert _count(two, "SELECT sum(fired_count) AS n FROM jobs") == 1


def test_reminders_added_by_two_workers_at_once_get_distinct_numbers(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    def adding(db: PostgresDatabase) -> Callable[[], None]:
        return lambda: [_add(db, namespace="users/alice") for _ in range(10)] and None

    together(adding(workers[0]), adding(workers[1]))
    numbers = [job.number for job in PostgresSchedule(workers[0]).jobs("users/alice")]
    assert sorted(n for n in numbers if n is not None) == list(range(1, 21))


def test_the_generation_moves_for_another_workers_change(
    workers: tuple[PostgresDatabase, PostgresDatabase],
) -> None:
    one, two = workers
    seen = PostgresSchedule(two).generation()
    job_id = _add(one)
    added = PostgresSchedule(two).generation()
    assert added != seen
    assert PostgresSchedule(one).cancel("user", job_id, now=NOW) is not None
    assert PostgresSchedule(two).generation() != added


def test_forgetting_is_one_transaction_over_every_part(postgres_url: str) -> None:
    """A part whose forgetting fails leaves every store as it was."""

    class Failing:
        def __init__(self, db: PostgresDatabase) -> None:
            self._db = db

        def forget_namespace(self, prefix: str) -> dict[str, int]:
            self._db.execute("DELETE FROM no_such_table")
            return {}

    with PostgresMemory.open(postgres_url, [PostgresSchedule, Failing]) as memory:
        memory.documents.replace("users/alice/profile", "likes tea", now=NOW)
        _add(memory.db, namespace="users/alice")
        with pytest.raises(StoreError):
            memory.forget_namespace("users/alice")
        assert memory.documents.read("users/alice/profile") is not None
        assert PostgresSchedule(memory.db).count("users/alice") == 1
