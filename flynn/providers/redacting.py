"""The last gate before a model: every request is sent without credentials (the system prompt,
each message, tool calls' arguments and tool results), whatever put them there (a stored row
that predates redaction, a team chunk, a tool's output)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import replace

from flynn.credentials import redact, redact_json
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse, StreamEvent
from flynn.providers.lifecycle import ClosableProvider, open_stream


class RedactingProvider:
    """Passes calls through to ``inner`` with their credentials redacted."""

    def __init__(self, inner: ClosableProvider) -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        return self._inner.name

    async def chat(self, request: ChatRequest) -> ChatResponse:
        return await self._inner.chat(redacted(request))

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        async with open_stream(self._inner, redacted(request)) as events:
            async for event in events:
                yield event

    async def aclose(self) -> None:
        await self._inner.aclose()


def redacted(request: ChatRequest) -> ChatRequest:
    """``request`` without credentials; the same object when it holds none."""
    system, found = redact(request.system)
    messages = []
    for message in request.messages:
        cleaned, count = _message(message)
        messages.append(cleaned)
        found += count
    if not found:
        return request
    return replace(request, system=system, messages=tuple(messages))


def _message(message: ChatMessage) -> tuple[ChatMessage, int]:
    content, found = redact(message.content)
    calls = []
    for call in message.tool_calls:
        arguments, count = redact_json(call.arguments)
        calls.append(replace(call, arguments=arguments))
        found += count
    results = []
    for result in message.tool_results:
        text, count = redact(result.content)
        results.append(replace(result, content=text))
        found += count
    if not found:
        return message, 0
    return replace(
        message, content=content, tool_calls=tuple(calls), tool_results=tuple(results)
    ), found
