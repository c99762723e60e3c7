from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flynn.errors import StoreError
from flynn.memory.checkpointer import WalCheckpointer
from flynn.memory.stores import SqliteMemory

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def test_checkpoint_copies_the_log_while_the_daemon_connection_is_open(
    memory: SqliteMemory, db_path: Path
) -> None:
    wal = db_path.with_name(db_path.name + "-wal")
    for i in range(20):
        memory.history.append("s", "user", "user", f"message {i}", tokens=1, now=T0)
    assert wal.stat().st_size > 0
    assert WalCheckpointer(db_path).checkpoint() is True
    # The next write starts the log over instead of growing it.
    size = wal.stat().st_size
    memory.history.append("s", "user", "user", "one more", tokens=1, now=T0)
    assert wal.stat().st_size <= size
    assert len(memory.history.recent("s")) == 21


def test_checkpoint_of_a_broken_path_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError):
        WalCheckpointer(tmp_path / "missing" / "flynn.db").checkpoint()


async def test_run_stops_when_cancelled(memory: SqliteMemory, db_path: Path) -> None:
    task = asyncio.create_task(WalCheckpointer(db_path, every_seconds=3600).run())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_a_checkpoint_never_makes_a_database_where_none_is(
    memory: SqliteMemory, db_path: Path
) -> None:
    # Moved away (or deleted) while the daemon runs: an empty file in its place would make
    # the next start refuse it as "an empty file, whatever it held is gone".
    db_path.rename(db_path.with_name("moved.db"))
    with pytest.raises(StoreError, match="cannot checkpoint"):
        WalCheckpointer(db_path).checkpoint()
    assert not db_path.exists()
