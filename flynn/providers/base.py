"""The Provider seam: what the orchestrator asks of a language model, and the typed data it trades.

Implementations map their SDK's errors onto ``flynn.errors.ProviderError`` subclasses, so retry and
fallback decide by type, never by message text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

Role = Literal["user", "assistant"]
Task = Literal[
    "chat", "compaction", "extraction", "distill", "distill_mid", "distill_long", "synthesis"
]
TASKS: tuple[Task, ...] = (
    "chat",
    "compaction",
    "extraction",
    "distill",
    "distill_mid",
    "distill_long",
    "synthesis",
)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: its name, what it is for, and the JSON schema of its
    arguments (an object schema, as both vendors take it)."""

    name: str
    description: str
    parameters: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for. ``arguments`` is the raw JSON text the model wrote: it is
    validated by the tool, not here, so a malformed one goes back to the model as an error."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returned, or the error it met (``is_error``), for the model to read."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class ImagePart:
    """A picture shown to the model with a user turn: its bytes and MIME type (``image/jpeg``,
    ``image/png``, ``image/gif``, ``image/webp``). Anthropic gets an ``image`` block with a
    base64 source, OpenAI an ``image_url`` part holding a data URL."""

    media_type: str
    data: bytes


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One turn. An assistant turn may carry ``tool_calls`` (its ``content`` then possibly
    empty); the user turn after it carries their ``tool_results``, in the same order. Providers
    render these in their own wire form (Anthropic ``tool_use``/``tool_result`` blocks, OpenAI
    ``tool_calls`` and ``tool`` messages)."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    images: tuple[ImagePart, ...] = ()
    """Pictures shown with a user turn (only the turn that brought them: later turns carry
    their description in ``content``)."""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    system: str
    messages: tuple[ChatMessage, ...]
    task: Task = "chat"
    max_tokens: int | None = None
    tools: tuple[ToolSpec, ...] = ()
    """Tools the model may call; empty means none are offered."""


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
    tool_calls: tuple[ToolCall, ...] = ()
    """Calls the model asked for; the turn goes on once their results are sent back."""


StreamEvent = str | ChatResponse
"""``stream`` yields text deltas (``str``) and, last, the complete ``ChatResponse`` (with any
tool calls, whose arguments arrive in pieces and are only whole at the end)."""


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
