"""Cron expressions in a timezone: crontab weekdays, the words, DST, and clear errors."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from flynn.cron import Cron

LISBON = ZoneInfo("Europe/Lisbon")


def test_weekdays_count_from_sunday_as_in_crontab() -> None:
    weekdays = Cron("0 8 * * 1-5", "Europe/Lisbon")
    saturday = datetime(2026, 3, 28, 12, tzinfo=UTC)
    monday = weekdays.next_after(saturday)
    assert monday == datetime(2026, 3, 30, 8, tzinfo=LISBON)
    assert monday.astimezone(LISBON).strftime("%A") == "Monday"
    sunday = datetime(2026, 3, 29, 0, 0, tzinfo=LISBON)
    assert Cron("0 9 * * 0", "Europe/Lisbon").next_after(saturday) == sunday.replace(hour=9)
    assert Cron("0 9 * * 7", "Europe/Lisbon").next_after(saturday) == sunday.replace(hour=9)
    assert Cron("0 9 * * sun", "Europe/Lisbon").next_after(saturday) == sunday.replace(hour=9)
    # Friday to Sunday, and every other day from Sunday.
    weekend = Cron("0 9 * * 5-0", "UTC")
    friday = datetime(2026, 3, 27, 9, tzinfo=UTC)
    assert weekend.next_after(datetime(2026, 3, 26, tzinfo=UTC)) == friday
    assert weekend.next_after(datetime(2026, 3, 29, 10, tzinfo=UTC)) == datetime(
        2026, 4, 3, 9, tzinfo=UTC
    )
    every_other = Cron("0 9 * * */2", "UTC")  # Sun, Tue, Thu, Sat
    assert every_other.next_after(datetime(2026, 3, 30, tzinfo=UTC)) == datetime(
        2026, 3, 31, 9, tzinfo=UTC
    )


def test_daily_time_stays_local_across_the_spring_change_in_lisbon() -> None:
    daily = Cron("0 8 * * *", "Europe/Lisbon")
    before = daily.next_after(datetime(2026, 3, 28, 0, tzinfo=UTC))
    after = daily.next_after(before)
    later = daily.next_after(after)
    # 08:00 every day on the clock: UTC+0 before 29 March, UTC+1 from it.
    assert before.astimezone(UTC) == datetime(2026, 3, 28, 8, tzinfo=UTC)
    assert after.astimezone(UTC) == datetime(2026, 3, 29, 7, tzinfo=UTC)
    assert later.astimezone(UTC) == datetime(2026, 3, 30, 7, tzinfo=UTC)
    assert {moment.astimezone(LISBON).hour for moment in (before, after, later)} == {8}


def test_the_words_people_use() -> None:
    start = datetime(2026, 3, 25, 10, 30, tzinfo=UTC)  # a Wednesday
    assert Cron("@hourly", "UTC").next_after(start) == datetime(2026, 3, 25, 11, tzinfo=UTC)
    assert Cron("@daily", "UTC").next_after(start) == datetime(2026, 3, 26, tzinfo=UTC)
    assert Cron("@weekly", "UTC").next_after(start) == datetime(2026, 3, 29, tzinfo=UTC)
    assert Cron("@monthly", "UTC").next_after(start) == datetime(2026, 4, 1, tzinfo=UTC)
    assert Cron(" @Daily ", "UTC").next_after(start) == datetime(2026, 3, 26, tzinfo=UTC)


def test_next_after_is_strictly_after_and_first_at_or_after_may_be_now() -> None:
    hourly = Cron("0 * * * *", "UTC")
    on_the_hour = datetime(2026, 3, 25, 10, tzinfo=UTC)
    assert hourly.first_at_or_after(on_the_hour) == on_the_hour
    assert hourly.next_after(on_the_hour) == datetime(2026, 3, 25, 11, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "said"),
    [
        ("61 * * * *", "59"),
        ("* * *", "five fields"),
        ("every day", "five fields"),
        ("0 8 * * 8", "0-7"),
        ("0 8 * * mon-xyz", "'xyz'"),
        ("0 8 * * 5-1", "backwards"),
        ("@fortnightly", "five fields"),
    ],
)
def test_an_invalid_expression_is_a_value_error_naming_it(expression: str, said: str) -> None:
    with pytest.raises(ValueError, match="invalid cron expression") as raised:
        Cron(expression, "UTC")
    assert repr(expression) in str(raised.value)
    assert said in str(raised.value)


def test_an_unknown_timezone_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="unknown timezone 'Mars/Olympus'"):
        Cron("0 8 * * *", "Mars/Olympus")
