"""What ``PersonalFiles`` keeps between turns is dropped when what it came from changes: a
person's timezone when any fact changes, the reminders their prompt lists when any job or fact
changes, here or through another connection."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flynn.memory.database import Database
from flynn.memory.facts import SqliteFacts
from flynn.memory.store import NewFact
from flynn.people.files import DirectoryPersonFiles
from flynn.people.store import REMINDERS_FILE
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqliteSchedule
from flynn.sessions.personal import PersonalFiles

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    with Database.open(tmp_path / "flynn.db", SCHEMA) as database:
        yield database


def _zone_fact(value: str) -> NewFact:
    return NewFact("maya/profile", "profile", value, field="timezone")


def test_a_timezone_stored_after_one_was_read_is_seen_next(db: Database, tmp_path: Path) -> None:
    facts = SqliteFacts(db)
    personal = PersonalFiles(
        tmp_path, facts, files=DirectoryPersonFiles(tmp_path), schedule=None, default_timezone="UTC"
    )
    assert personal.timezone_of("maya").name == "UTC"
    assert personal.timezone_of("maya").source == "config"
    stored = facts.add(_zone_fact("Europe/Lisbon"), now=NOW)
    assert personal.timezone_of("maya").name == "Europe/Lisbon"
    facts.supersede(stored.id, _zone_fact("Asia/Tokyo"), now=NOW)
    assert personal.timezone_of("maya").name == "Asia/Tokyo"
    facts.forget("maya", field="timezone")
    assert personal.timezone_of("maya").name == "UTC"


def test_a_timezone_another_connection_stores_or_forgets_is_seen_next(
    db: Database, tmp_path: Path
) -> None:
    personal = PersonalFiles(
        tmp_path,
        SqliteFacts(db),
        files=DirectoryPersonFiles(tmp_path),
        schedule=None,
        default_timezone="UTC",
    )
    assert personal.timezone_of("maya").name == "UTC"
    with Database.open(tmp_path / "flynn.db", SCHEMA) as other:
        SqliteFacts(other).add(_zone_fact("Europe/Lisbon"), now=NOW)
        assert personal.timezone_of("maya").name == "Europe/Lisbon"
        SqliteFacts(other).forget("maya", field="timezone")
    assert personal.timezone_of("maya").name == "UTC"


def test_each_person_keeps_their_own_timezone(db: Database, tmp_path: Path) -> None:
    facts = SqliteFacts(db)
    personal = PersonalFiles(
        tmp_path, facts, files=DirectoryPersonFiles(tmp_path), schedule=None, default_timezone="UTC"
    )
    facts.add(_zone_fact("Europe/Lisbon"), now=NOW)
    assert personal.timezone_of("maya").name == "Europe/Lisbon"
    assert personal.timezone_of("ana").name == "UTC"
    assert personal.timezone_of("maya").name == "Europe/Lisbon"


def _add_reminder(schedule: SqliteSchedule, text: str, hours: int = 1) -> int:
    job = schedule.add(
        namespace="maya",
        kind="reminder",
        text=text,
        at=NOW + timedelta(hours=hours),
        repeat=None,
        timezone="UTC",
        target=None,
        now=NOW,
    )
    return job.id


def _listed(personal: PersonalFiles) -> str:
    return personal.prompt_files("maya", [REMINDERS_FILE], now=NOW)[REMINDERS_FILE]


def test_reminders_added_fired_cancelled_or_forgotten_are_listed_next(
    db: Database, tmp_path: Path
) -> None:
    schedule = SqliteSchedule(db)
    facts = SqliteFacts(db)
    personal = PersonalFiles(
        tmp_path,
        facts,
        files=DirectoryPersonFiles(tmp_path),
        schedule=schedule,
        default_timezone="UTC",
    )
    assert _listed(personal) == ""
    water = _add_reminder(schedule, "water the plants")
    assert "water the plants (next 2026-05-01 13:00)" in _listed(personal)
    _add_reminder(schedule, "call Ana", hours=30)
    assert "call Ana" in _listed(personal)
    facts.add(_zone_fact("Asia/Tokyo"), now=NOW)  # the times are shown in their zone
    assert "water the plants (next 2026-05-01 22:00)" in _listed(personal)
    schedule.cancel("maya", water, now=NOW)
    assert "water the plants" not in _listed(personal)
    schedule.fire_due(now=NOW + timedelta(hours=31), late_after_seconds=3600, limit=10)
    assert _listed(personal) == ""
    _add_reminder(schedule, "stretch")
    assert "stretch" in _listed(personal)
    with db.transaction():
        schedule.forget_namespace("maya")
    assert _listed(personal) == ""


def test_reminders_another_connection_adds_are_listed_next(db: Database, tmp_path: Path) -> None:
    personal = PersonalFiles(
        tmp_path,
        SqliteFacts(db),
        files=DirectoryPersonFiles(tmp_path),
        schedule=SqliteSchedule(db),
        default_timezone="UTC",
    )
    assert _listed(personal) == ""
    with Database.open(tmp_path / "flynn.db", SCHEMA) as other:
        _add_reminder(SqliteSchedule(other), "water the plants")
    assert "water the plants" in _listed(personal)
