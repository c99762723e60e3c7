"""Migration 11 numbers the reminders an existing database already holds: per person, in the
order they were set (job id), cancelled and done ones included, other kinds of job left without
a number; the schedule then goes on from there."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from flynn.memory.database import Database, encode_time
from flynn.schedule.jobs import JobKind
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqliteSchedule

NUMBERED_FROM = next(n for n, m in enumerate(SCHEMA.migrations, 1) if "jobs_reminder_number" in m)
"""The migration that added ``jobs.number``; the database below is written as the one before."""

NOW = datetime(2026, 3, 25, 9, 0, tzinfo=UTC)

# (namespace, kind, text, status) in the order they were inserted (ids 1..8), as a daemon of
# version 10 left them: the distillation runs first, then everyone's reminders interleaved.
OLD_JOBS = (
    ("users/alice", "distill", "short", "active"),
    ("users/bob", "distill", "short", "active"),
    ("users/alice", "reminder", "call mum", "active"),
    ("users/bob", "reminder", "water plants", "done"),
    ("users/alice", "reminder", "dentist", "cancelled"),
    ("users/bob", "reminder", "bins out", "active"),
    ("users/alice", "reminder", "pay rent", "active"),
    ("user", "reminder", "stretch", "active"),
)


def _write_old_database(path: Path) -> None:
    with Database.open(path, SCHEMA.up_to(NUMBERED_FROM - 1)) as db:
        assert db.version == NUMBERED_FROM - 1
        columns = {row["name"] for row in db.fetchall("PRAGMA table_info(jobs)")}
        assert "number" not in columns
        stamp = encode_time(NOW)
        for namespace, kind, text, status in OLD_JOBS:
            db.execute(
                "INSERT INTO jobs (namespace, kind, text, timezone, next_at, channel, chat_id, "
                "status, created_at, updated_at) VALUES (?, ?, ?, 'UTC', ?, 'telegram', '1', ?, "
                "?, ?)",
                (
                    namespace,
                    kind,
                    text,
                    stamp if status == "active" else None,
                    status,
                    stamp,
                    stamp,
                ),
            )


def test_existing_reminders_are_numbered_per_person_in_the_order_they_were_set(
    tmp_path: Path,
) -> None:
    db_path = tmp_path / "flynn.db"
    _write_old_database(db_path)
    with Database.open(db_path, SCHEMA) as db:
        assert db.version >= NUMBERED_FROM
        numbers = {
            row["text"]: row["number"]
            for row in db.fetchall("SELECT text, number FROM jobs ORDER BY id")
        }
    assert numbers == {
        "short": None,  # both distillation runs
        "call mum": 1,
        "water plants": 1,
        "dentist": 2,  # cancelled, but it had its number
        "bins out": 2,
        "pay rent": 3,
        "stretch": 1,
    }


def test_after_the_migration_new_reminders_go_on_from_each_persons_last_number(
    tmp_path: Path,
) -> None:
    db_path = tmp_path / "flynn.db"
    _write_old_database(db_path)
    with Database.open(db_path, SCHEMA) as db:
        schedule = SqliteSchedule(db)
        assert [job.number for job in schedule.jobs("users/alice", kind="reminder")] == [1, 3]

        def add(namespace: str, kind: JobKind = "reminder") -> int | None:
            job = schedule.add(
                namespace=namespace,
                kind=kind,
                text="new",
                at=NOW,
                repeat=None,
                timezone="UTC",
                target=None,
                now=NOW,
            )
            return job.number

        assert add("users/alice") == 4
        assert add("users/bob") == 3
        assert add("users/carol") == 1
        assert add("users/alice", "distill") is None
        assert add("users/alice") == 5
