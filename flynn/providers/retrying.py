"""Retries of transient provider failures (``retriable`` errors: rate limits, 5xx, timeouts,
unreadable answers) with exponential backoff and jitter; other errors are raised at once.
"""

from __future__ import annotations

import asyncio
import random as _random
from collections.abc import AsyncGenerator, Awaitable, Callable

import structlog

from flynn.backoff import Backoff
from flynn.errors import ProviderError, RateLimited
from flynn.providers.base import ChatRequest, ChatResponse, StreamEvent
from flynn.providers.lifecycle import ClosableProvider, open_stream

_log = structlog.get_logger(__name__)


class RetryingProvider:
    """Wraps one provider; up to ``max_retries`` more attempts per call.

    ``sleep`` and ``random`` are injected so tests neither wait nor depend on chance.
    """

    def __init__(
        self,
        inner: ClosableProvider,
        *,
        max_retries: int,
        base_delay: float = 0.5,
        max_delay: float = 30.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self._inner = inner
        self._max_retries = max_retries
        self._max_delay = max_delay
        # "Equal jitter": at least half the backoff, so retries from many sessions spread out
        # without any of them retrying immediately.
        self._backoff = Backoff(first=base_delay, most=max_delay, jitter=(0.5, 1.0), random=random)
        self._sleep = sleep

    @property
    def name(self) -> str:
        return self._inner.name

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """The inner reply; the last error once retries are spent or the error is final."""
        retries = 0
        while True:
            try:
                return await self._inner.chat(request)
            except ProviderError as exc:
                delay = self._delay_before_retry(exc, retries)
                if delay is None:
                    raise
                error = exc
            retries += 1
            await self._wait(error, retries, delay)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """The inner stream; retried only while nothing was yielded (a retry would repeat it)."""
        retries = 0
        while True:
            started = False
            try:
                async with open_stream(self._inner, request) as events:
                    async for event in events:
                        started = True
                        yield event
                return
            except ProviderError as exc:
                delay = None if started else self._delay_before_retry(exc, retries)
                if delay is None:
                    raise
                error = exc
            retries += 1
            await self._wait(error, retries, delay)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _delay_before_retry(self, exc: ProviderError, retries: int) -> float | None:
        """Seconds to wait before the next attempt, or None to give up now."""
        if not exc.retriable or retries >= self._max_retries:
            return None
        if isinstance(exc, RateLimited) and exc.retry_after is not None:
            # The server said when; a wait far beyond our own ceiling is better spent elsewhere
            # (the fallback provider, or telling the person).
            if exc.retry_after > self._max_delay * 2:
                return None
            return exc.retry_after
        return self._backoff.delay(retries + 1)

    async def _wait(self, error: ProviderError, attempt: int, delay: float) -> None:
        _log.warning(
            "provider.retry",
            provider=self.name,
            attempt=attempt,
            delay=round(delay, 3),
            error=type(error).__name__,
        )
        await self._sleep(delay)
