"""The Provider seam: what the orchestrator asks of a language model, and the typed data it trades.

Implementations map their SDK's errors onto ``flynn.errors.ProviderError`` subclasses, so retry and
fallback decide by type, never by message text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

Role = Literal["user", "assistant"]
Task = Literal["chat", "compaction", "extraction", "distill"]
TASKS: tuple[Task, ...] = ("chat", "compaction", "extraction", "distill")


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class MemoryView:
    """What the session knows of the person, in structured form.

    Real models read the same facts from the system prompt; this exists for providers that answer
    without a model (``offline``), so they need not parse prompt text.
    """

    user_name: str | None = None
    facts: tuple[str, ...] = ()
    working_memory: str | None = None
    recalled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ChatRequest:
    system: str
    messages: tuple[ChatMessage, ...]
    task: Task = "chat"
    max_tokens: int | None = None
    memory: MemoryView | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ChatResponse:
    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    provider: str = ""


StreamEvent = str | ChatResponse
"""``stream`` yields text deltas (``str``) and, last, the complete ``ChatResponse``."""


class Provider(Protocol):
    """A language model. Both calls raise ``ProviderError`` subclasses and nothing else."""

    @property
    def name(self) -> str:
        """Short, secret-free name for logs and the costs table, e.g. ``anthropic:claude-x``."""
        ...

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """The full reply. Cancellation aborts the HTTP request."""
        ...

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Text deltas as they arrive, then exactly one final ``ChatResponse``."""
        ...

    async def aclose(self) -> None:
        """Releases the SDK client. Idempotent; never raises ``ProviderError``."""
        ...


class UsageSink(Protocol):
    """Where token usage of every call is recorded (the ``costs`` table)."""

    def record_usage(self, *, provider: str, model: str, task: Task, usage: Usage) -> None: ...
