"""How a backend writes the schedule's statements: the schedule's logic (``flynn.schedule.store``,
``backlog``, ``runs``) is written once, in SQLite's form, and runs on any database that serves
``ScheduleSql``; a ``ScheduleDialect`` says what differs (placeholders, times, locking claims)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flynn.memory.database import decode_time, encode_time
from flynn.memory.sql import TransactionalSql

ScheduleSql = TransactionalSql
"""``Sql`` with transactions (SQLite's ``Database``, ``PostgresDatabase``)."""


def _as_written(sql: str) -> str:
    return sql


@dataclass(frozen=True, slots=True)
class ScheduleDialect:
    """One backend's differences. Statements are written with ``?`` or ``:name`` placeholders,
    ``IS`` for null-safe equality and ``pushes_counted`` for the caps' counts; ``statement``
    turns one into what the backend takes."""

    statement: Callable[[str], str]
    time: Callable[[datetime], object]
    """A time as stored; raises ``ValueError`` for a naive one."""
    stored_time: Callable[[Any], datetime]
    """A stored time, back as an aware ``UTC`` datetime."""
    claim_lock: str
    """Appended to the ``SELECT`` of rows a caller is about to claim, inside its transaction:
    PostgreSQL's ``FOR UPDATE SKIP LOCKED`` makes concurrent workers take disjoint rows.
    SQLite needs none: its writers are serialised by ``BEGIN IMMEDIATE``."""
    counted_pushes: str
    """The table expression the caps count pending pushes from."""
    drops_order: str
    """The column ordering a digest's entries as they were added."""
    numbers_lock: str
    """Run before a reminder's number is taken (``:namespace``), so two workers adding at once
    cannot take the same one; empty where writers are serialised anyway."""

    def optional_time(self, stored: Any) -> datetime | None:
        return None if stored is None else self.stored_time(stored)


SQLITE_SCHEDULE = ScheduleDialect(
    statement=_as_written,
    time=encode_time,
    stored_time=decode_time,
    claim_lock="",
    # Named, or the planner may pick another partial index and visit every pending row.
    counted_pushes="pushes INDEXED BY pushes_counted",
    drops_order="rowid",
    numbers_lock="",
)
