"""The database's health for ``/readyz``: a write probe at most every few seconds, its answer
cached in between; for a database across a network, the probe runs in a thread of its own, so
a server that is gone never holds up the event loop."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import structlog

from flynn.errors import StorageUnusable, StoreError

log = structlog.get_logger(__name__)


class Probed(Protocol):
    """A database that can prove it takes a write (SQLite's ``Database``, ``PostgresDatabase``)."""

    def probe_write(self, *, busy_timeout_ms: int | None = None) -> None:
        """Raises ``StorageUnusable`` when the database cannot take a write, ``StoreError`` when
        the probe cannot run now (a lock busy, a transaction open)."""
        ...


@dataclass(frozen=True, slots=True)
class StorageStatus:
    """Whether the database took a write when last probed; ``detail`` says why not."""

    ok: bool
    detail: str

    def as_json(self) -> dict[str, object]:
        return {"ok": self.ok, "detail": self.detail}


class StorageHealth:
    """The database's health for ``/readyz``: a write probe (``Probed.probe_write``) at most
    every ``max_age_seconds``, the answer cached in between so a busy probe endpoint costs
    nothing. Use from the thread that owns ``db`` (the event loop's): a probe takes well under a
    millisecond, and waits at most ``busy_timeout_ms`` for another process's write lock.

    ``in_thread`` (a server across a network, which may be gone): ``check`` never waits; the
    probe runs in a thread of its own and ``check`` gives the last answer, or not ok when a
    probe has gone unanswered for ``answer_seconds``.
    """

    def __init__(
        self,
        db: Probed,
        *,
        max_age_seconds: float = 10.0,
        busy_timeout_ms: int = 50,
        clock: Callable[[], float] = time.monotonic,
        in_thread: bool = False,
        answer_seconds: float = 3.0,
    ) -> None:
        self._db = db
        self._max_age = max_age_seconds
        self._busy_timeout_ms = busy_timeout_ms
        self._clock = clock
        self._in_thread = in_thread
        self._answer_seconds = answer_seconds
        self._status = StorageStatus(True, "not probed yet")
        self._probed_at: float | None = None
        self._lock = threading.Lock()
        self._probing_since: float | None = None
        """When the probe under way in its thread began; None when none is."""

    def check(self) -> StorageStatus:
        """The cached status, probing first when it is older than ``max_age_seconds``. Never
        raises. A probe that cannot run now (the write lock busy: another writer is working; a
        transaction open on this connection) keeps the previous status and retries next call.
        ``in_thread``: starts the probe and gives the status known so far."""
        now = self._clock()
        if self._in_thread:
            return self._check_in_thread(now)
        if self._probed_at is not None and now - self._probed_at < self._max_age:
            return self._status
        self._probe(now)
        return self._status

    def _check_in_thread(self, now: float) -> StorageStatus:
        with self._lock:
            began = self._probing_since
            if began is not None:
                if now - began >= self._answer_seconds and self._status.ok:
                    self._status = StorageStatus(
                        False, f"the database gave no answer within {self._answer_seconds:g} s"
                    )
                return self._status
            if self._probed_at is not None and now - self._probed_at < self._max_age:
                return self._status
            self._probing_since = now
        threading.Thread(
            target=self._probe_in_thread, args=(now,), name="flynn-storage-probe", daemon=True
        ).start()
        return self._status

    def _probe_in_thread(self, began: float) -> None:
        try:
            self._probe(began)
        except Exception as exc:  # a thread's boundary: the probe says not ok, and why
            log.exception("storage.probe_failed")
            with self._lock:
                self._status = StorageStatus(False, f"the probe failed: {type(exc).__name__}")
                self._probed_at = began
        finally:
            with self._lock:
                self._probing_since = None

    def _probe(self, now: float) -> None:
        try:
            self._db.probe_write(busy_timeout_ms=self._busy_timeout_ms)
        except StorageUnusable as exc:
            status = StorageStatus(False, str(exc))
        except StoreError:
            return
        else:
            status = StorageStatus(True, "writable")
        with self._lock:
            self._status = status
            self._probed_at = now
