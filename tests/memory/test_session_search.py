from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from flynn.memory.stores import SqliteMemory
from flynn.recall.session_search import (
    highlight,
    render_results,
    results_json,
    search_sessions,
)

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def fill(memory: SqliteMemory) -> None:
    said = [
        ("users/ana", "telegram:1", "user", "the dentist moved my appointment", T0 - timedelta(2)),
        ("users/ana", "gateway:laptop", "assistant", "Noted, dentist on Friday", T0),
        ("users/ana", "telegram:1", "user", "remind me about the dentist", T0 + timedelta(hours=3)),
        ("users/ana", "gateway:laptop", "user", "something else entirely", T0),
        ("users/bob", "discord:7", "user", "my dentist is Doctor Who", T0),
        ("users/anabel", "discord:8", "user", "dentist dentist dentist", T0),
    ]
    for root, session, role, text, at in said:
        memory.history.append(session, root, role, text, tokens=5, now=at)  # type: ignore[arg-type]


def test_grouped_by_day_newest_first_and_in_order_within_a_day(memory: SqliteMemory) -> None:
    fill(memory)
    days = search_sessions(memory.history, "users/ana", "dentist", limit=10)
    assert [day.day for day in days] == [date(2026, 11, 20), date(2026, 11, 18)]
    today = days[0].hits
    assert [(hit.session, hit.role) for hit in today] == [
        ("gateway:laptop", "assistant"),
        ("telegram:1", "user"),
    ]
    assert today[0].at < today[1].at
    assert "[dentist]" in today[0].excerpt


def test_only_the_persons_own_turns(memory: SqliteMemory) -> None:
    fill(memory)
    for root, other in (("users/ana", "Doctor Who"), ("users/bob", "appointment")):
        found = render_results(search_sessions(memory.history, root, "dentist", limit=10), "x")
        assert other not in found
        assert "dentist dentist" not in found  # users/anabel is not under users/ana
    assert search_sessions(memory.history, "users/carol", "dentist", limit=10) == []


def test_session_filter_limit_and_empty_queries(memory: SqliteMemory) -> None:
    fill(memory)
    only = search_sessions(memory.history, "users/ana", "dentist", limit=10, session="telegram:1")
    assert {hit.session for day in only for hit in day.hits} == {"telegram:1"}
    assert sum(len(day.hits) for day in only) == 2
    [one] = search_sessions(memory.history, "users/ana", "dentist", limit=1)
    assert len(one.hits) == 1
    assert search_sessions(memory.history, "users/ana", "  ", limit=10) == []
    assert search_sessions(memory.history, "users/ana", "dentist", limit=0) == []
    assert search_sessions(memory.history, "users/ana", "NEAR(OR *", limit=10) == []


def test_days_follow_the_timezone(memory: SqliteMemory) -> None:
    fill(memory)
    tokyo = search_sessions(
        memory.history, "users/ana", "dentist", limit=10, timezone=ZoneInfo("Asia/Tokyo")
    )
    # 09:00 and 12:00 UTC on the 20th are 18:00 and 21:00 in Tokyo: still the 20th.
    assert [day.day for day in tokyo] == [date(2026, 11, 20), date(2026, 11, 18)]
    hawaii = search_sessions(
        memory.history, "users/ana", "dentist", limit=10, timezone=ZoneInfo("Pacific/Honolulu")
    )
    # 09:00 UTC on the 20th is 23:00 on the 19th in Honolulu; 12:00 UTC is 02:00 on the 20th.
    assert [day.day for day in hawaii] == [
        date(2026, 11, 20),
        date(2026, 11, 19),
        date(2026, 11, 17),
    ]


def test_rendering(memory: SqliteMemory) -> None:
    fill(memory)
    days = search_sessions(memory.history, "users/ana", "dentist", limit=10)
    text = render_results(days, "dentist")
    lines = text.splitlines()
    assert lines[0] == "3 past messages matching “dentist”:"
    assert lines.index("2026-11-20") < lines.index("2026-11-18")
    assert "- 09:00 gateway:laptop, assistant: Noted, **dentist** on Friday" in lines
    assert render_results([], "otters") == "Nothing we said before matches “otters”."
    data = results_json(days)
    assert data[0]["date"] == "2026-11-20"
    first = data[0]["results"][0]  # type: ignore[index]
    assert first["excerpt"] == "Noted, [dentist] on Friday"
    assert first["time"] == "2026-11-20T09:00:00+00:00"
    assert highlight("a [b] c [d e]") == "a **b** c **d e**"
