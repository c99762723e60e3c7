"""The schedule's stores on both backends: SQLite in tmp_path, and PostgreSQL (a real server,
``tests/postgres_server.py``) in a schema of the test's own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from flynn.memory.stores import SqliteMemory
from flynn.postgres.memory import PostgresMemory
from flynn.schedule.dialect import SQLITE_SCHEDULE, ScheduleDialect, ScheduleSql
from flynn.schedule.jobs import PushLimits
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.postgres import (
    POSTGRES_SCHEDULE,
    PostgresPushes,
    PostgresRuns,
    PostgresSchedule,
)
from flynn.schedule.runs import SqliteRuns, SqlRuns
from flynn.schedule.sqlite import SqlitePushes, SqliteSchedule
from flynn.schedule.store import SqlPushes


@dataclass(frozen=True, slots=True)
class ScheduleStore:
    """The schedule, the outbox and the runs on one backend, and that backend's memory."""

    name: str
    db: ScheduleSql
    schedule: Callable[[PushLimits | None], SqliteSchedule | PostgresSchedule]
    pushes: Callable[[PushLimits | None], SqlPushes]
    runs: Callable[[], SqlRuns]
    forget_namespace: Callable[[str], dict[str, int]]
    """The memory's forgetting of a person, every store at once (the schedule's rows too)."""
    dialect: ScheduleDialect
    """How to write a test's own statement (``dialect.statement``) and times for this backend."""


def sqlite_store(memory: SqliteMemory) -> ScheduleStore:
    db = memory.db
    return ScheduleStore(
        "sqlite",
        db,
        lambda limits: SqliteSchedule(db, limits),
        lambda limits: SqlitePushes(db, limits),
        lambda: SqliteRuns(db),
        memory.forget_namespace,
        SQLITE_SCHEDULE,
    )


def postgres_store(memory: PostgresMemory) -> ScheduleStore:
    db = memory.db
    return ScheduleStore(
        "postgresql",
        db,
        lambda limits: PostgresSchedule(db, limits),
        lambda limits: PostgresPushes(db, limits),
        lambda: PostgresRuns(db),
        memory.forget_namespace,
        POSTGRES_SCHEDULE,
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ScheduleStore]:
    """Each contract test runs once per backend (a test may narrow that with
    ``@pytest.mark.parametrize("store", ["sqlite"], indirect=True)``)."""
    if request.param == "sqlite":
        with SqliteMemory.open(tmp_path / "flynn.db", SCHEMA) as memory:
            yield sqlite_store(memory)
        return
    url: str = request.getfixturevalue("postgres_url")
    with PostgresMemory.open(url, [PostgresSchedule]) as pg:
        yield postgres_store(pg)
