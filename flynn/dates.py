"""Dates and times in words, read by one parser: ``parse_moment`` turns a phrase ("tomorrow",
"next Friday", "in 20 minutes", "at 7pm", "3 days ago", "2026-05-09T18:30") into a point in time,
seen from an injected now in the person's zone. ``resolve_relative_dates`` rewrites the relative
dates in a message as absolute ones with it, so a stored fact means the same day when read later;
``local_when`` is the one way a reminder's time is written.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import MAXYEAR, MINYEAR, UTC, date, datetime, time, timedelta, timezone, tzinfo
from typing import Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flynn.language import AMOUNT, MONTHS, WEEKDAYS, amount

Unit = Literal["second", "minute", "hour", "day", "week", "month", "year"]
_UNITS: dict[str, Unit] = {"s": "second", "sec": "second", "secs": "second", "m": "minute"}
_UNITS.update({"min": "minute", "mins": "minute", "h": "hour", "hr": "hour", "hrs": "hour"})
_UNITS.update((unit, unit) for unit in get_args(Unit))
_UNITS.update((f"{unit}s", unit) for unit in get_args(Unit))
UNIT = "|".join(sorted(_UNITS, key=len, reverse=True))
"""A regex alternation for a unit of time: "seconds", "min", "h", "days", "years" ..."""
DAY_UNIT = r"days?|weeks?|months?|years?"
"""A regex alternation for the units a day is counted in."""
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86_400, "week": 7 * 86_400}
_PART = r"morning|afternoon|evening|night"
_WEEKDAY = "|".join(WEEKDAYS)
_HALF_DAY = r"am|pm|a\.m\.|p\.m\."


@dataclass(frozen=True, slots=True)
class Moment:
    """The point in time a phrase names. ``at`` is in the person's zone (or the offset an ISO time
    gave; naive only when ``now`` was). A phrase that names only a day ("tomorrow", "next Friday")
    has ``has_time`` False and ``at`` that day's midnight, and ``part`` the part of the day it
    named ("tomorrow morning")."""

    at: datetime
    has_time: bool
    part: str | None = None

    @property
    def day(self) -> date:
        return self.at.date()


@dataclass(frozen=True, slots=True)
class Delay:
    """ "in 20 minutes" (``count`` 20) or "3 days ago" (``count`` -3)."""

    count: float
    unit: Unit

    @property
    def seconds(self) -> float | None:
        """How long it is; ``None`` for months and years, whose length depends on the date."""
        return self.count * _SECONDS[self.unit] if self.unit in _SECONDS else None


@dataclass(frozen=True, slots=True)
class Clock:
    """A time of day ("at 7pm", "18:30"): its next occurrence."""

    hour: int
    minute: int
    second: int = 0


@dataclass(frozen=True, slots=True)
class Day:
    """A day counted from today ("yesterday", "the day after tomorrow", "last night")."""

    offset: int
    part: str | None = None


@dataclass(frozen=True, slots=True)
class Weekday:
    """A day of the week ("next Friday", "last Monday", "on Wednesday evening")."""

    index: int
    which: Literal["next", "last", "this"] | None
    part: str | None = None


@dataclass(frozen=True, slots=True)
class Absolute:
    """An ISO-8601 date or date-time; one without an offset is in the person's zone."""

    at: datetime
    has_time: bool


@dataclass(frozen=True, slots=True)
class CalendarDay:
    """A day of a month ("March 14th", "the 3rd of May 2024"); without a year, the nearest one
    on the side of today the sentence looks at."""

    month: int
    day: int
    year: int | None = None


When = Delay | Clock | Day | Weekday | Absolute | CalendarDay
"""What a phrase says, before a now and a zone make it a ``Moment``."""

