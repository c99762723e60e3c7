"""The last gate before a model: every request is sent without credentials (the system prompt,
each message, tool calls' arguments and tool results), whatever put them there (a stored row
that predates redaction, a team chunk, a tool's output)."""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace

from flynn.credentials import redact, redact_json
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse, StreamEvent
from flynn.providers.lifecycle import ClosableProvider, open_stream

REMEMBERED_CHARS = 4_000_000
"""How much message text the gate remembers having redacted (a few long sessions' worth)."""
RECENT_REQUESTS = 8
"""Requests whose messages the next request may go on from (conversations taking turns)."""


@dataclass(frozen=True, slots=True)
class _Redacted:
    """A request's messages as sent to the gate, as redacted, and the credentials they held."""

    sent: tuple[ChatMessage, ...]
    cleaned: tuple[ChatMessage, ...]
    found: int


class RedactedMessages:
    """Messages already redacted, each with its redacted form and how many credentials it held.

    Every request repeats the conversation so far: remembered, a session's earlier messages are
    redacted once, not again on each turn, so a request costs what is new in it (redacting a
    thousand-turn conversation anew took over 100 ms a turn). Redaction depends on the text only,
    so what is remembered is exactly what redacting again would give. Forgotten all at once when
    the messages remembered hold more than ``limit`` characters; a message with pictures is
    never remembered."""

    def __init__(self, limit: int = REMEMBERED_CHARS) -> None:
        self._limit = limit
        self._chars = 0
        self._known: dict[ChatMessage, tuple[ChatMessage, int]] = {}
        self._recent: deque[_Redacted] = deque(maxlen=RECENT_REQUESTS)

    def __len__(self) -> int:
        return len(self._known)

    def redact_all(self, messages: tuple[ChatMessage, ...]) -> tuple[tuple[ChatMessage, ...], int]:
        """Every message of a request redacted, and how many credentials they held. A request
        that goes on from one of the last few (the same messages, then new ones: the next turn
        of a conversation) reuses that one's result whole, compared at C speed rather than
        looked up message by message; only the new ones are looked up."""
        done: _Redacted | None = None
        for recent in self._recent:
            size = len(recent.sent)
            longer = done is None or size > len(done.sent)
            if longer and size <= len(messages) and messages[:size] == recent.sent:
                done = recent
        if done is None:
            cleaned, found = [], 0
        else:
            self._recent.remove(done)  # replaced by this request, which goes on from it
            cleaned, found = list(done.cleaned), done.found
        for message in messages[len(cleaned) :]:
            message, count = self.redact(message)
            cleaned.append(message)
            found += count
        this = _Redacted(messages, tuple(cleaned), found)
        self._recent.append(this)
        return this.cleaned, found

    def redact(self, message: ChatMessage) -> tuple[ChatMessage, int]:
        """``message`` without credentials (the same object when it holds none), and how many."""
        if message.images:
            return _message(message)  # shown once, and not worth keeping its pictures alive for
        known = self._known.get(message)
        if known is not None:
            return known
        known = _message(message)
        chars = _chars(message)
        if self._chars + chars > self._limit:
            self._known.clear()
            self._chars = 0
        self._known[message] = known
        self._chars += chars
        return known


class RedactingProvider:
    """Passes calls through to ``inner`` with their credentials redacted."""

    def __init__(
        self, inner: ClosableProvider, *, remembered_chars: int = REMEMBERED_CHARS
    ) -> None:
        self._inner = inner
        self._redacted = RedactedMessages(remembered_chars)

    @property
    def name(self) -> str:
        return self._inner.name

    async def chat(self, request: ChatRequest) -> ChatResponse:
        return await self._inner.chat(redacted(request, self._redacted))

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        async with open_stream(self._inner, redacted(request, self._redacted)) as events:
            async for event in events:
                yield event

    async def aclose(self) -> None:
        await self._inner.aclose()


def redacted(request: ChatRequest, known: RedactedMessages | None = None) -> ChatRequest:
    """``request`` without credentials; the same object when it holds none. With ``known``, a
    message redacted before is not redacted again."""
    system, found = redact(request.system)
    if known is None:
        messages = []
        for message in request.messages:
            cleaned, count = _message(message)
            messages.append(cleaned)
            found += count
        redacted_messages = tuple(messages)
    else:
        redacted_messages, count = known.redact_all(request.messages)
        found += count
    if not found:
        return request
    return replace(request, system=system, messages=redacted_messages)


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


def _chars(message: ChatMessage) -> int:
    return (
        len(message.content)
        + sum(len(call.arguments) for call in message.tool_calls)
        + sum(len(result.content) for result in message.tool_results)
    )
