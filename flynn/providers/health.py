"""How each configured chat model fares in this process, for ``/readyz`` and ``flynn doctor``:
its failures by the error's type (``AuthFailed``, ``RateLimited``...), when the last came and
when it last answered. ``WatchedProvider`` counts the calls of one backend; ``ModelHealth``
holds them all. Never a prompt, a reply, a key or an error's text."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from flynn.errors import ProviderError
from flynn.providers.base import ChatRequest, ChatResponse, StreamEvent
from flynn.providers.lifecycle import ClosableProvider, open_stream

ModelState = Literal["ready", "degraded", "failing"]

FAILING_SECONDS = 600.0
"""A failure counts in the state for ten minutes: failing when no answer came after it,
degraded when one did."""

_WORST: tuple[ModelState, ...] = ("ready", "degraded", "failing")


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class KindCount:
    """One kind of failure (the ``ProviderError`` subclass's name) of a model: how many since
    the start, and when the last came."""

    kind: str
    count: int
    last_at: datetime
    seconds_ago: float


@dataclass(frozen=True, slots=True)
class ModelStatus:
    """One backend (``provider:model``) as ``/readyz`` shows it. ``key_from`` says where its key
    came from (``ANTHROPIC_API_KEY``, ``llm.api_key``...), never the key."""

    provider: str
    model: str
    key_from: str | None
    state: ModelState
    last_success_at: datetime | None
    last_failure_at: datetime | None
    failures: tuple[KindCount, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "model": self.model,
            "key_from": self.key_from,
            "state": self.state,
            "last_success_at": _iso(self.last_success_at),
            "last_failure_at": _iso(self.last_failure_at),
            "failures": [
                {
                    "kind": failure.kind,
                    "count": failure.count,
                    "last_at": _iso(failure.last_at),
                    "seconds_ago": round(failure.seconds_ago),
                }
                for failure in self.failures
            ],
        }


@dataclass(frozen=True, slots=True)
class ModelsStatus:
    """Every watched backend, and the worst of their states. Never part of ``ready``: commands,
    reminders and the stored memory work without a model, and the person is told each failure."""

    models: tuple[ModelStatus, ...]

    @property
    def state(self) -> ModelState:
        return max((m.state for m in self.models), key=_WORST.index, default="ready")

    def as_json(self) -> dict[str, object]:
        return {
            "state": self.state,
            "degraded": self.state != "ready",
            "models": [model.as_json() for model in self.models],
        }


@dataclass(slots=True)
class _Kind:
    count: int
    last_seen: float
    last_at: datetime


@dataclass(slots=True)
class ModelRecord:
    """The calls of one backend, counted by ``WatchedProvider`` (thread-safe: the distiller
    may call from another loop)."""

    provider: str
    model: str
    key_from: str | None
    _clock: Callable[[], float]
    _now: Callable[[], datetime]
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _kinds: dict[str, _Kind] = field(default_factory=dict)
    _last_success: tuple[float, datetime] | None = None
    _last_failure: tuple[float, datetime] | None = None
    _answered_since: bool = False
    """Whether a call succeeded after the last failure (told by order, not by the clock)."""

    def succeeded(self) -> None:
        with self._lock:
            self._last_success = (self._clock(), self._now())
            self._answered_since = True

    def failed(self, error: ProviderError) -> None:
        kind = type(error).__name__
        seen, at = self._clock(), self._now()
        with self._lock:
            self._last_failure = (seen, at)
            self._answered_since = False
            known = self._kinds.get(kind)
            if known is None:
                self._kinds[kind] = _Kind(1, seen, at)
            else:
                known.count += 1
                known.last_seen, known.last_at = seen, at

    def status(self) -> ModelStatus:
        now = self._clock()
        with self._lock:
            success, failure = self._last_success, self._last_failure
            answered_since = self._answered_since
            failures = [
                KindCount(kind, known.count, known.last_at, max(0.0, now - known.last_seen))
                for kind, known in self._kinds.items()
            ]
        state: ModelState = "ready"
        if failure is not None and now - failure[0] < FAILING_SECONDS:
            # An answer since the last failure: it fails only at times (rate limits absorbed
            # by the retries, a fallback taking over). None since: every call fails.
            state = "degraded" if answered_since else "failing"
        return ModelStatus(
            self.provider,
            self.model,
            self.key_from,
            state,
            success[1] if success else None,
            failure[1] if failure else None,
            tuple(sorted(failures, key=lambda f: f.seconds_ago)),
        )


class ModelHealth:
    """Every backend the providers were built with (``watch``), one record per
    ``provider:model`` however many tasks share it."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._clock = clock
        self._now = now
        self._records: dict[tuple[str, str], ModelRecord] = {}

    def watch(self, provider: str, model: str, *, key_from: str | None) -> ModelRecord:
        key = (provider, model)
        if key not in self._records:
            self._records[key] = ModelRecord(provider, model, key_from, self._clock, self._now)
        return self._records[key]

    @property
    def watching(self) -> bool:
        return bool(self._records)

    def status(self) -> ModelsStatus:
        return ModelsStatus(tuple(record.status() for record in self._records.values()))


class WatchedProvider:
    """Wraps one concrete backend (inside the retries, so each attempt counts): an answer is a
    success, a ``ProviderError`` a failure of its type; a call cancelled (the turn's deadline,
    a stop) or a stream abandoned by its reader is neither."""

    def __init__(self, inner: ClosableProvider, record: ModelRecord) -> None:
        self._inner = inner
        self._record = record

    @property
    def name(self) -> str:
        return self._inner.name

    async def chat(self, request: ChatRequest) -> ChatResponse:
        try:
            response = await self._inner.chat(request)
        except ProviderError as exc:
            self._record.failed(exc)
            raise
        self._record.succeeded()
        return response

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        try:
            async with open_stream(self._inner, request) as events:
                async for event in events:
                    if isinstance(event, ChatResponse):
                        self._record.succeeded()
                    yield event
        except ProviderError as exc:
            self._record.failed(exc)
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat(timespec="seconds")
