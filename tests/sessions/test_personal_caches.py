"""What ``PersonalFiles`` keeps between turns is dropped when what it came from changes: a
person's timezone when any fact changes, here or through another connection."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flynn.memory.database import Database
from flynn.memory.facts import SqliteFacts
from flynn.memory.store import NewFact
from flynn.schedule.migrations import SCHEMA
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
    personal = PersonalFiles(tmp_path, facts, schedule=None, default_timezone="UTC")
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
    personal = PersonalFiles(tmp_path, SqliteFacts(db), schedule=None, default_timezone="UTC")
    assert personal.timezone_of("maya").name == "UTC"
    with Database.open(tmp_path / "flynn.db", SCHEMA) as other:
        SqliteFacts(other).add(_zone_fact("Europe/Lisbon"), now=NOW)
        assert personal.timezone_of("maya").name == "Europe/Lisbon"
        SqliteFacts(other).forget("maya", field="timezone")
    assert personal.timezone_of("maya").name == "UTC"


def test_each_person_keeps_their_own_timezone(db: Database, tmp_path: Path) -> None:
    facts = SqliteFacts(db)
    personal = PersonalFiles(tmp_path, facts, schedule=None, default_timezone="UTC")
    facts.add(_zone_fact("Europe/Lisbon"), now=NOW)
    assert personal.timezone_of("maya").name == "Europe/Lisbon"
    assert personal.timezone_of("ana").name == "UTC"
    assert personal.timezone_of("maya").name == "Europe/Lisbon"
