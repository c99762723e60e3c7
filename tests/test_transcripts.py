"""Transcript parts from a scripted conversation: a reply that only called tools keeps its calls,
an empty reply is left out, a failed call says so, long arguments and results are clipped, and
the tool steps are read a batch of messages at a time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

from flynn.memory.store import MessageRole, StoredMessage
from flynn.providers.base import ToolCall, ToolResult
from flynn.sessions.tool_steps import ToolStep, encode_steps
from flynn.transcripts import TOOL_TEXT_CHARS, transcript_parts

T0 = datetime(2026, 3, 1, 23, 30, tzinfo=UTC)


class ScriptedConversation:
    def __init__(self, messages: list[StoredMessage], steps: dict[int, str]) -> None:
        self.messages = messages
        self.steps = steps
        self.asked: list[list[int]] = []

    def in_order(
        self, namespace_prefix: str, *, start: datetime | None = None, end: datetime | None = None
    ) -> Iterator[StoredMessage]:
        return iter(self.messages)

    def tool_steps(self, message_ids: Sequence[int]) -> dict[int, str]:
        self.asked.append(list(message_ids))
        return {i: self.steps[i] for i in message_ids if i in self.steps}


def _message(id_: int, role: MessageRole, content: str, minutes: int) -> StoredMessage:
    return StoredMessage(
        id_, "discord:5", "user", role, content, 1, T0 + timedelta(minutes=minutes)
    )


def test_tool_calls_are_one_line_each_and_empty_replies_are_left_out() -> None:
    long_result = "x" * 500
    steps = encode_steps(
        [
            ToolStep(
                "",
                (ToolCall("a", "web_fetch", '{"url": "https://example.org"}'),),
                (ToolResult("a", "web_fetch", long_result),),
            ),
            ToolStep(
                "",
                (ToolCall("b", "reminder_set", '{"text":\n "x"}'),),
                (ToolResult("b", "reminder_set", "no time given", is_error=True),),
            ),
        ]
    )
    conversation = ScriptedConversation(
        [
            _message(1, "user", "look it up", 0),
            _message(2, "assistant", "", 1),  # only tool calls
            _message(3, "assistant", "  \n", 2),  # nothing at all
            _message(4, "user", "thanks", 40),  # the next day
        ],
        {2: steps},
    )
    parts = list(transcript_parts(conversation, "user", zone=UTC, zone_name="UTC"))
    assert [(p.day.isoformat(), p.is_message) for p in parts] == [
        ("2026-03-01", False),
        ("2026-03-01", True),
        ("2026-03-01", True),
        ("2026-03-02", False),
        ("2026-03-02", True),
    ]
    clipped = "x" * (TOOL_TEXT_CHARS - 1) + "…"
    assert parts[2].text == (
        "\n## 23:31 · discord:5 · assistant\n\n"
        f'- tool `web_fetch` {{"url": "https://example.org"}} → {clipped}\n'
        '- tool `reminder_set` {"text": "x"} → failed: no time given\n'
    )
    assert conversation.asked == [[2, 3]]  # only replies carry steps, read in one query
