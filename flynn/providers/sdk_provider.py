"""What the vendor-SDK providers (``AnthropicProvider``, ``OpenAIProvider``) share: the
deadlines of a call, asking again without tools when a model refuses them, and closing the
client (``aclose`` or ``async with``). Each subclass talks to its SDK in ``_chat``/``_stream``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from datetime import datetime
from types import TracebackType
from typing import Literal, Self

import structlog

from flynn.errors import MalformedResponse, ProviderTimeout
from flynn.providers.base import ChatRequest, ChatResponse, StreamEvent
from flynn.providers.http_errors import ToolsRefused

_log = structlog.get_logger(__name__)


class SdkProvider(ABC):
    """A chat model behind a vendor SDK's client. ``vendor`` names it (``<vendor>:<model>``)."""

    vendor: str

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        timeout_seconds: float,
        max_output_tokens: int,
        stream_idle_seconds: float | None,
        clock: Callable[[], datetime],
    ) -> None:
        self._model = model
        # The deadline of a whole call, streamed or not; a stream also fails after
        # ``stream_idle_seconds`` without an event (the timeout when None).
        self._timeout_seconds = timeout_seconds
        self._stream_idle_seconds = min(stream_idle_seconds or timeout_seconds, timeout_seconds)
        self._max_output_tokens = max_output_tokens
        self._clock = clock
        # Kept only to scrub it from error text, should a server echo it back.
        self._api_key = api_key
        self._closed = False
        # False once the model refused tools: later calls go without them (see ``chat``).
        self._tools_supported = True

    @property
    def name(self) -> str:
        return f"{self.vendor}:{self._model}"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """The whole reply. Raises ``ProviderError`` subclasses only.

        A model that refuses tools is asked again at once without them, and not offered them again.
        """
        offer_tools = self._offers_tools(request)
        try:
            return await self._chat(request, offer_tools=offer_tools)
        except ToolsRefused as exc:
            self._stop_offering_tools(exc)
        return await self._chat(request, offer_tools=False)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Text deltas, then the ``ChatResponse`` with any tool calls. Raises ``ProviderError``
        subclasses only; a refusal of tools (it comes before any delta) is handled as in ``chat``.
        """
        offer_tools = self._offers_tools(request)
        started = False
        try:
            async with aclosing(self._stream(request, offer_tools=offer_tools)) as events:
                async for event in events:
                    started = True
                    yield event
            return
        except ToolsRefused as exc:
            if started:
                raise
            self._stop_offering_tools(exc)
        async with aclosing(self._stream(request, offer_tools=False)) as events:
            async for event in events:
                yield event

    @abstractmethod
    async def _chat(self, request: ChatRequest, *, offer_tools: bool) -> ChatResponse:
        """One call through the SDK; raises ``ToolsRefused`` when ``offer_tools`` was refused."""

    @abstractmethod
    def _stream(
        self, request: ChatRequest, *, offer_tools: bool
    ) -> AsyncGenerator[StreamEvent, None]:
        """One streamed call through the SDK; raises ``ToolsRefused`` as ``_chat`` does."""

    @abstractmethod
    async def _close_client(self) -> None:
        """Closes the SDK's client (its connection pool)."""

    def _offers_tools(self, request: ChatRequest) -> bool:
        return bool(request.tools) and self._tools_supported

    def _stop_offering_tools(self, refusal: ToolsRefused) -> None:
        if self._tools_supported:
            self._tools_supported = False
            _log.warning("provider.tools_unsupported", provider=self.name, error=str(refusal))

    def _timed_out(self, limit: Literal["idle", "deadline"]) -> ProviderTimeout:
        if limit == "idle":
            why = f"no event for {self._stream_idle_seconds:g}s in the stream"
        else:
            why = f"no complete answer within {self._timeout_seconds:g}s"
        return ProviderTimeout(f"{self.name}: {why}", provider=self.name)

    def _malformed(self, what: str) -> MalformedResponse:
        return MalformedResponse(f"{self.name}: {what}", provider=self.name)

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._close_client()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
