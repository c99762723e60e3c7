"""Cron expressions read in a timezone: when a repeating job fires next.

APScheduler's ``CronTrigger`` is used only as a calculator (``get_next_fire_time``); no
APScheduler scheduler runs, because the database is the schedule's only source of truth.
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.cron import CronTrigger

from flynn.dates import parse_timezone

ALIASES = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
"""The words crontab(5) takes for common schedules, as the five fields they stand for."""

# crontab(5) counts weekdays from Sunday (0 and 7); APScheduler 3 from Monday (its issue 286,
# fixed only in 4.x). The weekday field is therefore handed over as names, which both read alike.
_CRONTAB_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_TICK = timedelta(microseconds=1)


def zone(name: str) -> tzinfo:
    """The IANA timezone ``name``, or the fixed offset it names (``UTC+05:30``, what a person's
    timezone fact may be); ``ValueError`` naming it when it is neither."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        pass
    fixed = parse_timezone(name) if name[:3].casefold() in ("utc", "gmt") else None
    if fixed is None:
        raise ValueError(
            f"unknown timezone {name!r}: give an IANA name such as Europe/Lisbon or UTC"
        )
    return fixed


class Cron:
    """A five-field crontab expression (or ``@daily`` and the other words) in ``timezone``.

    Fields are minute, hour, day of month, month, day of week (0 or 7 is Sunday, names allowed).
    One difference from Vixie cron: when both day fields are restricted, a time must match
    both, not either. Raises ``ValueError`` naming the expression when it cannot be read.
    """

    __slots__ = ("_trigger", "expression", "timezone")

    def __init__(self, expression: str, timezone: str) -> None:
        self.expression = expression
        self.timezone = timezone
        tz = zone(timezone)
        text = " ".join(expression.split())
        fields = ALIASES.get(text.casefold(), text).split()
        if len(fields) != 5:
            raise ValueError(
                f"invalid cron expression {expression!r}: it needs five fields (minute hour "
                "day-of-month month day-of-week, e.g. '0 8 * * 1-5'), or one of "
                + ", ".join(ALIASES)
            )
        try:
            fields[4] = _weekdays(fields[4])
            self._trigger = CronTrigger.from_crontab(" ".join(fields), timezone=tz)
        except ValueError as exc:
            raise ValueError(f"invalid cron expression {expression!r}: {exc}") from None

    def first_at_or_after(self, moment: datetime) -> datetime:
        """The first time the expression matches at or after ``moment`` (aware)."""
        fire: datetime | None = self._trigger.get_next_fire_time(None, moment)
        if fire is None:  # pragma: no cover - five-field expressions always match again
            raise ValueError(f"cron expression {self.expression!r} never fires")
        return fire

    def next_after(self, moment: datetime) -> datetime:
        """The first time the expression matches strictly after ``moment`` (aware)."""
        return self.first_at_or_after(moment + _TICK)


def _weekdays(field: str) -> str:
    """The crontab weekday field as a comma list of day names (``*`` stays ``*``)."""
    if field == "*":
        return field
    days: set[int] = set()
    for item in field.split(","):
        span, _, step_text = item.partition("/")
        step = _number(step_text, field) if step_text else 1
        if step < 1:
            raise ValueError(f"a step must be at least 1 in {field!r}")
        if span == "*":
            first, last = 0, 6
        elif "-" in span:
            start, _, end = span.partition("-")
            first, last = _day(start, field), _day(end, field)
            if last == 0 and first > 0:
                last = 7  # "5-0" / "fri-sun": Sunday closes the range
            if last < first:
                raise ValueError(f"the range {span!r} runs backwards in {field!r}")
        else:
            first = last = _day(span, field)
            if step_text:
                last = 6  # "1/2": every other day from Monday, as in crontab
        days.update(day % 7 for day in range(first, last + 1, step))
    return ",".join(_CRONTAB_DAYS[day] for day in sorted(days))


def _day(text: str, field: str) -> int:
    name = text.casefold()
    if name in _CRONTAB_DAYS:
        return _CRONTAB_DAYS.index(name)
    day = _number(text, field)
    if not 0 <= day <= 7:
        raise ValueError(f"weekday {text!r} is not 0-7 (0 and 7 are Sunday) in {field!r}")
    return day


def _number(text: str, field: str) -> int:
    if not text.isdigit():
        raise ValueError(f"{text!r} is not a number or weekday name in {field!r}")
    return int(text)