# The phrases of days, shared by the reader and the finder of dates in a message.
_DAY_PHRASE = (
    r"the\s+day\s+(?P<two_days>after\s+tomorrow|before\s+yesterday)"
    rf"|(?P<day>yesterday|today|tomorrow)(?:\s+(?P<day_part>{_PART}))?"
    r"|(?P<tonight>tonight)"
    rf"|(?P<this_part>this|last)\s+(?P<part>{_PART})"
)
_WEEKDAY_PHRASE = rf"(?:(?P<which>this\s+coming|coming|last|next|this)\s+)?(?P<weekday>{_WEEKDAY})"
_WEEKDAY_PART = rf"(?:\s+(?P<weekday_part>{_PART}))?"


def _delays(unit: str) -> str:
    """ "in 3 days" and "3 days ago", in ``unit``s."""
    return (
        rf"in\s+(?P<ahead>{AMOUNT})\s*(?P<ahead_unit>{unit})\b"
        rf"|(?P<ago>{AMOUNT})\s*(?P<ago_unit>{unit})\s+ago"
    )


_PHRASE = re.compile(
    rf"(?:on\s+)?(?:{_DAY_PHRASE}|{_WEEKDAY_PHRASE}{_WEEKDAY_PART}|{_delays(UNIT)}"
    r"|(?P<at>at\s+)?(?P<hour>\d{1,2})(?:(?P<separator>[:.h])?(?P<minute>\d{2}))?"
    rf"(?::(?P<second>\d{{2}}))?\s*(?P<half>{_HALF_DAY})?"
    r")",
    re.IGNORECASE,
)
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_CALENDAR_DAY = re.compile(
    rf"(?:on\s+)?(?:the\s+)?(?:(?P<day1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month1>{_MONTH})"
    rf"|(?P<month2>{_MONTH})\s+(?:the\s+)?(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?)"
    r"(?:,?\s+(?P<year>\d{4}))?",
    re.IGNORECASE,
)
_ISO = re.compile(r"\d{4}-\d\d-\d\d(?P<time>[T ].+)?")
_WHICH: dict[str, Literal["next", "last", "this"]] = {"last": "last", "this": "this"}
_WHICH.update(dict.fromkeys(("next", "coming", "this coming"), "next"))


