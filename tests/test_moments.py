"""The one date parser (``flynn.dates.parse_moment``) against every date and time phrase its four
readers' tests use: the rewriter of stored messages, recall's time windows, the offline intents
and ``reminder_set``'s ``at``. Seen on Friday 2026-11-20 at 11:00 in Berlin (10:00 UTC)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from flynn.dates import Clock, Delay, parse_moment, read_when
from flynn.recall.time_window import time_window

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def _on(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=BERLIN)


def _at(year: int, month: int, day: int, hour: int, minute: int, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=BERLIN)


DAYS = [
    # The rewriter of stored messages (tests/memory/test_dates.py).
    ("yesterday", False, _on(2026, 11, 19)),
    ("today", False, _on(2026, 11, 20)),
    ("tomorrow", False, _on(2026, 11, 21)),
    ("the day after tomorrow", False, _on(2026, 11, 22)),
    ("the day before yesterday", False, _on(2026, 11, 18)),
    ("tonight", False, _on(2026, 11, 20)),
    ("tomorrow morning", False, _on(2026, 11, 21)),
    ("this evening", False, _on(2026, 11, 20)),
    ("last night", False, _on(2026, 11, 19)),
    ("in 3 days", False, _on(2026, 11, 23)),
    ("in three days", False, _on(2026, 11, 23)),
    ("in a week", False, _on(2026, 11, 27)),
    ("in a couple of days", False, _on(2026, 11, 22)),
    ("in 2 weeks", False, _on(2026, 12, 4)),
    ("in 3 months", False, _on(2027, 2, 20)),
    ("3 days ago", False, _on(2026, 11, 17)),
    ("a week ago", False, _on(2026, 11, 13)),
    ("next Monday", False, _on(2026, 11, 23)),
    ("next Friday", False, _on(2026, 11, 27)),
    ("next Saturday", False, _on(2026, 11, 21)),
    ("last Friday", False, _on(2026, 11, 13)),
    ("last Thursday", False, _on(2026, 11, 19)),
    ("last Saturday", False, _on(2026, 11, 14)),
    ("on Friday", False, _on(2026, 11, 20)),
    ("on Wednesday", False, _on(2026, 11, 25)),
    ("this Sunday", False, _on(2026, 11, 22)),
    ("this coming Monday", False, _on(2026, 11, 23)),
    ("on Monday", True, _on(2026, 11, 16)),
    # Recall's questions about the past (tests/memory/test_query.py, test_recall.py).
    ("two weeks ago", True, _on(2026, 11, 6)),
    ("a couple of weeks ago", True, _on(2026, 11, 6)),
    ("on Tuesday", True, _on(2026, 11, 17)),
    ("last Sunday", True, _on(2026, 11, 15)),
    ("March 14th", True, _on(2026, 3, 14)),
    ("14th of March 2025", True, _on(2025, 3, 14)),
    ("December 3rd", True, _on(2025, 12, 3)),
    ("December 3rd", False, _on(2026, 12, 3)),
    ("March 14th", False, _on(2027, 3, 14)),
]

TIMES = [
    # The offline intents (tests/providers/test_offline_intents.py).
    ("in 20 seconds", _at(2026, 11, 20, 11, 0, 20)),
    ("in 10 minutes", _at(2026, 11, 20, 11, 10)),
    ("in an hour", _at(2026, 11, 20, 12, 0)),
    ("in half an hour", _at(2026, 11, 20, 11, 30)),
    ("in 5 min", _at(2026, 11, 20, 11, 5)),
    ("at 18:30", _at(2026, 11, 20, 18, 30)),
    ("at 7pm", _at(2026, 11, 20, 19, 0)),
    ("at 12am", _at(2026, 11, 21, 0, 0)),
    ("at 9.15", _at(2026, 11, 21, 9, 15)),
    # reminder_set's at (tests/tools/test_reminder_times.py and the gateway's acts).
    ("18:30", _at(2026, 11, 20, 18, 30)),
    ("08:00", _at(2026, 11, 21, 8, 0)),
    ("11:00", _at(2026, 11, 21, 11, 0)),  # now is not "next"
    ("2026-11-02T08:00", _at(2026, 11, 2, 8, 0)),
    ("2026-05-09T18:30", _at(2026, 5, 9, 18, 30)),
    ("2026-12-24T09:30:00Z", datetime(2026, 12, 24, 9, 30, tzinfo=UTC)),
]


@pytest.mark.parametrize(("phrase", "past", "expected"), DAYS)
def test_days(phrase: str, past: bool, expected: datetime) -> None:
    moment = parse_moment(phrase, now=NOW, tz=BERLIN, past=past)
    assert moment is not None
    assert (moment.at, moment.has_time) == (expected, False)


@pytest.mark.parametrize(("phrase", "expected"), TIMES)
def test_times(phrase: str, expected: datetime) -> None:
    moment = parse_moment(phrase, now=NOW, tz=BERLIN)
    assert moment is not None
    assert moment.at == expected and moment.has_time


@pytest.mark.parametrize(
    "phrase",
    [
        "at 25:00",
        "at 13pm",
        "at 10:61",
        "in 0.5 months",
        "in a few days",  # only a rough reader counts "a few"
        "in 900000 years",
        "February 30th",
        "2026-13-01",
        "7",
        "930",
        "soon",
        "",
        "tomorrow or the day after",
    ],
)
def test_what_names_no_moment(phrase: str) -> None:
    assert parse_moment(phrase, now=NOW, tz=BERLIN) is None


def test_the_day_is_the_persons() -> None:
    late = datetime(2026, 11, 20, 23, 30, tzinfo=UTC)  # Saturday already in Berlin
    moment = parse_moment("tomorrow", now=late, tz=BERLIN)
    assert moment is not None and moment.day == date(2026, 11, 22)
    moment = parse_moment("at 9am", now=late, tz=BERLIN)
    assert moment is not None and moment.at == _at(2026, 11, 21, 9, 0)


def test_a_rough_count_is_read_only_when_asked_for() -> None:
    moment = parse_moment("a few days ago", now=NOW, tz=BERLIN, past=True, rough=True)
    assert moment is not None and moment.day == date(2026, 11, 17)
    assert parse_moment("several weeks ago", now=NOW, rough=True) is not None


def test_what_a_phrase_says_before_a_clock_reads_it() -> None:
    assert read_when("in half an hour") == Delay(0.5, "hour")
    assert read_when("3 days ago") == Delay(-3, "day")
    assert read_when("at 7.05 p.m.") == Clock(19, 5)
    delay = read_when("in 2 months")
    assert isinstance(delay, Delay) and delay.seconds is None


@pytest.mark.parametrize(
    ("question", "start", "days"),
    [
        ("What did I eat yesterday?", _on(2026, 11, 19), 1),
        ("what did I do on Tuesday", _on(2026, 11, 17), 1),
        ("where did I go last Sunday", _on(2026, 11, 15), 1),
        ("what did we do last night", _on(2026, 11, 19), 1),
        ("how did I sleep the past night", _on(2026, 11, 19), 1),
        ("She lands on March 14th.", _on(2026, 3, 14), 1),
        ("two weeks ago", _on(2026, 11, 6) - timedelta(days=3), 7),
        ("a few days ago", _on(2026, 11, 17) - timedelta(days=1), 3),
        ("what happened last week", _on(2026, 11, 9), 7),
        ("in May 2023", _on(2023, 5, 1), 31),
    ],
)
def test_recall_windows_are_built_on_the_same_days(
    question: str, start: datetime, days: int
) -> None:
    window = time_window(question, now=NOW.astimezone(BERLIN))
    assert window is not None
    assert (window.start, window.end - window.start) == (start, timedelta(days=days))


@pytest.mark.parametrize(
    ("question", "start"),
    [
        ("What did I do YESTERDAY?", date(2026, 11, 27)),
        ("THREE DAYS AGO", date(2026, 11, 24)),
        ("ON TUESDAY we met", date(2026, 11, 24)),
        ("in MARCH", date(2026, 3, 1)),
        # 'ſ' is an 's' to a case-insensitive search, but not to str.lower().
        ("what happened laſt week", date(2026, 11, 16)),
        ("what did we do laſt ſummer", date(2026, 6, 1)),
    ],
)
def test_a_time_is_found_in_any_case(question: str, start: date) -> None:
    """Each pattern is searched only where the lower-cased text holds a word it needs: any
    spelling of the time still reaches it."""
    window = time_window(question, now=datetime(2026, 11, 28, 12, 0, tzinfo=UTC))
    assert window is not None
    assert window.start.date() == start


def test_a_unit_that_folds_to_no_unit_is_no_window() -> None:
    """'İ' matches 'i' in a case-insensitive search but folds to two characters: no window,
    and no error (analysing a question never raises)."""
    assert time_window("what happened last nİght", now=datetime(2026, 11, 28, tzinfo=UTC)) is None
