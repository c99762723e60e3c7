"""The database's health for ``/readyz``: a write probe at most every few seconds, its answer
cached in between."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from flynn.errors import StorageUnusable, StoreError


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
    """

    def __init__(
        self,
        db: Probed,
        *,
        max_age_seconds: float = 10.0,
        busy_timeout_ms: int = 50,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self._max_age = max_age_seconds
        self._busy_timeout_ms = busy_timeout_ms
        self._clock = clock
        self._status = StorageStatus(True, "not probed yet")
        self._probed_at: float | None = None

    def check(self) -> StorageStatus:
        """The cached status, probing first when it is older than ``max_age_seconds``. Never
        raises. A probe that cannot run now (the write lock busy: another writer is working; a
        transaction open on this connection) keeps the previous status and retries next call."""
        now = self._clock()
        if self._probed_at is not None and now - self._probed_at < self._max_age:
            return self._status
        try:
            self._db.probe_write(busy_timeout_ms=self._busy_timeout_ms)
        except StorageUnusable as exc:
            self._status = StorageStatus(False, str(exc))
        except StoreError:
            return self._status
        else:
            self._status = StorageStatus(True, "writable")
        self._probed_at = now
        return self._status
