"""The durable schedule and the push outbox, on both backends (``store``), and SQLite's two
connections on one file (PostgreSQL's workers: ``test_schedule_workers.py``)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from schedule.conftest import ScheduleStore

from flynn.memory.database import Database
from flynn.schedule.jobs import PushLimits, Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqlitePushes, SqliteSchedule
from flynn.schedule.store import SqlSchedule

NOW = datetime(2026, 3, 25, 9, 0, tzinfo=UTC)
CHAT = Target(channel="telegram", chat_id="42")


def _remind(
    schedule: SqlSchedule,
    *,
    namespace: str = "user",
    at: datetime = NOW,
    repeat: str | None = None,
    text: str = "stretch",
    target: Target | None = CHAT,
    timezone: str = "UTC",
) -> int:
    job = schedule.add(
        namespace=namespace,
        kind="reminder",
        text=text,
        at=at,
        repeat=repeat,
        timezone=timezone,
        target=target,
        now=NOW - timedelta(hours=1),
    )
    return job.id


def test_add_list_and_cancel_are_scoped_by_namespace(store: ScheduleStore) -> None:
    schedule = store.schedule(None)
    alice = _remind(schedule, namespace="users/alice", text="call mum", at=NOW + timedelta(hours=2))
    bob = _remind(schedule, namespace="users/bob", text="water plants", at=NOW + timedelta(hours=1))
    assert [job.text for job in schedule.jobs("users/alice")] == ["call mum"]
    assert [job.id for job in schedule.jobs(None)] == [bob, alice]  # soonest first
    assert schedule.jobs("users/alice", kind="distill") == []

    assert schedule.cancel("users/alice", bob, now=NOW) is None
    assert [job.id for job in schedule.jobs("users/bob")] == [bob]
    cancelled = schedule.cancel("users/bob", bob, now=NOW)
    assert cancelled is not None and cancelled.status == "cancelled" and cancelled.next_at is None
    assert schedule.jobs("users/bob") == []
    assert schedule.cancel("users/bob", bob, now=NOW) is None  # only active jobs
    assert schedule.next_due() == NOW + timedelta(hours=2)


def test_a_job_keeps_its_target_and_times(store: ScheduleStore) -> None:
    schedule = store.schedule(None)
    dm = Target(channel="discord", recipient="123")
    job_id = _remind(schedule, target=dm, repeat="30 7 * * *", timezone="Europe/Lisbon")
    (job,) = schedule.jobs("user")
    assert job.id == job_id and job.target == dm and job.repeat == "30 7 * * *"
    assert job.next_at == datetime(2026, 3, 26, 7, 30, tzinfo=UTC)  # the first 07:30 at/after 09:00
    assert job.status == "active" and job.fired_count == 0


def test_invalid_cron_timezone_or_kind_is_refused(store: ScheduleStore) -> None:
    schedule = store.schedule(None)
    with pytest.raises(ValueError, match="'every morning'"):
        _remind(schedule, repeat="every morning")
    with pytest.raises(ValueError, match="unknown timezone"):
        _remind(schedule, timezone="Nowhere/Land")
    assert schedule.jobs(None) == []


def test_a_one_off_is_done_after_firing(store: ScheduleStore) -> None:
    schedule = store.schedule(None)
    job_id = _remind(schedule, at=NOW)
    assert schedule.fire_due(now=NOW - timedelta(seconds=1), late_after_seconds=60, limit=10) == []
    (push,) = schedule.fire_due(now=NOW + timedelta(seconds=2), late_after_seconds=60, limit=10)
    assert push.job_id == job_id and push.text == "stretch" and push.target == CHAT
    assert push.kind == "reminder" and push.namespace == "user"
    assert push.due_at == NOW and not push.late
    assert schedule.jobs("user") == []
    assert schedule.next_due() is None
    row = store.db.fetchone(
        store.dialect.statement("SELECT status, fired_count, next_at FROM jobs WHERE id = ?"),
        (job_id,),
    )
    assert row is not None
    assert (row["status"], row["fired_count"], row["next_at"]) == ("done", 1, None)
    assert schedule.fire_due(now=NOW + timedelta(hours=1), late_after_seconds=60, limit=10) == []


def test_a_repeating_job_advances_to_its_next_time(store: ScheduleStore) -> None:
    schedule = store.schedule(None)
    _remind(schedule, at=NOW, repeat="0 * * * *")
    (push,) = schedule.fire_due(now=NOW, late_after_seconds=60, limit=10)
    (job,) = schedule.jobs("user")
    assert job.next_at == NOW + timedelta(hours=1)
    assert job.fired_count == 1 and job.last_fired_at == NOW
    assert push.due_at == NOW and not push.late
    (second,) = schedule.fire_due(now=NOW + timedelta(hours=1), late_after_seconds=60, limit=10)
    assert second.due_at == NOW + timedelta(hours=1)
    assert schedule.jobs("user")[0].fired_count == 2


def test_a_job_missed_while_down_fires_once_marked_late(store: ScheduleStore) -> None:
    schedule = store.schedule(None)
    _remind(schedule, at=NOW, repeat="*/10 * * * *")  # 33 times missed by 14:30
    back = NOW + timedelta(hours=5, minutes=30)
    pushes = schedule.fire_due(now=back, late_after_seconds=300, limit=100)
    assert len(pushes) == 1
    assert pushes[0].late and pushes[0].due_at == NOW
    (job,) = schedule.jobs("user")
    assert job.next_at == back + timedelta(minutes=10) and job.fired_count == 1
    assert schedule.fire_due(now=back, late_after_seconds=300, limit=100) == []


def test_a_job_without_a_target_advances_but_queues_nothing(store: ScheduleStore) -> None:
    schedule = store.schedule(None)
    _remind(schedule, target=None)
    assert schedule.fire_due(now=NOW, late_after_seconds=60, limit=10) == []
    assert schedule.jobs("user") == []
    assert store.pushes(None).undelivered() == 0


def test_fire_due_takes_at_most_limit_soonest_first(store: ScheduleStore) -> None:
    schedule = store.schedule(None)
    ids = [_remind(schedule, at=NOW - timedelta(minutes=n)) for n in range(5)]
    first = schedule.fire_due(now=NOW, late_after_seconds=3600, limit=2)
    assert [push.job_id for push in first] == [ids[4], ids[3]]
    rest = schedule.fire_due(now=NOW, late_after_seconds=3600, limit=10)
    assert [push.job_id for push in rest] == [ids[2], ids[1], ids[0]]


def test_two_connections_fire_each_due_time_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "flynn.db"
    jobs = 300
    with Database.open(path, SCHEMA) as db:
        schedule = SqliteSchedule(db)
        for n in range(jobs):
            _remind(
                schedule, at=NOW - timedelta(seconds=n % 7), repeat="* * * * *" if n % 2 else None
            )
    start = threading.Barrier(2)
    fired: list[list[tuple[int | None, datetime | None]]] = [[], []]
    errors: list[BaseException] = []

    def fire(slot: int) -> None:
        try:
            with Database.open(path, SCHEMA) as db:
                # Caps above the jobs: every firing is its own push (the caps have their tests).
                schedule = SqliteSchedule(db, PushLimits(per_person=jobs, total=jobs))
                start.wait()
                # As the Scheduler does: a batch the other connection won entirely is empty,
                # so what is still due decides when to stop.
                while (due := schedule.next_due()) is not None and due <= NOW:
                    batch = schedule.fire_due(now=NOW, late_after_seconds=60, limit=7)
                    fired[slot].extend((push.job_id, push.due_at) for push in batch)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=fire, args=(slot,)) for slot in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    both = fired[0] + fired[1]
    assert len(both) == jobs and len(set(both)) == jobs
    with Database.open(path, SCHEMA) as db:
        assert SqlitePushes(db).undelivered() == jobs
        row = db.fetchone("SELECT sum(fired_count) FROM jobs")
        assert row is not None and row[0] == jobs


def test_a_lost_claim_queues_nothing(tmp_path: Path) -> None:
    """The compare-and-set itself: a connection that read the job before another fired it."""
    path = tmp_path / "flynn.db"
    with Database.open(path, SCHEMA) as first, Database.open(path, SCHEMA) as second:
        _remind(SqliteSchedule(first), at=NOW, repeat="0 * * * *")
        (job,) = SqliteSchedule(second).jobs("user")
        assert len(SqliteSchedule(first).fire_due(now=NOW, late_after_seconds=60, limit=5)) == 1
        with second.transaction():
            stale = SqliteSchedule(second)._fire(job, NOW, 60)
        assert stale is None
        assert SqlitePushes(second).undelivered() == 1


def test_a_push_lease_runs_out_and_it_is_pending_again(store: ScheduleStore) -> None:
    pushes = store.pushes(None)
    added = pushes.add(namespace="user", kind="notice", text="memory tidied", target=CHAT, now=NOW)
    (claimed,) = pushes.claim_pending(now=NOW, lease_seconds=60)
    assert claimed == added
    assert pushes.claim_pending(now=NOW + timedelta(seconds=59), lease_seconds=60) == []
    (again,) = pushes.claim_pending(now=NOW + timedelta(seconds=60), lease_seconds=60)
    assert again.id == added.id
    pushes.release(added.id)
    assert [
        p.id for p in pushes.claim_pending(now=NOW + timedelta(seconds=61), lease_seconds=60)
    ] == [added.id]
    pushes.delivered(added.id, now=NOW + timedelta(seconds=62))
    assert pushes.claim_pending(now=NOW + timedelta(days=1), lease_seconds=60) == []
    assert pushes.undelivered() == 0
    pushes.release(added.id)  # a late release cannot undeliver it
    assert pushes.claim_pending(now=NOW + timedelta(days=1), lease_seconds=60) == []


def test_a_failed_send_waits_until_its_retry_time(store: ScheduleStore) -> None:
    pushes = store.pushes(None)
    added = pushes.add(namespace="user", kind="notice", text="hi", target=CHAT, now=NOW)
    pushes.claim_pending(now=NOW, lease_seconds=60)
    pushes.failed(added.id, retry_at=NOW + timedelta(minutes=5))
    assert pushes.claim_pending(now=NOW + timedelta(minutes=4), lease_seconds=60) == []
    (retried,) = pushes.claim_pending(now=NOW + timedelta(minutes=5), lease_seconds=60)
    assert retried.failures == 1


def test_claim_pending_by_chat_or_recipient_oldest_first(store: ScheduleStore) -> None:
    pushes = store.pushes(None)
    web = Target(channel="gateway", chat_id="web-1")
    direct = Target(channel="gateway", chat_id="", recipient="web-1")
    other = Target(channel="gateway", chat_id="web-2")
    telegram = Target(channel="telegram", chat_id="web-1")
    ids = [
        pushes.add(namespace="user", kind="reminder", text=str(n), target=t, now=NOW).id
        for n, t in enumerate([web, other, direct, telegram])
    ]
    mine = pushes.claim_pending(now=NOW, lease_seconds=60, channel="gateway", chat_id="web-1")
    assert [p.id for p in mine] == [ids[0], ids[2]]
    gateway = pushes.claim_pending(now=NOW, lease_seconds=60, channel="gateway")
    assert [p.id for p in gateway] == [ids[1]]
    assert [p.id for p in pushes.claim_pending(now=NOW, lease_seconds=60)] == [ids[3]]
    with pytest.raises(ValueError, match="channel"):
        pushes.claim_pending(now=NOW, lease_seconds=60, chat_id="web-1")


def test_summary_counts_active_overdue_and_the_next_job(store: ScheduleStore) -> None:
    schedule = store.schedule(None)
    assert schedule.summary(NOW).active == 0 and schedule.summary(NOW).next_job is None
    _remind(schedule, at=NOW - timedelta(hours=2), text="missed")
    _remind(schedule, at=NOW + timedelta(hours=2), text="later")
    summary = schedule.summary(NOW)
    assert (summary.active, summary.overdue) == (2, 1)
    assert summary.next_job is not None and summary.next_job.text == "missed"


def test_forgetting_a_person_deletes_their_jobs_pushes_and_runs_and_nobody_elses(
    store: ScheduleStore,
) -> None:
    schedule = store.schedule(None)
    for person in ("users/alice", "users/alice/work", "users/alicia", "users/bob"):
        _remind(schedule, namespace=person, text=f"{person} stretch")
        _remind(schedule, namespace=person, text=f"{person} later", at=NOW + timedelta(days=1))
        schedule.add(
            namespace=person,
            kind="distill",
            text="short",
            at=NOW,
            repeat=None,
            timezone="UTC",
            target=None,
            now=NOW,
        )
        store.pushes(None).add(
            namespace=person, kind="notice", text=f"{person} note", target=CHAT, now=NOW
        )
    schedule.fire_due(now=NOW, late_after_seconds=60, limit=100)

    assert store.forget_namespace("users/alice")["jobs"] == 6

    def namespaces(table: str) -> list[str]:
        rows = store.db.fetchall(f"SELECT namespace FROM {table} ORDER BY namespace")
        return sorted({row["namespace"] for row in rows})

    assert namespaces("jobs") == ["users/alicia", "users/bob"]
    assert namespaces("pushes") == ["users/alicia", "users/bob"]
    assert namespaces("job_runs") == ["users/alicia", "users/bob"]
    assert [job.text for job in schedule.jobs("users/bob")] == ["users/bob later"]
    assert store.pushes(None).undelivered() == 4  # alicia's and bob's firing and note
