"""The tool calls and results of a turn as stored with its reply, and back into the messages a
provider is sent: a call and its result always travel together, so a compaction (which works on
whole stored messages) can never separate them."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from flynn.providers.base import ChatMessage, ToolCall, ToolResult

log = structlog.get_logger(__name__)

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True, slots=True)
class ToolStep:
    """One round: what the model said with its calls, the calls, and their results."""

    text: str
    calls: tuple[ToolCall, ...]
    results: tuple[ToolResult, ...]


def encode_steps(steps: Sequence[ToolStep]) -> str:
    """The steps as stored. Each call is stored under a fresh id (its result under the same):
    the history replays calls of many turns and, over time, of several providers, and a strict
    one (Anthropic) refuses two calls with one id anywhere in it, or an id outside
    ``[A-Za-z0-9_-]``; the offline assistant and servers that send no id repeat theirs. Tool
    names are kept to the same characters."""
    encoded = []
    for step in steps:
        ids = [_stored_id(call.id) for call in step.calls]
        encoded.append(
            {
                "text": step.text,
                "calls": [
                    [call_id, _stored_name(call.name), call.arguments]
                    for call_id, call in zip(ids, step.calls, strict=False)
                ],
                # Results come in their calls' order (``ToolRegistry.run``); a step whose
                # counts differ is dropped when read back (``decode_steps``).
                "results": [
                    [call_id, _stored_name(result.name), result.content, result.is_error]
                    for call_id, result in zip(ids, step.results, strict=False)
                ],
            }
        )
    return json.dumps(encoded, ensure_ascii=False, separators=(",", ":"))


def _stored_name(name: str) -> str:
    # A name the model made up ("functions.reminder_set") was answered "no such tool"; replayed
    # as it was, Anthropic would refuse the whole history ([A-Za-z0-9_-], at most 64).
    return _UNSAFE_ID.sub("_", name)[:64] or "unknown_tool"


def _stored_id(call_id: str) -> str:
    # At most 40 characters in all, OpenAI's limit for an id it is sent back.
    safe = _UNSAFE_ID.sub("_", call_id)[:31] or "call"
    return f"{safe}_{secrets.token_hex(4)}"


def decode_steps(text: str) -> list[ToolStep]:
    """The stored steps; [] (logged) for anything unreadable, so a damaged row costs the
    model that context, never the session."""
    try:
        steps = [_step(item) for item in json.loads(text)]
    except (ValueError, TypeError, KeyError, RecursionError):
        log.warning("session.tool_steps_unreadable")
        return []
    return steps


def _step(item: dict[str, list[list[object]]]) -> ToolStep:
    calls = tuple(ToolCall(str(i), str(n), str(a)) for i, n, a in item["calls"])
    results = tuple(ToolResult(str(i), str(n), str(c), bool(e)) for i, n, c, e in item["results"])
    if len(calls) != len(results):
        raise ValueError("a call without its result")
    return ToolStep(str(item.get("text", "")), calls, results)


def step_messages(steps: Sequence[ToolStep]) -> list[ChatMessage]:
    """The messages that replay ``steps``: each round's assistant turn with its calls, then a
    user turn with their results."""
    messages = []
    for step in steps:
        messages.append(ChatMessage("assistant", step.text, tool_calls=step.calls))
        messages.append(ChatMessage("user", "", tool_results=step.results))
    return messages
