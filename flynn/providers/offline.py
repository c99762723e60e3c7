"""The provider used when no language model is configured: deterministic, no network. It says how
to configure one and answers from memory, so flynn can be tried (and tested) without a key.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from flynn.errors import Unavailable
from flynn.providers.base import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    MemoryView,
    StreamEvent,
    ToolResult,
    Usage,
)
from flynn.providers.offline_intents import tool_call_for
from flynn.tokens import estimate_tokens

OFFLINE = "offline"
SETUP_HINT = (
    "To connect one, set ANTHROPIC_API_KEY or OPENAI_API_KEY, or set llm.provider and "
    "llm.base_url (for a local OpenAI-compatible server) in the config."
)


class OfflineProvider:
    """Answers ``chat`` from ``request.memory``; raises ``Unavailable`` for every other task
    (compaction, extraction, distill), so their callers take their deterministic fallbacks.

    A few plain requests (``flynn.providers.offline_intents``) become calls of the tools on
    offer, through the same loop a model's calls take; their results are then the reply."""

    def __init__(self, *, stream_chunks: int = 3) -> None:
        self._stream_chunks = max(1, stream_chunks)

    @property
    def name(self) -> str:
        return OFFLINE

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """The offline answer. Raises ``Unavailable`` unless ``request.task`` is ``chat``."""
        if request.task != "chat":
            raise Unavailable("no language model is configured", provider=OFFLINE)
        last = request.messages[-1] if request.messages else None
        response = self._act(request, last)
        if response is not None:
            return response
        text = compose_reply(request.memory)
        prompt = "\n".join([request.system, *(message.content for message in request.messages)])
        usage = Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(text))
        return ChatResponse(text=text, usage=usage, model=OFFLINE, provider=OFFLINE)

    def _act(self, request: ChatRequest, last: ChatMessage | None) -> ChatResponse | None:
        if last is None or last.role != "user" or not request.tools:
            return None
        if last.tool_results:
            return _answer(self._usage(request, ""), last.tool_results)
        call = tool_call_for(last.content, frozenset(tool.name for tool in request.tools))
        if call is None:
            return None
        return ChatResponse(
            "", self._usage(request, ""), model=OFFLINE, provider=OFFLINE, tool_calls=(call,)
        )

    @staticmethod
    def _usage(request: ChatRequest, text: str) -> Usage:
        prompt = "\n".join([request.system, *(message.content for message in request.messages)])
        return Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(text))

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """The same answer in a few deltas, then the ``ChatResponse``."""
        response = await self.chat(request)
        for piece in _split(response.text, self._stream_chunks):
            yield piece
        yield response

    async def aclose(self) -> None:
        """Nothing to release."""


def _answer(usage: Usage, results: tuple[ToolResult, ...]) -> ChatResponse:
    """What the offline assistant says once its tool calls are done: their results."""
    lines = []
    for result in results:
        if result.is_error:
            lines.append("I couldn't do that: " + result.content.removeprefix("error: "))
        else:
            lines.append(result.content)
    text = "\n".join(lines)
    return ChatResponse(text, usage, model=OFFLINE, provider=OFFLINE)


def compose_reply(memory: MemoryView | None) -> str:
    """What the offline assistant says, given what it remembers of the person."""
    memory = memory or MemoryView()
    greeting = f"Hi {memory.user_name}!" if memory.user_name else "Hi!"
    paragraphs = [
        f"{greeting} No language model is configured, so I can't really answer yet; "
        "I can only tell you what I remember.\n" + SETUP_HINT
    ]
    if memory.facts:
        paragraphs.append(_bullets("What I remember about you:", memory.facts))
    if memory.working_memory and memory.working_memory.strip():
        paragraphs.append("What we were working on:\n" + memory.working_memory.strip())
    if memory.recalled:
        paragraphs.append(_bullets("Related things from earlier:", memory.recalled))
    if len(paragraphs) == 1:
        paragraphs.append("I don't remember anything about you yet.")
    return "\n\n".join(paragraphs)


def _bullets(title: str, items: tuple[str, ...]) -> str:
    """``items`` listed under ``title``, one bullet each: the orchestrator passes the profile
    and recall lines as the prompt shows them, already bulleted."""
    lines = (item.strip().removeprefix("- ").strip() for item in items)
    return "\n".join([title, *(f"- {line}" for line in lines if line)])


def _split(text: str, count: int) -> list[str]:
    """``text`` in about ``count`` pieces, cut after spaces so deltas end on word boundaries."""
    size = max(1, -(-len(text) // count))
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        space = text.find(" ", end)
        end = len(text) if space == -1 or end == len(text) else space + 1
        pieces.append(text[start:end])
        start = end
    return pieces
