from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from flynn.memory.sqlite import SqliteMemory

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def test_claim_once_per_channel_and_id(memory: SqliteMemory) -> None:
    inbound = memory.inbound
    assert inbound.claim("telegram", "1", "telegram:42", now=T0) is True
    assert inbound.claim("telegram", "1", "telegram:42", now=T0) is False
    assert inbound.claim("discord", "1", "discord:7", now=T0) is True
    inbound.complete("telegram", "1", now=T0 + timedelta(seconds=2))
    inbound.complete("telegram", "unknown", now=T0)
    assert inbound.claim("telegram", "1", "telegram:42", now=T0) is False


def test_claims_survive_a_restart(db_path: Path) -> None:
    with SqliteMemory.open(db_path) as memory:
        memory.inbound.claim("gateway", "m1", "gateway:laptop", now=T0)
    with SqliteMemory.open(db_path) as memory:
        assert memory.inbound.claim("gateway", "m1", "gateway:laptop", now=T0) is False


def test_prune_forgets_old_ids(memory: SqliteMemory) -> None:
    memory.inbound.claim("telegram", "old", "s", now=T0)
    memory.inbound.claim("telegram", "new", "s", now=T0 + timedelta(days=2))
    assert memory.inbound.prune(before=T0 + timedelta(days=1)) == 1
    assert memory.inbound.claim("telegram", "old", "s", now=T0) is True
    assert memory.inbound.claim("telegram", "new", "s", now=T0) is False
