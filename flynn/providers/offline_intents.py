"""The few plain requests the offline provider turns into tool calls, so a newcomer without a
model sees Flynn act: "remind me in 20 seconds to stretch", "remind me at 18:30 to call mum",
"what are my reminders?", "cancel reminder 2", "add buy milk to my tasks", "what are my tasks?",
"task 1 is done". Anything else is left to the offline reply."""

from __future__ import annotations

import json
import re
import secrets

from flynn.providers.base import ToolCall

_UNITS = {
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "day": 86400,
    "days": 86400,
}
_AMOUNT = r"(?P<amount>\d{1,6}|an?|half an)"
_UNIT = r"(?P<unit>" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")"
_DELAY = rf"in\s+{_AMOUNT}\s*{_UNIT}\b"
_CLOCK = r"at\s+(?P<hour>\d{1,2})(?:[:.h](?P<minute>\d{2}))?\s*(?P<half>am|pm|a\.m\.|p\.m\.)?"
_WHAT = r"(?:to\s+|that\s+|about\s+)?(?P<text>.+?)"
_END = r"\s*[.!]?\s*$"

_REMIND_WHEN_FIRST = re.compile(
    rf"^(?:please\s+)?remind\s+me\s+(?:{_DELAY}|{_CLOCK})\s+{_WHAT}{_END}", re.IGNORECASE
)
_REMIND_WHAT_FIRST = re.compile(
    rf"^(?:please\s+)?remind\s+me\s+{_WHAT}\s+(?:{_DELAY}|{_CLOCK}){_END}", re.IGNORECASE
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
    if match["unit"]:
        amount = match["amount"].casefold()
        count = {"a": 1.0, "an": 1.0, "half an": 0.5}.get(amount) or float(amount)
        seconds = int(count * _UNITS[match["unit"].casefold()])
        return {"text": what, "in_seconds": seconds} if seconds > 0 else None
    hour, minute = int(match["hour"]), int(match["minute"] or 0)
    half = (match["half"] or "").casefold().replace(".", "")
    if half and not 1 <= hour <= 12:
        return None
    if half == "pm" and hour != 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    return {"text": what, "at": f"{hour:02d}:{minute:02d}"}
