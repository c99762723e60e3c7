"""What a loaded embedding model's failures are told in the log: one warning for each kind of
failure, then at most one a minute saying how many more there were, never a traceback storm."""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from flynn.memory.embeddings_health import FailureCount

log = structlog.get_logger(__name__)

REPEAT_SECONDS = 60.0
"""At most one ``memory.model_still_failing`` a minute for each kind of failure."""


@dataclass(slots=True)
class _Kind:
    since_told: float
    last_seen: float
    last_at: datetime
    more: int = 0
    count: int = 1


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ModelFailures:
    """Tells the log of each failure of the model ``model`` (thread-safe): the first of each
    kind (the error's type) as ``memory.model_failing``, with where it was raised; later ones
    of that kind are counted and told as ``memory.model_still_failing`` (``more``: how many
    since the last line) when one comes a minute or more after the last line. Neither holds
    the error's message or its traceback's text: a library's message may quote the text it
    refused, and what a person said stays out of the log. ``counts`` is what ``/readyz``
    shows of them."""

    def __init__(
        self,
        model: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.model = model
        self._clock = clock
        self._now = now
        self._lock = threading.Lock()
        self._kinds: dict[str, _Kind] = {}

    def failed(self, error: BaseException) -> None:
        kind = type(error).__name__
        now, at = self._clock(), self._now()
        with self._lock:
            known = self._kinds.get(kind)
            if known is None:
                self._kinds[kind] = _Kind(now, now, at)
            else:
                known.count += 1
                known.last_seen, known.last_at = now, at
                if now - known.since_told < REPEAT_SECONDS:
                    known.more += 1
                    return
                more, known.more, known.since_told = known.more + 1, 0, now
        if known is None:
            log.warning("memory.model_failing", model=self.model, error=kind, at=_where(error))
        else:
            log.warning("memory.model_still_failing", model=self.model, error=kind, more=more)

    @property
    def failures(self) -> dict[str, int]:
        """Each kind of failure met so far, with how many are not told yet."""
        with self._lock:
            return {kind: known.more for kind, known in self._kinds.items()}

    def counts(self) -> tuple[FailureCount, ...]:
        """Each kind of failure met so far: how many in all, and when the last came; the most
        recent kind first."""
        now = self._clock()
        with self._lock:
            counts = [
                FailureCount(kind, known.count, known.last_at, max(0.0, now - known.last_seen))
                for kind, known in self._kinds.items()
            ]
        return tuple(sorted(counts, key=lambda failure: failure.seconds_ago))


def _where(error: BaseException) -> str:
    """Where ``error`` was raised (file, line, function), its message left out."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return "unknown"
    frame = frames[-1]
    return f"{frame.filename}:{frame.lineno} in {frame.name}"
