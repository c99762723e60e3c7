"""The schedule's tables moved out of memory's migrations into its own (``SCHEDULE``), run by the
one runner at the same versions: a database written before the move opens as it was.

``data/main-schema-18.db.gz`` was written by flynn at schema version 18, when memory's migrations
still held the schedule's tables (``main`` at cf92062): three reminders (two of Ana's in a
Telegram topic, one of Bob's), one of them fired into a pending push, and a conversation of Ana's
in a group split per sender, under the session key as the router wrote it then.
"""

from __future__ import annotations

import gzip
import shutil
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flynn.memory.database import Database
from flynn.memory.stores import SqliteMemory
from flynn.messages import SessionKey
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.routes import chat_target
from flynn.schedule.sqlite import SqlitePushes, SqliteSchedule

WRITTEN_AT = 18
FIXTURE = Path(__file__).parent / "data" / "main-schema-18.db.gz"
LATER = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def old_database(tmp_path: Path) -> Path:
    path = tmp_path / "flynn.db"
    with gzip.open(FIXTURE, "rb") as packed, path.open("wb") as file:
        shutil.copyfileobj(packed, file)
    return path


def _schema(path: Path) -> set[tuple[str, str, str, str | None]]:
    with closing(sqlite3.connect(path)) as raw:
        rows = raw.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return {tuple(row) for row in rows}


def _contents(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with closing(sqlite3.connect(path)) as raw:
        version = raw.execute("PRAGMA user_version").fetchall()
        tables = ("jobs", "pushes", "push_drops", "sessions", "messages", "facts")
        return {"version": version} | {
            table: raw.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
            for table in tables
        }


def test_a_database_written_before_the_move_opens_with_no_change(old_database: Path) -> None:
    schema, contents = _schema(old_database), _contents(old_database)
    assert contents["version"] == [(WRITTEN_AT,)]
    assert len(contents["jobs"]) == 3 and len(contents["pushes"]) == 1

    with SqliteMemory.open(old_database, SCHEMA.up_to(WRITTEN_AT)) as memory:
        assert memory.db.version == WRITTEN_AT

    assert _schema(old_database) == schema
    assert _contents(old_database) == contents


def test_a_new_database_gets_the_schema_the_old_migrations_made(
    old_database: Path, tmp_path: Path
) -> None:
    Database.open(tmp_path / "new.db", SCHEMA.up_to(WRITTEN_AT)).close()

    assert _schema(tmp_path / "new.db") == _schema(old_database)


def test_the_schedule_goes_on_where_it_was(old_database: Path) -> None:
    with SqliteMemory.open(old_database, SCHEMA) as memory:
        assert memory.db.version == SCHEMA.latest
        schedule = SqliteSchedule(memory.db)
        ana = schedule.jobs("users/ana")
        assert [(job.number, job.text) for job in ana] == [(2, "stand-up")]
        [push] = SqlitePushes(memory.db).claim_pending(now=LATER, lease_seconds=60)
        assert (push.namespace, push.text) == ("users/ana", "water the plants")
        assert push.target == Target("telegram", "-100", "77")
        added = schedule.add(
            namespace="users/ana",
            kind="reminder",
            text="book the dentist",
            at=LATER,
            repeat=None,
            timezone="UTC",
            target=None,
            now=LATER,
        )
        assert added.number == 3


def test_a_session_key_stored_in_the_old_text_is_the_groups_chat_and_its_sender(
    old_database: Path,
) -> None:
    with SqliteMemory.open(old_database, SCHEMA) as memory:
        [row] = memory.db.fetchall("SELECT DISTINCT session FROM messages")
    key = SessionKey.parse(row[0])

    assert key == SessionKey("telegram", "-100", "77", sender="1001")
    assert str(key) == row[0]
    assert chat_target(key) == Target("telegram", "-100", "77")


def test_forgetting_a_person_takes_their_jobs_and_pushes_and_keeps_the_others(
    old_database: Path,
) -> None:
    with SqliteMemory.open(old_database, SCHEMA) as memory:
        counts = memory.forget_namespace("users/ana")

        assert counts["jobs"] == 2
        assert memory.db.fetchall("SELECT namespace FROM pushes") == []
        assert [job.text for job in SqliteSchedule(memory.db).jobs(None)] == ["call mum"]
        assert memory.history.recent("telegram:-100:77/u1001") == []
