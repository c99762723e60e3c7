"""The few plain requests the offline provider turns into tool calls, so a newcomer without a
model sees Flynn act: "remind me in 20 seconds to stretch", "remind me at 18:30 to call mum",
"what are my reminders?", "cancel reminder 2", "add buy milk to my tasks", "what are my tasks?",
"task 1 is done". Anything else is left to the offline reply."""

from __future__ import annotations

import json
import re
import secrets

from flynn.dates import UNIT, Clock, Delay, read_when
from flynn.language import AMOUNT
from flynn.providers.base import ToolCall

_DELAY = rf"in\s+(?:{AMOUNT})\s*(?:{UNIT})\b"
_CLOCK = r"at\s+\d{1,2}(?:[:.h]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?"
_WHEN = rf"(?P<when>{_DELAY}|{_CLOCK})"
_WHAT = r"(?:to\s+|that\s+|about\s+)?(?P<text>.+?)"
_END = r"\s*[.!]?\s*$"

_REMIND_WHEN_FIRST = re.compile(
    rf"^(?:please\s+)?remind\s+me\s+{_WHEN}\s+{_WHAT}{_END}", re.IGNORECASE
)
_REMIND_WHAT_FIRST = re.compile(
    rf"^(?:please\s+)?remind\s+me\s+{_WHAT}\s+{_WHEN}{_END}", re.IGNORECASE
)
_LIST_REMINDERS = re.compile(
    r"^(?:what\s+are|show(?:\s+me)?|list)\s+(?:all\s+)?my\s+reminders\s*\??$"
    r"|^(?:any\s+)?reminders\s*\??$",
    re.IGNORECASE,
)
_CANCEL_REMINDER = re.compile(
    r"^(?:please\s+)?(?:cancel|delete|remove)\s+reminder\s+(?:number\s+|#)?(?P<id>\d{1,9})"
    r"\s*[.!]?$",
    re.IGNORECASE,
)
_ADD_TASK = re.compile(
    r"^(?:please\s+)?add\s+(?P<text>.+?)\s+to\s+my\s+(?:tasks|task\s+list|to-?do(?:\s+list)?)"
    r"\s*[.!]?$",
    re.IGNORECASE,
)
_LIST_TASKS = re.compile(
    r"^(?:what\s+are|show(?:\s+me)?|list)\s+(?:all\s+)?my\s+(?:tasks|to-?dos?)\s*\??$",
    re.IGNORECASE,
)
_TASK_DONE = re.compile(
    r"^(?:(?:mark\s+)?task\s+(?:number\s+|#)?(?P<a>\d{1,9})\s+(?:as\s+)?(?:is\s+)?done"
    r"|(?:i'?m\s+)?done\s+with\s+task\s+(?:number\s+|#)?(?P<b>\d{1,9}))\s*[.!]?$",
    re.IGNORECASE,
)


def tool_call_for(text: str, available: frozenset[str]) -> ToolCall | None:
    """The tool call ``text`` asks for, if it is one of the requests above and that tool is
    on offer."""
    text = " ".join(text.split())
    for name, arguments in _intents(text):
        if name in available:
            # Unique: a strict provider (Anthropic) refuses a history in which two calls share
            # an id, and this history may be sent to one once the person sets a key.
            call_id = f"offline_{secrets.token_hex(8)}"
            return ToolCall(call_id, name, json.dumps(arguments, ensure_ascii=False))
    return None


def _intents(text: str) -> list[tuple[str, dict[str, object]]]:
    found: list[tuple[str, dict[str, object]]] = []
    for pattern in (_REMIND_WHEN_FIRST, _REMIND_WHAT_FIRST):
        match = pattern.match(text)
        if match is not None and (arguments := _reminder(match)) is not None:
            found.append(("reminder_set", arguments))
            return found
    if _LIST_REMINDERS.match(text):
        found.append(("reminder_list", {}))
    elif match := _CANCEL_REMINDER.match(text):
        found.append(("reminder_cancel", {"id": int(match["id"])}))
    elif match := _ADD_TASK.match(text):
        found.append(("task_add", {"text": match["text"]}))
    elif _LIST_TASKS.match(text):
        found.append(("task_list", {}))
    elif match := _TASK_DONE.match(text):
        found.append(("task_done", {"id": int(match["a"] or match["b"])}))
    return found


def _reminder(match: re.Match[str]) -> dict[str, object] | None:
    what = match["text"].strip()
    if not what:
        return None
    when = read_when(match["when"])
    if isinstance(when, Delay) and when.seconds is not None and when.seconds >= 1:
        return {"text": what, "in_seconds": int(when.seconds)}
    if isinstance(when, Clock):
        return {"text": what, "at": f"{when.hour:02d}:{when.minute:02d}"}
    return None  # "at 25:00", "in 0 seconds", "in a few minutes"
