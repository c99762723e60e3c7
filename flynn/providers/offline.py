"""The provider used when no language model is configured: deterministic, no network. It says how
to configure one and answers from memory, so flynn can be tried (and tested) without a key.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from flynn.errors import Unavailable
from flynn.providers.base import ChatRequest, ChatResponse, MemoryView, StreamEvent, Usage
from flynn.tokens import estimate_tokens

OFFLINE = "offline"
SETUP_HINT = (
    "To connect one, set ANTHROPIC_API_KEY or OPENAI_API_KEY, or set llm.provider and "
    "llm.base_url (for a local OpenAI-compatible server) in the config."
)


class OfflineProvider:
    """Answers ``chat`` from ``request.memory``; raises ``Unavailable`` for every other task
    (compaction, extraction, distill), so their callers take their deterministic fallbacks."""

    def __init__(self, *, stream_chunks: int = 3) -> None:
        self._stream_chunks = max(1, stream_chunks)

    @property
    def name(self) -> str:
        return OFFLINE

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """The offline answer. Raises ``Unavailable`` unless ``request.task`` is ``chat``."""
        if request.task != "chat":
            raise Unavailable("no language model is configured", provider=OFFLINE)
        text = compose_reply(request.memory)
        prompt = "\n".join([request.system, *(message.content for message in request.messages)])
        usage = Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(text))
        return ChatResponse(text=text, usage=usage, model=OFFLINE, provider=OFFLINE)

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """The same answer in a few deltas, then the ``ChatResponse``."""
        response = await self.chat(request)
        for piece in _split(response.text, self._stream_chunks):
            yield piece
        yield response

    async def aclose(self) -> None:
        """Nothing to release."""


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
