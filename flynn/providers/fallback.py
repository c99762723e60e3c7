"""Falling back to the next provider when one is down, rate-limited or refuses our key. A prompt
too long or a request refused would fail the same way elsewhere, so those propagate at once.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence

import structlog

from flynn.errors import AuthFailed, ProviderError, RateLimited, Unavailable
from flynn.providers.base import ChatRequest, ChatResponse, StreamEvent
from flynn.providers.lifecycle import ClosableProvider, open_stream

_log = structlog.get_logger(__name__)

_FALL_BACK_ON = (Unavailable, RateLimited, AuthFailed)


class FallbackProvider:
    """Tries ``providers`` in order; each is expected to do its own retries first."""

    def __init__(self, providers: Sequence[ClosableProvider]) -> None:
        if not providers:
            raise ValueError("FallbackProvider needs at least one provider")
        self._providers = tuple(providers)

    @property
    def name(self) -> str:
        return " > ".join(provider.name for provider in self._providers)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """The first provider's reply that succeeds; if all fail, the last error."""
        last_error: ProviderError | None = None
        for index, provider in enumerate(self._providers):
            try:
                return await provider.chat(request)
            except _FALL_BACK_ON as exc:
                last_error = exc
                self._log_fallback(index, exc)
        assert last_error is not None
        raise last_error

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """The first stream that starts; once a delta is out, its errors propagate."""
        last_error: ProviderError | None = None
        for index, provider in enumerate(self._providers):
            started = False
            try:
                async with open_stream(provider, request) as events:
                    async for event in events:
                        started = True
                        yield event
                return
            except _FALL_BACK_ON as exc:
                if started:
                    raise
                last_error = exc
                self._log_fallback(index, exc)
        assert last_error is not None
        raise last_error

    async def aclose(self) -> None:
        for provider in self._providers:
            await provider.aclose()

    def _log_fallback(self, index: int, error: ProviderError) -> None:
        if index + 1 < len(self._providers):
            _log.warning(
                "provider.fallback",
                provider=self._providers[index].name,
                to=self._providers[index + 1].name,
                error=type(error).__name__,
            )
