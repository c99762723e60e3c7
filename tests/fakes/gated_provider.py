"""A scripted provider whose calls wait at a gate the test opens: to hold turns in flight."""

from __future__ import annotations

import asyncio

from evals.scripted_provider import ScriptedProvider
from flynn.providers.base import ChatRequest, ChatResponse


class GatedProvider(ScriptedProvider):
    """Replies ``re: <last message>`` once ``gate`` is set; counts calls in flight."""

    def __init__(self) -> None:
        super().__init__(default=lambda request: f"re: {request.messages[-1].content}")
        self.gate = asyncio.Event()
        self.in_flight = 0
        self.peak = 0
        self.entered = asyncio.Event()

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.entered.set()
        try:
            await self.gate.wait()
            return await super().chat(request)
        finally:
            self.in_flight -= 1