def read_when(phrase: str, *, rough: bool = False) -> When | None:
    """What ``phrase`` (the whole of it, in any case and spacing) says, or ``None`` when it is
    not a date or time this parser reads. ``rough`` takes "a few" and "several" as counts (3
    and 4), for a question's stretch of time; without it they read as nothing. Never raises."""
    phrase = " ".join(phrase.split())
    if iso := _ISO.fullmatch(phrase):
        try:
            at = datetime.fromisoformat(phrase.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
        return Absolute(at, has_time=iso["time"] is not None)
    if written := _CALENDAR_DAY.fullmatch(phrase):
        month = MONTHS.index((written["month1"] or written["month2"]).casefold()) + 1
        year = int(written["year"]) if written["year"] else None
        return CalendarDay(month, int(written["day1"] or written["day2"]), year)
    match = _PHRASE.fullmatch(phrase)
    if match is None:
        return None
    if match["two_days"]:
        return Day(2 if match["two_days"].casefold().startswith("after") else -2)
    if match["day"]:
        offset = {"yesterday": -1, "today": 0, "tomorrow": 1}[match["day"].casefold()]
        return Day(offset, _lower(match["day_part"]))
    if match["tonight"]:
        return Day(0, "night")
    if match["this_part"]:
        return Day(-1 if match["this_part"].casefold() == "last" else 0, match["part"].casefold())
    if match["weekday"]:
        which = _WHICH[" ".join(match["which"].casefold().split())] if match["which"] else None
        index = WEEKDAYS.index(match["weekday"].casefold())
        return Weekday(index, which, _lower(match["weekday_part"]))
    if match["ahead"] or match["ago"]:
        count = amount(match["ahead"] or match["ago"], rough=rough)
        unit = _UNITS[(match["ahead_unit"] or match["ago_unit"]).casefold()]
        if count is None or (unit in ("month", "year") and count != int(count)):
            return None
        return Delay(count if match["ahead"] else -count, unit)
    return _clock(match)


def _clock(match: re.Match[str]) -> Clock | None:
    half = (match["half"] or "").casefold().replace(".", "")
    if not (match["at"] or match["minute"] or half):
        return None  # a bare number is not a time
    if match["minute"] and not match["separator"] and len(match["hour"]) != 2:
        return None  # "930" is not a time; "0930" is
    hour, minute, second = int(match["hour"]), int(match["minute"] or 0), int(match["second"] or 0)
    if half and not 1 <= hour <= 12:
        return None
    if half == "pm" and hour != 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59 or second > 59:
        return None
    return Clock(hour, minute, second)


def parse_moment(
    phrase: str,
    *,
    now: datetime,
    tz: tzinfo | None = None,
    past: bool = False,
    rough: bool = False,
) -> Moment | None:
    """The point in time ``phrase`` names, seen at ``now`` in ``tz`` (default: ``now``'s own
    zone), or ``None`` when it names none (``read_when``) or one out of the calendar's range.

    Conventions, written down because people differ: weeks start on Monday; "next Friday" is the
    first Friday after today (on a Friday, a week later) and "last Friday" the most recent one
    before today; "on Friday" and "this Friday" are the coming one (today included), or with
    ``past`` (a past-tense sentence, a question about what happened) the one just past (today
    included); "March 14th" is this year's unless its month is already over (or, with ``past``,
    still to come). A clock time is its next occurrence; "in 3 months" from the 31st is the last day
    of the shorter month. Never raises."""
    when = read_when(phrase, rough=rough)
    if when is None:
        return None
    try:
        return resolve(when, now=now, tz=tz, past=past)
    except (OverflowError, ValueError):
        return None  # "in 900000 years"


def resolve(when: When, *, now: datetime, tz: tzinfo | None = None, past: bool = False) -> Moment:
    """``when`` as a point in time; see ``parse_moment``. ``OverflowError`` past year 9999."""
    local = now.astimezone(tz) if tz is not None and now.tzinfo is not None else now
    zone = local.tzinfo
    today = local.date()
    if isinstance(when, Absolute):
        at = when.at if when.at.tzinfo is not None else when.at.replace(tzinfo=zone)
        return Moment(at, has_time=when.has_time)
    if isinstance(when, Clock):
        clock = time(when.hour, when.minute, when.second)
        at = datetime.combine(today, clock, zone)
        if at <= local:
            at = datetime.combine(today + timedelta(days=1), clock, zone)
        return Moment(at, has_time=True)
    if isinstance(when, Delay):
        seconds = when.seconds
        if when.unit in ("second", "minute", "hour"):
            assert seconds is not None
            return Moment(local + timedelta(seconds=seconds), has_time=True)
        if seconds is not None:
            return _on(today + timedelta(seconds=seconds), zone)
        months = int(when.count) * (12 if when.unit == "year" else 1)
        return _on(_add_months(today, months), zone)
    if isinstance(when, Day):
        return _on(today + timedelta(days=when.offset), zone, when.part)
    if isinstance(when, CalendarDay):
        return _on(_calendar_day(today, when, past=past), zone)
    return _on(_weekday(today, when, past=past), zone, when.part)


def _on(day: date, zone: tzinfo | None, part: str | None = None) -> Moment:
    return Moment(datetime.combine(day, time(), zone), has_time=False, part=part)


def _lower(text: str | None) -> str | None:
    return text.casefold() if text else None


def _calendar_day(today: date, when: CalendarDay, *, past: bool) -> date:
    """``ValueError`` for a day the month does not have ("February 30th")."""
    if when.year is not None:
        return date(when.year, when.month, when.day)
    # By month, not by day: "on March 14th", asked on March 10th about the past, is this March.
    if past:
        return date(today.year - (when.month > today.month), when.month, when.day)
    return date(today.year + (when.month < today.month), when.month, when.day)


def _weekday(today: date, when: Weekday, *, past: bool) -> date:
    ahead = (when.index - today.weekday()) % 7
    behind = (today.weekday() - when.index) % 7
    if when.which == "next":
        return today + timedelta(days=ahead or 7)
    if when.which == "last":
        return today - timedelta(days=behind or 7)
    return today - timedelta(days=behind) if past else today + timedelta(days=ahead)


# --- rewriting a message ---------------------------------------------------------------------

# Prepositions that already say how the date relates to the sentence; after one, no "on" is added.
_PREPOSITIONS = r"on|by|until|till|since|from|before|after|for|starting|through|due"
_ISO_DATE_AHEAD = r"(?!\s+\d{4}-\d\d-\d\d)"

_PATTERN = re.compile(
    rf"\b(?:(?P<prep>{_PREPOSITIONS})\s+)?(?P<phrase>{_DAY_PHRASE}"
    rf"|{_WEEKDAY_PHRASE}{_ISO_DATE_AHEAD}{_WEEKDAY_PART}"
    r"|(?P<period_which>last|next|this)\s+(?P<period>week|weekend|month|year)(?![\w'’])"
    rf"|{_delays(DAY_UNIT)}"
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
    weeks "the week of <Monday>", months "November 2026". Each day is ``parse_moment``'s, with its
    conventions; "on Friday" is the one just past when the text is in the past tense. A bare
    weekday without "on"/"next"/"last"/... ("Mondays are busy") is left alone, and resolving twice
    changes nothing. Never raises for any text.
    """
    if not _PATTERN.search(text):
        return text
    words = {word.casefold() for word in _WORD.findall(text)}
    past = bool(words & _PAST_WORDS) and not words & _FUTURE_WORDS

    def replace(match: re.Match[str]) -> str:
        resolved = _resolve(match, when, tz, past=past)
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


def host_timezone() -> str:
    """The machine's IANA zone name, for people who set none (UTC when it cannot be told)."""
    try:
        import tzlocal  # APScheduler's own dependency; imported where it is needed

        name = tzlocal.get_localzone_name()
    except Exception:  # noqa: BLE001 - any failure to read the host's zone means UTC
        return "UTC"
    return name if name and parse_timezone(name) is not None else "UTC"


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


def _resolve(
    match: re.Match[str], when: datetime, tz: tzinfo | None, *, past: bool
) -> tuple[str, str] | None:
    """(absolute phrase, preposition to put before it when none was written), or ``None`` to
    leave the match as it is."""
    if match["weekday"] and match["which"] is None and match["prep"] is None:
        return None  # "Mondays are busy", "Monday is my day off": not a date
    if match["period"]:
        local = when.astimezone(tz) if tz is not None and when.tzinfo is not None else when
        return _period(local.date(), match["period_which"].casefold(), match["period"].casefold())
    moment = parse_moment(match["phrase"], now=when, tz=tz, past=past)
    if moment is None:
        return None  # "in a few days", "in 90000 years"
    return _day(moment.day, moment.part), "on"


def _day(day: date, part: str | None = None) -> str:
    text = f"{WEEKDAYS[day.weekday()].capitalize()} {day.isoformat()}"
    if part is None:
        return text
    return f"{text} at night" if part == "night" else f"{text} in the {part}"


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
        return f"{MONTHS[first.month - 1].capitalize()} {first.year}", "in"
    return str(today.year + step), "in"


def _add_months(day: date, months: int) -> date:
    """``OverflowError`` outside the years ``date`` holds."""
    year, month = divmod(day.year * 12 + day.month - 1 + months, 12)
    if not MINYEAR <= year <= MAXYEAR:
        raise OverflowError(f"year {year} is out of range")
    # The 31st plus one month is the last day of the shorter month, not an error.
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))
