"""A person's whole conversation as daily Markdown transcripts (one
``YYYY-MM-DD.md`` a day): every session and channel, in time order, split by day in their timezone,
each message under its time, session and role, tool calls as one short line each."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from typing import Protocol

from flynn.memory.store import StoredMessage
from flynn.sessions.tool_steps import ToolStep, decode_steps

TOOL_TEXT_CHARS = 120
"""Characters kept of a tool call's arguments and of its result: the transcript says what was
done, the reply says what came of it."""
_STEP_BATCH = 500
"""Messages whose tool steps are read in one query."""


class Conversation(Protocol):
    """The reads of ``History`` a transcript needs."""

    def in_order(
        self, namespace_prefix: str, *, start: datetime | None = None, end: datetime | None = None
    ) -> Iterator[StoredMessage]: ...

    def tool_steps(self, message_ids: Sequence[int]) -> dict[int, str]: ...


@dataclass(frozen=True, slots=True)
class TranscriptPart:
    """A piece of one day's transcript: its heading (the day's first part), then one message
    each. The parts of a day come together, days in order, so a writer keeps one file open."""

    day: date
    text: str
    is_message: bool


def transcript_parts(
    conversation: Conversation,
    namespace_root: str,
    *,
    zone: tzinfo,
    zone_name: str,
    start: datetime | None = None,
    end: datetime | None = None,
) -> Iterator[TranscriptPart]:
    """The transcript of every message under ``namespace_root`` (and nothing else) created in
    [``start``, ``end``), streamed: the messages are read a page at a time, never all at once.
    Days are calendar days in ``zone`` (named ``zone_name`` in each heading). A reply with
    neither text nor tool calls is left out. Raises ``StoreError`` when the history cannot be
    read."""
    messages = conversation.in_order(namespace_root, start=start, end=end)
    current: date | None = None
    while batch := list(itertools.islice(messages, _STEP_BATCH)):
        steps = conversation.tool_steps([m.id for m in batch if m.role == "assistant"])
        for message in batch:
            calls = decode_steps(steps[message.id]) if message.id in steps else []
            if not message.content.strip() and not calls:
                continue
            at = message.created_at.astimezone(zone)
            if at.date() != current:
                current = at.date()
                yield TranscriptPart(
                    current, day_heading(current, namespace_root, zone_name), False
                )
            yield TranscriptPart(current, message_text(message, at, calls), True)


def day_heading(day: date, namespace_root: str, zone_name: str) -> str:
    return (
        f"# {day:%A %Y-%m-%d}\n\n"
        f"Conversation of `{namespace_root}` on every channel; times are {zone_name}.\n"
    )


def message_text(message: StoredMessage, at: datetime, steps: Sequence[ToolStep]) -> str:
    """One message: ``## HH:MM · <session> · <role>``, its tool calls (the steps a reply
    took, in order) as one line each, then its text as it was stored."""
    lines = ["", f"## {at:%H:%M} · {message.session} · {message.role}", ""]
    for step in steps:
        for call, result in zip(step.calls, step.results, strict=False):
            outcome = "failed: " if result.is_error else ""
            lines.append(
                f"- tool `{call.name}` {_clip(call.arguments)} → {outcome}{_clip(result.content)}"
            )
    text = message.content.strip()
    if text:
        if lines[-1]:
            lines.append("")
        lines.append(text)
    return "\n".join(lines).rstrip("\n") + "\n"


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= TOOL_TEXT_CHARS:
        return flat
    return flat[: TOOL_TEXT_CHARS - 1].rstrip() + "…"
