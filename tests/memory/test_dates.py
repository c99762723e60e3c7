from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from flynn.dates import (
    has_relative_date,
    parse_timezone,
    relative_phrases,
    resolve_relative_dates,
)

# Friday 2026-11-20, 10:00 UTC.
FRIDAY = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def at(text: str, when: datetime = FRIDAY, tz: ZoneInfo | None = None) -> str:
    return resolve_relative_dates(text, when, tz)


def test_the_example_from_the_design() -> None:
    assert at("dentist appointment next Friday") == "dentist appointment on Friday 2026-11-27"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yesterday", "on Thursday 2026-11-19"),
        ("today", "on Friday 2026-11-20"),
        ("tomorrow", "on Saturday 2026-11-21"),
        ("the day after tomorrow", "on Sunday 2026-11-22"),
        ("the day before yesterday", "on Wednesday 2026-11-18"),
        ("tonight", "on Friday 2026-11-20 at night"),
        ("tomorrow morning", "on Saturday 2026-11-21 in the morning"),
        ("this evening", "on Friday 2026-11-20 in the evening"),
        ("last night", "on Thursday 2026-11-19 at night"),
        ("in 3 days", "on Monday 2026-11-23"),
        ("in three days", "on Monday 2026-11-23"),
        ("in a week", "on Friday 2026-11-27"),
        ("in a couple of days", "on Sunday 2026-11-22"),
        ("in 2 weeks", "on Friday 2026-12-04"),
        ("in 3 months", "on Saturday 2027-02-20"),
        ("3 days ago", "on Tuesday 2026-11-17"),
        ("a week ago", "on Friday 2026-11-13"),
        ("last week", "in the week of 2026-11-09"),
        ("this week", "in the week of 2026-11-16"),
        ("next week", "in the week of 2026-11-23"),
        ("this weekend", "on the weekend of 2026-11-21"),
        ("next weekend", "on the weekend of 2026-11-28"),
        ("last month", "in October 2026"),
        ("next month", "in December 2026"),
        ("next year", "in 2027"),
    ],
)
def test_phrases(text: str, expected: str) -> None:
    assert at(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "next X" is the first X after today, "last X" the most recent one before today.
        ("next Monday", "on Monday 2026-11-23"),
        ("next Friday", "on Friday 2026-11-27"),
        ("next Saturday", "on Saturday 2026-11-21"),
        ("last Friday", "on Friday 2026-11-13"),
        ("last Thursday", "on Thursday 2026-11-19"),
        ("last Saturday", "on Saturday 2026-11-14"),
        # "on X" and "this X" are the coming one, today included.
        ("meeting on Friday", "meeting on Friday 2026-11-20"),
        ("meeting on Wednesday", "meeting on Wednesday 2026-11-25"),
        ("this Sunday", "on Sunday 2026-11-22"),
        ("this coming Monday", "on Monday 2026-11-23"),
    ],
)
def test_weekdays(text: str, expected: str) -> None:
    assert at(text) == expected


def test_a_weekday_in_the_past_tense_is_the_one_just_past() -> None:
    assert at("I went to the gym on Monday") == "I went to the gym on Monday 2026-11-16"
    assert at("we met on Friday") == "we met on Friday 2026-11-20"
    assert at("I will go to the gym on Monday") == "I will go to the gym on Monday 2026-11-23"


def test_week_boundaries() -> None:
    sunday = datetime(2026, 11, 22, 12, tzinfo=UTC)
    monday = datetime(2026, 11, 23, 12, tzinfo=UTC)
    assert at("next Monday", sunday) == "on Monday 2026-11-23"
    assert at("next week", sunday) == "in the week of 2026-11-23"
    assert at("this week", sunday) == "in the week of 2026-11-16"
    assert at("last Sunday", monday) == "on Sunday 2026-11-22"
    assert at("last week", monday) == "in the week of 2026-11-16"
    assert at("next Monday", monday) == "on Monday 2026-11-30"


