"""Bounded pushes: a repeating reminder's missed firings collapse into one push, caps per person
and in total hold further firings back into a digest, and pushes that wait too long expire into
it; the digest reaches the person on their next contact. Real SQLite and PostgreSQL (``store``),
an injected clock the tests move, a real Scheduler; nothing sleeps."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fakes.clock import FakeClock
from schedule.conftest import ScheduleStore, sqlite_store

from flynn.memory.database import Database
from flynn.memory.stores import SqliteMemory
from flynn.messages import Delivery
from flynn.schedule.jobs import Push, PushLimits, Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.scheduler import Scheduler
from flynn.schedule.sqlite import SqliteSchedule

START = datetime(2026, 3, 25, 9, 0, 5, tzinfo=UTC)
CHAT = Target(channel="gateway", chat_id="web-1")


class Client:
    """A deliver callback for gateway clients: delivers to those ``connected``, defers the
    rest (they are away), and records what each received."""

    def __init__(self) -> None:
        self.connected: set[str] = set()
        self.received: list[Push] = []

    async def __call__(self, push: Push) -> Delivery:
        if push.target.chat_id not in self.connected:
            return Delivery.deferred()
        self.received.append(push)
        return Delivery.delivered()


SQLITE_ONLY = pytest.mark.parametrize("store", ["sqlite"], indirect=True)
"""For a test too big to repeat on PostgreSQL: thousands of firings."""


def _remind(
    store: ScheduleStore,
    *,
    namespace: str = "user",
    text: str = "stretch",
    at: datetime = START,
    repeat: str | None = "* * * * *",
    target: Target = CHAT,
    limits: PushLimits | None = None,
) -> int:
    schedule = store.schedule(limits)
    job = schedule.add(
        namespace=namespace,
        kind="reminder",
        text=text,
        at=at,
        repeat=repeat,
        timezone="UTC",
        target=target,
        now=START,
    )
    return job.id


def _pending(store: ScheduleStore, at: datetime = START + timedelta(days=3650)) -> list[Push]:
    """The pushes the outbox would offer at ``at`` (digests too), oldest first: claimed as the
    outbox claims them, and given back."""
    pushes = store.pushes(None)
    claimed = pushes.claim_pending(now=at, lease_seconds=60, limit=10_000)
    for push in claimed:
        pushes.release(push.id)
    return claimed


def _firings_accounted(store: ScheduleStore) -> tuple[int, int]:
    """(firings the jobs counted, firings the pushes and digest entries stand for): equal when
    no firing was lost or counted twice."""
    fired = store.db.fetchone("SELECT coalesce(sum(fired_count), 0) AS n FROM jobs")
    queued = store.db.fetchone(
        "SELECT coalesce(sum(occurrences), 0) AS n FROM pushes WHERE job_id IS NOT NULL"
    )
    held = store.db.fetchone("SELECT coalesce(sum(occurrences), 0) AS n FROM push_drops")
    assert fired is not None and queued is not None and held is not None
    return int(fired["n"]), int(queued["n"]) + int(held["n"])


def _fire(
    store: ScheduleStore, clock: FakeClock, *, limits: PushLimits | None = None
) -> list[Push]:
    return store.schedule(limits).fire_due(now=clock(), late_after_seconds=300, limit=1000)


def test_a_repeating_reminders_missed_firings_collapse_into_one_push(store: ScheduleStore) -> None:
    _remind(store)
    clock = FakeClock(START)
    for _ in range(37):
        clock.advance(seconds=60)
        _fire(store, clock)
    (push,) = _pending(store)
    assert push.occurrences == 37
    assert push.first_due_at == datetime(2026, 3, 25, 9, 1, tzinfo=UTC)
    assert push.due_at == datetime(2026, 3, 25, 9, 37, tzinfo=UTC)


def test_a_push_being_sent_is_left_as_it_was_read_and_the_next_firing_queues_anew(
    store: ScheduleStore,
) -> None:
    _remind(store)
    clock = FakeClock(START + timedelta(seconds=60))
    _fire(store, clock)
    (sending,) = store.pushes(None).claim_pending(now=clock(), lease_seconds=120)
    clock.advance(seconds=60)
    (fresh,) = _fire(store, clock)
    assert fresh.id != sending.id and fresh.occurrences == 1
    store.pushes(None).delivered(sending.id, now=clock())
    clock.advance(seconds=60)
    (merged,) = _fire(store, clock)
    assert merged.id == fresh.id and merged.occurrences == 2
    assert _firings_accounted(store) == (3, 3)


@SQLITE_ONLY
async def test_the_flood_of_six_clients_stays_bounded_and_every_firing_is_counted(
    store: ScheduleStore,
) -> None:
    """The issue's flood: 6 unlisted gateway client ids x 200 every-minute reminders, nobody
    connected, 150 s of clock in 10 s steps (2,400 pending before), then 3 more minutes."""
    limits = PushLimits()
    for client in range(6):
        for n in range(200):
            _remind(
                store,
                namespace=f"sessions/gateway/c{client}",
                text=f"reminder {n}",
                target=Target("gateway", f"c{client}"),
            )
    clock = FakeClock(START)
    scheduler = Scheduler(store.schedule(limits), store.pushes(limits), Client(), clock=clock)
    for _ in range(16):
        await scheduler.tick()
        clock.advance(seconds=10)
    assert len(_pending(store)) == 6 * (limits.per_person + 1)
    for _ in range(3):
        clock.advance(seconds=60)
        await scheduler.tick()
    pending = _pending(store)
    assert len(pending) == 6 * (limits.per_person + 1)  # 50 reminders and a digest each
    assert _firings_accounted(store) == (6 * 200 * 5, 6 * 200 * 5)
    digest = next(push for push in pending if push.digest and push.target.chat_id == "c0")
    assert digest.text.startswith(
        "150 repeating reminders were held back while too many messages waited for you: "
        "reminder 50 (5 times, Wed 25 Mar 09:01 to Wed 25 Mar 09:05); "
    )
    assert digest.text.endswith("; and 140 more")


def test_the_total_cap_bounds_everyone_together(store: ScheduleStore) -> None:
    limits = PushLimits(per_person=5, total=12)
    for person in range(4):
        for n in range(10):
            _remind(store, namespace=f"users/p{person}", text=f"r{n}")
    clock = FakeClock(START)
    for _ in range(3):
        clock.advance(seconds=60)
        _fire(store, clock, limits=limits)
    pending = _pending(store)
    assert len([push for push in pending if not push.digest]) == 12
    assert _firings_accounted(store) == (120, 120)


def test_a_one_off_is_queued_over_the_cap_moving_the_oldest_repeating_one_into_the_digest(
    store: ScheduleStore,
) -> None:
    limits = PushLimits(per_person=2, total=100)
    _remind(store, text="water plants")
    _remind(store, text="stretch")
    _remind(store, text="blink")
    clock = FakeClock(START + timedelta(seconds=60))
    _fire(store, clock, limits=limits)  # water plants, stretch queued; blink held
    _remind(store, text="call mum", at=clock() + timedelta(seconds=30), repeat=None)
    clock.advance(seconds=30)
    _fire(store, clock, limits=limits)
    texts = [push.text for push in _pending(store)]
    assert texts[0] == "stretch" and texts[2] == "call mum"
    assert texts[1] == (
        "2 repeating reminders were held back while too many messages waited for you: "
        "blink (due Wed 25 Mar 09:01); water plants (due Wed 25 Mar 09:01)"
    )
    # With no repeating reminder left to move, a one-off still goes: never dropped for a cap.
    for n in range(3):
        _remind(store, text=f"once {n}", at=clock() + timedelta(seconds=10), repeat=None)
    clock.advance(seconds=10)
    store.schedule(PushLimits(per_person=1, total=100)).fire_due(
        now=clock(), late_after_seconds=300, limit=100
    )
    assert [push.text for push in _pending(store) if push.text.startswith("once")] == [
        "once 0",
        "once 1",
        "once 2",
    ]


async def test_expired_pushes_reach_the_person_as_one_note_on_their_next_contact(
    store: ScheduleStore,
) -> None:
    limits = PushLimits(expire_after=timedelta(days=7))
    for text, minutes in (("call mum", 10), ("pay rent", 20), ("book dentist", 30)):
        _remind(store, text=text, at=START + timedelta(minutes=minutes), repeat=None)
    _remind(store, text="stretch", repeat="0 8 * * *")  # keeps firing: its push never goes stale
    clock = FakeClock(START)
    client = Client()
    scheduler = Scheduler(store.schedule(limits), store.pushes(limits), client, clock=clock)
    for _ in range(8):
        clock.advance(seconds=86400)
        await scheduler.tick()
    assert client.received == []
    pending = _pending(store)
    assert [push.text for push in pending] == [
        "stretch",
        "3 reminders expired while you were away (unsent for 7 days): call mum (due Wed 25 Mar "
        "09:10); pay rent (due Wed 25 Mar 09:20); book dentist (due Wed 25 Mar 09:30)",
    ]
    assert pending[0].occurrences == 8

    client.connected.add("web-1")  # the client comes back and says hello
    assert await scheduler.deliver_pending("gateway", "web-1") == 2
    assert [push.digest for push in client.received] == [False, True]
    assert "3 reminders expired" in client.received[1].text
    assert _pending(store) == []


async def test_a_digest_being_sent_is_not_rewritten_a_new_one_collects_the_rest(
    store: ScheduleStore,
) -> None:
    limits = PushLimits(expire_after=timedelta(hours=1))
    _remind(store, text="call mum", at=START + timedelta(minutes=1), repeat=None)
    clock = FakeClock(START + timedelta(minutes=1))
    pushes = store.pushes(limits)
    _fire(store, clock, limits=limits)
    clock.advance(seconds=3600)
    assert pushes.expire(now=clock()) == 1
    (digest,) = pushes.claim_pending(now=clock(), lease_seconds=86400)
    _remind(store, text="pay rent", at=clock() + timedelta(minutes=1), repeat=None)
    clock.advance(seconds=60)
    _fire(store, clock, limits=limits)
    clock.advance(seconds=3600)
    assert pushes.expire(now=clock()) == 1
    later = [push for push in _pending(store, clock()) if push.digest]
    assert len(later) == 1 and later[0].id != digest.id
    assert "pay rent" in later[0].text and "call mum" not in later[0].text
    (kept,) = store.db.fetchall(
        store.dialect.statement("SELECT text FROM pushes WHERE id = ?"), (digest.id,)
    )
    assert kept["text"] == digest.text


def test_two_connections_firing_with_caps_count_every_firing_once(tmp_path: Path) -> None:
    path = tmp_path / "flynn.db"
    limits = PushLimits(per_person=20, total=30)
    with SqliteMemory.open(path, SCHEMA) as memory:
        for n in range(60):
            _remind(sqlite_store(memory), namespace=f"users/p{n % 3}", text=f"r{n}")
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def fire() -> None:
        try:
            with Database.open(path, SCHEMA) as db:
                schedule = SqliteSchedule(db, limits)
                start.wait()
                for minute in range(1, 6):
                    now = START + timedelta(minutes=minute)
                    while (due := schedule.next_due()) is not None and due <= now:
                        schedule.fire_due(now=now, late_after_seconds=300, limit=7)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=fire) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    with SqliteMemory.open(path, SCHEMA) as memory:
        store = sqlite_store(memory)
        assert _firings_accounted(store) == (300, 300)
        assert len([push for push in _pending(store) if not push.digest]) <= 30


def test_forgetting_a_person_forgets_their_digest_entries(store: ScheduleStore) -> None:
    limits = PushLimits(per_person=1, total=10)
    _remind(store, namespace="users/alice", text="a1")
    _remind(store, namespace="users/alice", text="a2")
    _fire(store, FakeClock(START + timedelta(seconds=60)), limits=limits)
    drops = "SELECT count(*) AS n FROM push_drops"
    row = store.db.fetchone(drops)
    assert row is not None and row["n"] == 1
    assert store.forget_namespace("users/alice")["jobs"] == 2
    row = store.db.fetchone(drops)
    assert row is not None and row["n"] == 0
