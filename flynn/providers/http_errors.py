"""Reading a vendor's HTTP error at the provider edge: how long it asked us to wait, a message that
is safe to log (it never carries the API key), and whether the model refused the tools we offered
(with the plain-text history to send it instead).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from flynn.errors import BadRequest
from flynn.providers.base import ChatMessage

REDACTED = "[redacted]"


def utc_now() -> datetime:
    return datetime.now(UTC)


def retry_after_seconds(headers: Mapping[str, str], now: datetime) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``retry-after``.

    ``retry-after`` is either delta-seconds or an HTTP date (RFC 9110); a date in the past means
    "now". Returns None when the server gave no usable hint.
    """
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if not math.isfinite(number) or number < 0:
        return None
    return number


def safe_message(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced, for servers that echo the key."""
    if secret:
        text = text.replace(secret, REDACTED)
    return text


class ToolsRefused(BadRequest):
    """The model or server refused the tools we offered. Private to the providers: each catches
    it, remembers, and asks again without tools, so it never reaches a caller."""


def says_tools_unsupported(text: str) -> bool:
    """Whether a 4xx error message says the tools themselves are refused, not something in them.

    The one place tool support is read from message text: Ollama ("does not support tools"),
    llama.cpp ("tools param requires --jinja flag"), vLLM ("\"auto\" tool choice requires
    --enable-auto-tool-choice") and OpenAI's older models ("'tools' is not supported with this
    model") share no type or code for it. Both a tool word and a refusal are needed, so an error
    about one bad schema or a misplaced ``tool_result`` is not taken for it.
    """
    text = text.lower()
    names_tools = any(word in text for word in ("tool", "function"))
    refuses = any(
        phrase in text
        for phrase in (
            "not support",
            "unsupported",
            "requires",
            "not enabled",
            "not allowed",
            "not permitted",
            "unrecognized",
            "unknown",
        )
    )
    return names_tools and refuses


def plain_text_of(message: ChatMessage) -> str:
    """``message`` with its tool calls and results written into its text, for a model that takes
    no tools: it still reads what was asked and what came back, in order."""
    lines = [
        f"[{result.name} {'failed' if result.is_error else 'returned'}: {result.content}]"
        for result in message.tool_results
    ]
    if message.content:
        lines.append(message.content)
    lines += [f"[called {call.name} {call.arguments}]" for call in message.tool_calls]
    return "\n".join(lines)
