from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flynn.errors import StoreError
from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqliteSchedule

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def _fill(memory: SqliteMemory, root: str) -> None:
    memory.documents.replace(f"{root}/profile", "likes otters", now=T0)
    memory.documents.replace(f"{root}/working", "otter project", now=T0)
    memory.facts.add(NewFact(namespace=f"{root}/facts", kind="profile", value="otter fan"), now=T0)
    memory.history.append(f"{root}:chat", root, "user", "otters are great", tokens=4, now=T0)
    memory.history.append(
        f"{root}:chat", root, "assistant", "they are", tokens=2, now=T0, tool_steps="[]"
    )
    schedule = SqliteSchedule(memory.db)
    job = schedule.add(
        namespace=root,
        kind="reminder",
        text="feed the otters",
        at=T0 - timedelta(minutes=1),
        repeat=None,
        timezone="UTC",
        target=Target("gateway", "laptop"),
        now=T0 - timedelta(hours=1),
    )
    schedule.fire_due(now=T0, late_after_seconds=300, limit=10)  # queues its push
    assert job.id


def _snapshot(memory: SqliteMemory) -> dict[str, int]:
    counts = {}
    tables = ("documents", "facts", "messages", "sessions", "facts_fts", "messages_fts")
    for table in (*tables, "message_tools", "jobs", "pushes"):
        row = memory.db.fetchone(f"SELECT count(*) FROM {table}")
        assert row is not None
        counts[table] = int(row[0])
    return counts


def test_forget_namespace_removes_everything_under_the_prefix(memory: SqliteMemory) -> None:
    _fill(memory, "user")
    _fill(memory, "username")
    memory.costs.record(
        provider="p", model="m", task="chat", input_tokens=1, output_tokens=1, now=T0
    )
    counts = memory.forget_namespace("user")
    assert counts == {
        "documents": 2,
        "facts": 1,
        "messages": 2,
        "sessions": 1,
        "entities": 0,
        "embeddings": 0,
        "jobs": 1,
    }
    assert memory.documents.list("user") == []
    for table in ("message_tools", "jobs", "pushes"):
        row = memory.db.fetchone(f"SELECT count(*) FROM {table}")
        assert row is not None and row[0] == 1, table  # only username's is left
    assert memory.facts.search("user", "otter", limit=5) == []
    assert memory.history.search("user", "otters", limit=5) == []
    assert len(memory.documents.list("username")) == 2
    assert len(memory.facts.search("username", "otter", limit=5)) == 1
    assert len(memory.history.search("username", "otters", limit=5)) == 1
    assert memory.costs.totals() == {"chat": (1, 1)}
    assert memory.db.integrity_check() == []


def test_forget_namespace_is_one_transaction(memory: SqliteMemory) -> None:
    _fill(memory, "user")
    before = _snapshot(memory)
    memory.db.execute(
        "CREATE TRIGGER fail_forget BEFORE DELETE ON sessions "
        "BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    with pytest.raises(StoreError, match="refused"):
        memory.forget_namespace("user")
    assert _snapshot(memory) == before


def test_reopen_keeps_everything(db_path: Path) -> None:
    with SqliteMemory.open(db_path, SCHEMA) as memory:
        _fill(memory, "user")
    with SqliteMemory.open(db_path, SCHEMA) as memory:
        assert [m.content for m in memory.history.recent("user:chat")] == [
            "otters are great",
            "they are",
        ]
        assert [f.value for f in memory.facts.active("user/facts")] == ["otter fan"]
        assert memory.db.version >= 1


def test_close_twice_is_harmless(db_path: Path) -> None:
    memory = SqliteMemory.open(db_path, SCHEMA)
    memory.close()
    memory.close()
