"""Recording the token usage of every successful call (the ``costs`` table) for one task."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import structlog

from flynn.errors import StoreError
from flynn.providers.base import ChatRequest, ChatResponse, StreamEvent, Task, UsageSink
from flynn.providers.lifecycle import ClosableProvider, open_stream

_log = structlog.get_logger(__name__)


class MeteredProvider:
    """Passes calls through and reports each reply's usage to ``sink``, tagged with ``task``.

    A sink that fails (``StoreError``) is logged, not raised: losing a cost row is better than
    losing the reply it belongs to.
    """

    def __init__(self, inner: ClosableProvider, sink: UsageSink, task: Task) -> None:
        self._inner = inner
        self._sink = sink
        self._task = task

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def task(self) -> Task:
        return self._task

    async def chat(self, request: ChatRequest) -> ChatResponse:
        response = await self._inner.chat(request)
        self._record(response)
        return response

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        async with open_stream(self._inner, request) as events:
            async for event in events:
                if isinstance(event, ChatResponse):
                    self._record(event)
                yield event

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _record(self, response: ChatResponse) -> None:
        try:
            self._sink.record_usage(
                provider=response.provider or self._inner.name,
                model=response.model,
                task=self._task,
                usage=response.usage,
            )
        except StoreError as exc:
            _log.warning("provider.usage_not_recorded", provider=self.name, error=str(exc))
