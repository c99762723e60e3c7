"""The tool calls and results of a turn as stored with its reply, and back into the messages a
provider is sent: a call and its result always travel together, so a compaction (which works on
whole stored messages) can never separate them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from flynn.providers.base import ChatMessage, ToolCall, ToolResult

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class ToolStep:
    """One round: what the model said with its calls, the calls, and their results."""

    text: str
    calls: tuple[ToolCall, ...]
    results: tuple[ToolResult, ...]


def encode_steps(steps: Sequence[ToolStep]) -> str:
    return json.dumps(
        [
            {
                "text": step.text,
                "calls": [[call.id, call.name, call.arguments] for call in step.calls],
                "results": [
                    [result.call_id, result.name, result.content, result.is_error]
                    for result in step.results
                ],
            }
            for step in steps
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )


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
