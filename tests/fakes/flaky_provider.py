"""A provider whose calls follow a script of outcomes, failures mid-stream included, for testing
the wrappers (retry, fallback, metering) without HTTP; plus a sleep that only records.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass

from flynn.errors import ProviderError
from flynn.providers.base import ChatRequest, ChatResponse, StreamEvent, Usage


@dataclass(frozen=True)
class FailMidStream:
    """Stream ``deltas``, then raise ``error`` (``chat`` just raises it)."""

    deltas: tuple[str, ...]
    error: ProviderError


Outcome = str | ProviderError | FailMidStream


class FlakyProvider:
    def __init__(self, name: str, *outcomes: Outcome, default: Outcome = "ok") -> None:
        self._name = name
        self._outcomes: deque[Outcome] = deque(outcomes)
        self._default = default
        self.requests: list[ChatRequest] = []
        self.closed = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def calls(self) -> int:
        return len(self.requests)

    def _next(self, request: ChatRequest) -> Outcome:
        self.requests.append(request)
        return self._outcomes.popleft() if self._outcomes else self._default

    def _response(self, text: str) -> ChatResponse:
        return ChatResponse(text, Usage(7, len(text.split())), f"{self._name}-model", self._name)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        outcome = self._next(request)
        if isinstance(outcome, FailMidStream):
            raise outcome.error
        if isinstance(outcome, ProviderError):
            raise outcome
        return self._response(outcome)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        outcome = self._next(request)
        if isinstance(outcome, ProviderError):
            raise outcome
        if isinstance(outcome, FailMidStream):
            for delta in outcome.deltas:
                yield delta
            raise outcome.error
        words = outcome.split(" ")
        for index, word in enumerate(words):
            yield word if index == len(words) - 1 else word + " "
        yield self._response(outcome)

    async def aclose(self) -> None:
        self.closed = True


class RecordingSleep:
    """Stands in for ``asyncio.sleep``: records each delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