def test_month_and_year_boundaries() -> None:
    new_years_eve = datetime(2026, 12, 31, 12, tzinfo=UTC)
    assert at("tomorrow", new_years_eve) == "on Friday 2027-01-01"
    assert at("next week", new_years_eve) == "in the week of 2027-01-04"
    assert at("next month", new_years_eve) == "in January 2027"
    assert at("in 2 months", datetime(2026, 12, 31, tzinfo=UTC)) == "on Sunday 2027-02-28"
    assert at("yesterday", datetime(2027, 3, 1, tzinfo=UTC)) == "on Sunday 2027-02-28"


def test_the_calendar_day_is_the_persons() -> None:
    late_utc = datetime(2026, 11, 20, 23, 30, tzinfo=UTC)
    assert at("tomorrow", late_utc) == "on Saturday 2026-11-21"
    assert at("tomorrow", late_utc, ZoneInfo("Asia/Tokyo")) == "on Sunday 2026-11-22"
    early_utc = datetime(2026, 11, 20, 2, 0, tzinfo=UTC)
    assert at("today", early_utc, ZoneInfo("America/New_York")) == "on Thursday 2026-11-19"
    # Without a zone, the message time's own offset decides.
    plus_ten = datetime(2026, 11, 20, 23, 0, tzinfo=timezone(timedelta(hours=10)))
    assert resolve_relative_dates("today", plus_ten) == "on Friday 2026-11-20"


def test_prepositions_are_kept() -> None:
    assert at("due by next Friday") == "due by Friday 2026-11-27"
    assert at("until tomorrow") == "until Saturday 2026-11-21"
    assert at("since last week") == "since the week of 2026-11-09"
    assert at("on next Monday") == "on Monday 2026-11-23"


def test_the_date_as_subject_or_possessive_gets_no_preposition() -> None:
    assert at("Tomorrow is my birthday") == "Saturday 2026-11-21 is my birthday"
    assert at("today's plan") == "Friday 2026-11-20's plan"
    assert at("Yesterday I moved") == "On Thursday 2026-11-19 I moved"


@pytest.mark.parametrize(
    "text",
    [
        "Mondays are busy",
        "Monday is my day off",
        "every Monday",
        "I'm updating the docs",
        "the weekly sync",
        "",
        "next week's agenda",
        "back in a few days",  # not a day to write down
        "see you in 999999 years",  # past the calendar
    ],
)
def test_what_is_not_a_date_is_left_alone(text: str) -> None:
    assert at(text) == text


def test_resolving_twice_changes_nothing() -> None:
    once = at("dentist next Friday, gym tomorrow morning, review last week")
    assert at(once, FRIDAY + timedelta(days=30)) == once


def test_several_in_one_text() -> None:
    assert at("moved yesterday, start in 3 days") == (
        "moved on Thursday 2026-11-19, start on Monday 2026-11-23"
    )


def test_helpers() -> None:
    assert has_relative_date("see you tomorrow")
    assert not has_relative_date("see you soon")
    assert relative_phrases("dentist on next Friday and Tomorrow") == ["next friday", "tomorrow"]


@pytest.mark.parametrize(
    ("name", "offset"),
    [
        ("UTC", timedelta(0)),
        ("gmt", timedelta(0)),
        ("UTC+2", timedelta(hours=2)),
        ("UTC-05:30", timedelta(hours=-5, minutes=-30)),
        ("GMT + 1", timedelta(hours=1)),
    ],
)
def test_parse_timezone_offsets(name: str, offset: timedelta) -> None:
    zone = parse_timezone(name)
    assert zone is not None
    assert zone.utcoffset(FRIDAY) == offset


def test_parse_timezone_names() -> None:
    assert parse_timezone("Europe/Berlin") == ZoneInfo("Europe/Berlin")
    for bad in ("Lisbon time", "UTC+15", "UTC+2:75", "../etc/passwd", "/etc/localtime", ""):
        assert parse_timezone(bad) is None
