"""``StorageHealth(in_thread=True)``, as PostgreSQL's ``/readyz`` uses it: ``check`` never waits
for the probe, a probe that does not answer says not ok, and a finished one is what ``check``
says next."""

from __future__ import annotations

import threading
import time

from flynn.errors import StorageUnusable
from flynn.memory.health import StorageHealth, StorageStatus


class HangingDatabase:
    """A server that does not answer: each probe waits until ``answer`` is set, then raises
    ``fails`` (or succeeds when it is None)."""

    def __init__(self) -> None:
        self.answer = threading.Event()
        self.probing = threading.Event()
        self.fails: Exception | None = StorageUnusable("database x cannot be reached: refused")
        self.probes = 0

    def probe_write(self, *, busy_timeout_ms: int | None = None) -> None:
        self.probes += 1
        self.probing.set()
        # Set by the test once ``check`` returned (or, were ``check`` to wait, never: the
        # fallback ends the test rather than hang it).
        self.answer.wait(timeout=60)
        if self.fails is not None:
            raise self.fails


def _until(health: StorageHealth, ok: bool, detail: str | None = None) -> StorageStatus:
    """What ``check`` says once the probe under way has finished with ``ok`` (and ``detail``)."""
    deadline = time.monotonic() + 30
    while (status := health.check()).ok != ok or detail not in (None, status.detail):
        assert time.monotonic() < deadline, status
        time.sleep(0.01)
    return status


def test_check_never_waits_for_a_probe_and_says_not_ok_when_none_answers() -> None:
    db = HangingDatabase()
    now = [0.0]
    health = StorageHealth(
        db, in_thread=True, max_age_seconds=2, answer_seconds=3, clock=lambda: now[0]
    )
    assert health.check() == StorageStatus(True, "not probed yet")
    assert db.probing.wait(timeout=30)
    assert not db.answer.is_set()  # check returned while the probe hangs
    now[0] = 2.9
    assert health.check().ok  # not long enough to call it gone
    now[0] = 3.0
    status = health.check()
    assert status == StorageStatus(False, "the database gave no answer within 3 s")
    assert db.probes == 1  # one probe at a time
    db.answer.set()
    _until(health, ok=False, detail="database x cannot be reached: refused")


def test_a_finished_probe_is_cached_and_the_next_comes_after_max_age() -> None:
    db = HangingDatabase()
    db.answer.set()
    now = [0.0]
    health = StorageHealth(db, in_thread=True, max_age_seconds=2, clock=lambda: now[0])
    health.check()
    assert not _until(health, ok=False).ok
    now[0] = 1.9
    health.check()
    assert db.probes == 1
    db.fails = None  # the server is back
    now[0] = 2.0
    assert _until(health, ok=True) == StorageStatus(True, "writable")
    assert db.probes == 2
