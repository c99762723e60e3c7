"""Dates as people write and read them: relative dates ("yesterday", "next Friday", "in 3 days")
rewritten as absolute dates, resolved against the time the message was written, so a stored fact
means the same day when read later; and ``local_when``, the one way a reminder's time is written.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
}
# Longest first, so "a couple of" wins over "a".
_NUMBER = r"\d{1,3}|a\s+couple\s+of|couple\s+of|" + "|".join(
    sorted((word for word in _NUMBER_WORDS if " " not in word), key=len, reverse=True)
)
_UNIT = r"days?|weeks?|months?|years?"
_PART = r"morning|afternoon|evening|night"
_WEEKDAY = "|".join(_WEEKDAYS)
# Prepositions that already say how the date relates to the sentence; after one, no "on" is added.
_PREPOSITIONS = r"on|by|until|till|since|from|before|after|for|starting|through|due"
_ISO_DATE_AHEAD = r"(?!\s+\d{4}-\d\d-\d\d)"

_PATTERN = re.compile(
    rf"\b(?:(?P<prep>{_PREPOSITIONS})\s+)?(?:"
    r"(?P<two_days>the\s+day\s+(?:after\s+tomorrow|before\s+yesterday))"
    rf"|(?P<day>yesterday|today|tomorrow)(?:\s+(?P<day_part>{_PART}))?"
    r"|(?P<tonight>tonight)"
    rf"|(?P<this_part>this|last)\s+(?P<part>{_PART})"
    rf"|(?:(?P<which>this\s+coming|coming|last|next|this)\s+)?(?P<weekday>{_WEEKDAY})"
    rf"{_ISO_DATE_AHEAD}(?:\s+(?P<weekday_part>{_PART}))?"
    r"|(?P<period_which>last|next|this)\s+(?P<period>week|weekend|month|year)(?![\w'’])"
    rf"|in\s+(?P<ahead>{_NUMBER})\s+(?P<ahead_unit>{_UNIT})"
    rf"|(?P<ago>{_NUMBER})\s+(?P<ago_unit>{_UNIT})\s+ago"
    r")\b",
    re.IGNORECASE,
)
# Tense decides "on Monday" (the coming one, or the one just past); explicit words only.
_PAST_WORDS = frozenset(
    "was were went did had got saw met came left ago yesterday last earlier previously".split()
)
_FUTURE_WORDS = frozenset(
    """will shall going gonna next tomorrow plan plans planning planned appointment scheduled
    due need needs must upcoming coming""".split()
)
_WORD = re.compile(r"[\w']+")
# "Tomorrow is my birthday", "today's plan": the date is the subject, so no preposition.
_SUBJECT_AHEAD = re.compile(r"\s+(?:is|was|will)\b|['’]s\b", re.IGNORECASE)


def resolve_relative_dates(text: str, when: datetime, tz: tzinfo | None = None) -> str:
    """``text`` with each relative date replaced by an absolute one, as seen at ``when`` in ``tz``.

    ``when`` is the message's own time; ``tz`` (default: ``when``'s zone) decides which calendar
    day it was. Days become "on Friday 2026-11-27" ("by Friday 2026-11-27" after a preposition),
    weeks "the week of <Monday>", months "November 2026". Conventions, written down because people
    differ: weeks start on Monday; "next Friday" is the first Friday after today (so on a Friday it
    is a week later) and "last Friday" the most recent one before today; "on Friday" and "this
    Friday" are the coming one (today included) unless the text is in the past tense. A bare
    weekday without "on"/"next"/"last"/... ("Mondays are busy") is left alone, and resolving twice
    changes nothing. Never raises for any text.
    """
    if not _PATTERN.search(text):
        return text
    local = when.astimezone(tz) if tz is not None and when.tzinfo is not None else when
    today = local.date()
    words = {word.casefold() for word in _WORD.findall(text)}
    past = bool(words & _PAST_WORDS) and not words & _FUTURE_WORDS

    def replace(match: re.Match[str]) -> str:
        resolved = _resolve(match, today, past=past)
        if resolved is None:
            return match.group(0)
        phrase, default_preposition = resolved
        preposition = match["prep"]
        if preposition is None:
            subject = _SUBJECT_AHEAD.match(text, match.end()) is not None
            preposition = "" if subject else default_preposition
            if preposition and match.group(0)[0].isupper():
                preposition = preposition.capitalize()
        return f"{preposition} {phrase}" if preposition else phrase

    return _PATTERN.sub(replace, text)


def has_relative_date(text: str) -> bool:
    """Whether ``resolve_relative_dates`` might change ``text`` (a cheap pre-check)."""
    return _PATTERN.search(text) is not None


def relative_phrases(text: str) -> list[str]:
    """The relative date phrases in ``text`` without a leading preposition, lower-cased."""
    return [
        text[match.end("prep") if match["prep"] else match.start() : match.end()].strip().casefold()
        for match in _PATTERN.finditer(text)
    ]


def parse_timezone(name: str) -> tzinfo | None:
    """A zone from an IANA name ("Europe/Berlin"), "UTC"/"GMT", or a fixed offset such as
    "UTC+2", "GMT-05:30"; ``None`` when ``name`` is none of these."""
    name = name.strip()
    offset = _OFFSET.match(name)
    if offset is not None:
        if offset["sign"] is None:
            return UTC
        hours, minutes = int(offset["hours"]), int(offset["minutes"] or 0)
        if hours > 14 or minutes >= 60:
            return None
        delta = timedelta(hours=hours, minutes=minutes)
        if offset["sign"] in "-−":
            delta = -delta
        return timezone(delta) if delta else UTC
    if not name or len(name) > 64 or name.startswith(("/", ".")):
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def local_when(moment: datetime, timezone: str) -> str:
    """``Tue 2 Dec 2025 09:30 (Europe/Lisbon)``: ``moment`` in ``timezone`` (an IANA name or a
    fixed offset such as ``UTC+05:30``), seconds only when there are some. The one way a
    reminder's time is written, in chat, in a push, on the memory page and by ``flynn
    reminders``; a zone that is gone is shown as UTC, and named so."""
    where = parse_timezone(timezone)
    if where is None:
        where, timezone = UTC, "UTC"
    local = moment.astimezone(where)
    clock = f"{local:%H:%M}" + (f":{local:%S}" if local.second else "")
    return f"{local:%a} {local.day} {local:%b %Y} {clock} ({timezone})"


_OFFSET = re.compile(
    r"^(?:utc|gmt)(?:\s*(?P<sign>[+\-−])\s*(?P<hours>\d{1,2})(?::?(?P<minutes>\d{2}))?)?$",
    re.IGNORECASE,
)


def _resolve(match: re.Match[str], today: date, *, past: bool) -> tuple[str, str] | None:
    """(absolute phrase, preposition to put before it when none was written), or ``None`` to
    leave the match as it is."""
    if match["two_days"]:
        offset = 2 if "after" in match["two_days"].casefold() else -2
        return _day(today + timedelta(days=offset)), "on"
    if match["day"]:
        offset = {"yesterday": -1, "today": 0, "tomorrow": 1}[match["day"].casefold()]
        return _day(today + timedelta(days=offset), match["day_part"]), "on"
    if match["tonight"]:
        return _day(today, "night"), "on"
    if match["this_part"]:
        offset = -1 if match["this_part"].casefold() == "last" else 0
        return _day(today + timedelta(days=offset), match["part"]), "on"
    if match["weekday"]:
        which = " ".join(match["which"].casefold().split()) if match["which"] else None
        if which is None and match["prep"] is None:
            return None  # "Mondays are busy", "Monday is my day off": not a date
        target = _weekday(today, _WEEKDAYS.index(match["weekday"].casefold()), which, past=past)
        return _day(target, match["weekday_part"]), "on"
    if match["period"]:
        return _period(today, match["period_which"].casefold(), match["period"].casefold())
    if match["ahead"]:
        return _day(_shift(today, _count(match["ahead"]), match["ahead_unit"])), "on"
    if match["ago"]:
        return _day(_shift(today, -_count(match["ago"]), match["ago_unit"])), "on"
    return None


def _day(day: date, part: str | None = None) -> str:
    text = f"{_WEEKDAYS[day.weekday()].capitalize()} {day.isoformat()}"
    if part is None:
        return text
    part = part.casefold()
    return f"{text} at night" if part == "night" else f"{text} in the {part}"


def _weekday(today: date, weekday: int, which: str | None, *, past: bool) -> date:
    ahead = (weekday - today.weekday()) % 7
    if which == "next" or which in ("coming", "this coming"):
        return today + timedelta(days=ahead or 7)
    if which == "last":
        behind = (today.weekday() - weekday) % 7
        return today - timedelta(days=behind or 7)
    if past:
        return today - timedelta(days=(today.weekday() - weekday) % 7)
    return today + timedelta(days=ahead)


def _period(today: date, which: str, period: str) -> tuple[str, str]:
    step = {"last": -1, "this": 0, "next": 1}[which]
    if period == "week":
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
        return f"the week of {monday.isoformat()}", "in"
    if period == "weekend":
        saturday = today - timedelta(days=today.weekday()) + timedelta(days=5, weeks=step)
        return f"the weekend of {saturday.isoformat()}", "on"
    if period == "month":
        first = _add_months(today.replace(day=1), step)
        return first.strftime("%B %Y"), "in"
    return str(today.year + step), "in"


def _count(text: str) -> int:
    text = " ".join(text.casefold().split())
    return int(text) if text.isdigit() else _NUMBER_WORDS[text]


def _shift(today: date, count: int, unit: str) -> date:
    unit = unit.casefold().rstrip("s")
    if unit == "day":
        return today + timedelta(days=count)
    if unit == "week":
        return today + timedelta(weeks=count)
    if unit == "month":
        return _add_months(today, count)
    return _add_months(today, 12 * count)


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    # The 31st plus one month is the last day of the shorter month, not an error.
    for last in (31, 30, 29, 28):
        try:
            return date(year, month, min(day.day, last))
        except ValueError:
            continue
    raise AssertionError("unreachable: every month has at least 28 days")
