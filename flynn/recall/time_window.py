"""The stretch of time a message points at ("last week", "three days ago", "in May", "on
Tuesday", "this summer"), for recall to favour the turns said then (``Tuning.time_window``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from flynn.dates import DAY_UNIT, parse_moment
from flynn.language import AMOUNT, MONTHS, WEEKDAYS, folded, holds_any

_AGO = re.compile(rf"\b(?:{AMOUNT})\s+(?:{DAY_UNIT})\s+ago\b", re.IGNORECASE)
_RELATIVE = re.compile(
    r"\b(?P<which>last|this|past|previous)\s+(?P<unit>night|week|weekend|month|year|summer"
    r"|winter|spring|autumn|fall)\b",
    re.IGNORECASE,
)
_DAY_WORD = re.compile(r"\b(?P<word>yesterday|today|tonight|recently|lately)\b", re.IGNORECASE)
_WEEKDAY = re.compile(r"\b(?:on|last)\s+(?:" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE)
_MONTH = re.compile(
    r"\b(?:(?P<day1>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?)?"
    r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b"
    r"(?:\s+(?P<day2>\d{1,2})(?:st|nd|rd|th)?\b)?(?:,?\s+(?P<year>(?:19|20)\d\d)\b)?",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:in|of|during|since)\s+(?P<year>(?:19|20)\d\d)\b", re.IGNORECASE)
# What a match of ``_RELATIVE`` holds ("weekend" holds "week").
_UNITS = ("night", "week", "month", "year", "summer", "winter", "spring", "autumn", "fall")
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """The stretch of time a message points at; ``[start, end)``."""

    start: datetime
    end: datetime

    def closeness(self, moment: datetime) -> float:
        """1.0 inside the window, falling to 0.0 over a margin of a quarter of its width (at
        least two days) on either side: people are loose about "last week"."""
        if self.start <= moment < self.end:
            return 1.0
        margin = max((self.end - self.start).total_seconds() / 4, 2 * 86_400.0)
        distance = self.start - moment if moment < self.start else moment - self.end
        return max(0.0, 1.0 - distance.total_seconds() / margin)


def time_window(text: str, *, now: datetime) -> TimeWindow | None:
    """The time ``text`` refers to, relative to ``now``; ``None`` when it names none."""
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    # Each pattern is searched only where a word it needs is (``holds_any``).
    lowered = folded(text)
    if (
        holds_any(lowered, ("ago",))
        and (match := _AGO.search(text))
        and (moment := _day_of(match.group(), now))
    ):
        # A window around the day, wider the further back: "three months ago" is loose.
        half = timedelta(days=max(1, (day - moment).days // 4))
        return TimeWindow(moment - half, moment + half + timedelta(days=1))
    if holds_any(lowered, ("yesterday", "today", "tonight", "recently", "lately")) and (
        match := _DAY_WORD.search(text)
    ):
        word = match["word"].lower()
        if word in ("recently", "lately"):
            return TimeWindow(day - timedelta(days=30), now + timedelta(seconds=1))
        return _one_day(_day_of(word, now))
    if holds_any(lowered, _UNITS) and (match := _RELATIVE.search(text)):
        # casefold, not lower: a case-insensitive search matches 'ſ' as 's' ("laſt ſummer").
        which, unit = match["which"].casefold(), match["unit"].casefold()
        if unit not in _UNITS:  # a dotted 'İ' folds to two characters ("nİght")
            return None
        if unit == "night":  # "the past night", "previous night": last night
            return _one_day(_day_of("this night" if which == "this" else "last night", now))
        return _relative(which, unit, now, day)
    if holds_any(lowered, WEEKDAYS) and (match := _WEEKDAY.search(text)):
        return _one_day(_day_of(match.group(), now))
    for match in _MONTH.finditer(text) if holds_any(lowered, MONTHS) else ():
        month_word = match["month"].lower()
        if month_word == "may" and not (match["year"] or match["day1"] or match["day2"]):
            before = text[max(0, match.start() - 12) : match.start()].lower()
            if not re.search(r"\b(?:in|of|during|since|early|late|mid)\s*-?\s*$", before):
                continue  # "may" as a verb
        if (match["day1"] or match["day2"]) and (moment := _day_of(match.group(), now)):
            return _one_day(moment)
        # A month, or a day it does not have ("February 30th"): the month.
        return _month_window(match, MONTHS.index(month_word) + 1, now)
    if ("19" in text or "20" in text) and (match := _YEAR.search(text)):
        year = int(match["year"])
        return TimeWindow(
            now.replace(year, 1, 1, 0, 0, 0, 0), now.replace(year + 1, 1, 1, 0, 0, 0, 0)
        )
    return None


def _day_of(phrase: str, now: datetime) -> datetime | None:
    """The day ``phrase`` names, asked about at ``now``: the past is what questions ask of."""
    moment = parse_moment(phrase, now=now, past=True, rough=True)
    return None if moment is None else moment.at


def _one_day(start: datetime | None) -> TimeWindow | None:
    return None if start is None else TimeWindow(start, start + timedelta(days=1))


def _relative(which: str, unit: str, now: datetime, day: datetime) -> TimeWindow:
    current = which == "this"
    if unit == "week":
        monday = day - timedelta(days=day.weekday())
        start = monday if current else monday - timedelta(days=7)
        return TimeWindow(start, start + timedelta(days=7))
    if unit == "weekend":
        saturday = day - timedelta(days=(day.weekday() - 5) % 7)
        if not current and saturday + timedelta(days=2) > now:
            saturday -= timedelta(days=7)
        return TimeWindow(saturday, saturday + timedelta(days=2))
    if unit == "month":
        first = day.replace(day=1)
        if not current:
            first = (first - timedelta(days=1)).replace(day=1)
        return TimeWindow(first, _add_month(first))
    if unit == "year":
        year = now.year if current else now.year - 1
        return TimeWindow(day.replace(year, 1, 1), day.replace(year + 1, 1, 1))
    month, months = _SEASONS[unit]
    year = now.year if (current or now.month > month + 2) else now.year - 1
    if unit == "winter" and now.month < 3 and current:
        year -= 1
    start = day.replace(year, month, 1)
    end = start
    for _ in range(months):
        end = _add_month(end)
    return TimeWindow(start, end)


def _month_window(match: re.Match[str], month: int, now: datetime) -> TimeWindow:
    year = int(match["year"]) if match["year"] else now.year
    if not match["year"] and month > now.month:
        year -= 1  # "in May" said in March means last May
    first = now.replace(year, month, 1, 0, 0, 0, 0)
    return TimeWindow(first, _add_month(first))


def _add_month(first: datetime) -> datetime:
    return (first + timedelta(days=32)).replace(day=1)
