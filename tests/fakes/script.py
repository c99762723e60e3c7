"""What a fake model server does with its next request: the steps tests queue up. Steps are
vendor-neutral; each fake renders them in its own wire format, so one test can run against both.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Literal

FailKind = Literal[
    "rate_limited",
    "server_error",
    "overloaded",
    "unauthorized",
    "forbidden",
    "context_too_long",
    "bad_request",
    "not_found",
]


@dataclass(frozen=True)
class ToolUse:
    """A tool call in a reply. ``arguments`` as a string is sent as is (to send invalid JSON);
    without an ``id`` the fake makes one up from the call's place in the reply."""

    name: str
    arguments: dict[str, Any] | str
    id: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)

    def pieces(self, count: int) -> list[str]:
        """The arguments' JSON cut into ``count`` pieces (fewer if it is shorter), as streamed."""
        return _split(self.arguments_json(), count)

    def call_id(self, prefix: str, position: int) -> str:
        return self.id if self.id is not None else f"{prefix}{position}"


@dataclass(frozen=True)
class Reply:
    """A successful answer; streamed in ``chunks`` deltas when the request asked to stream.

    ``tool_calls`` follow the text (which may be empty), each streamed in ``chunks`` pieces of
    its arguments; ``drop_after``, ``hold``, ``error_after`` and ``end_after`` count text deltas
    and tool-call pieces alike.
    """

    text: str = "ok"
    tool_calls: tuple[ToolUse, ...] = ()
    chunks: int = 3
    input_tokens: int = 11
    output_tokens: int | None = None
    """Defaults to one token per four characters of ``text``."""
    include_usage: bool = True
    """OpenAI only: send the usage chunk when the client asked for it (some servers never do)."""
    drop_after: int | None = None
    """Streaming only: close the connection, mid-body, after this many deltas."""
    hold: asyncio.Event | None = None
    """Streaming only: after the first delta, wait for this event before sending the rest."""
    error_after: int | None = None
    """Streaming only: after this many deltas, send an error event of kind ``error`` and stop."""
    error: FailKind = "overloaded"
    end_after: int | None = None
    """Streaming only: after this many deltas, end the body cleanly without the stream's ending
    (no finish reason and ``[DONE]``; no ``message_delta`` and ``message_stop``), as a proxy
    that gives up mid-reply does."""
    interval: float = 0.0
    """Streaming only: seconds between frames, for a server that trickles its answer."""

    def deltas(self) -> list[str]:
        return _split(self.text, self.chunks)

    def completion_tokens(self) -> int:
        if self.output_tokens is not None:
            return self.output_tokens
        written = self.text + "".join(call.arguments_json() for call in self.tool_calls)
        return max(1, (len(written) + 3) // 4)


def _split(text: str, chunks: int) -> list[str]:
    if not text:
        return []
    count = max(1, min(chunks, len(text)))
    size = -(-len(text) // count)
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass(frozen=True)
class Fail:
    """An HTTP error answer in the vendor's error format."""

    kind: FailKind
    status: int
    message: str = ""
    retry_after: str | None = None
    """Value of the ``retry-after`` header: seconds, or an HTTP date."""

    @classmethod
    def rate_limited(cls, retry_after: str | None = "1") -> Fail:
        return cls("rate_limited", 429, "rate limit reached", retry_after)

    @classmethod
    def server_error(cls, status: int = 500) -> Fail:
        return cls("server_error", status, "internal server error")

    @classmethod
    def overloaded(cls) -> Fail:
        """Anthropic answers 529; the OpenAI fake answers 503."""
        return cls("overloaded", 529, "overloaded")

    @classmethod
    def unauthorized(cls) -> Fail:
        return cls("unauthorized", 401, "invalid api key")

    @classmethod
    def forbidden(cls) -> Fail:
        return cls("forbidden", 403, "permission denied")

    @classmethod
    def context_too_long(cls) -> Fail:
        return cls("context_too_long", 400, "")

    @classmethod
    def bad_request(cls, message: str = "invalid request") -> Fail:
        return cls("bad_request", 400, message)

    @classmethod
    def not_found(cls) -> Fail:
        return cls("not_found", 404, "model not found")


@dataclass(frozen=True)
class Hang:
    """Never answer; the connection stays open until the client gives up or the server closes."""


@dataclass(frozen=True)
class Malformed:
    """Status 200 with a body that is not the response the client expects."""

    body: str = '{"id": "broken", '
    content_type: str = "application/json"


Step = Reply | Fail | Hang | Malformed
