"""What PostgreSQL refuses reaches a history's caller as ``StoreError``, and a failed write
leaves nothing behind."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flynn.errors import StoreError
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.history import PostgresHistory

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def test_a_refused_append_stores_nothing(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url) as db:
        history = PostgresHistory(db)
        with pytest.raises(StoreError, match="out of range"):
            history.append("s", "users/ana", "user", "the ferry", tokens=2**40, now=T0)
        for table in ("sessions", "messages", "message_terms", "message_roots"):
            row = db.fetchone(f"SELECT count(*) AS n FROM {table}")
            assert row is not None and row["n"] == 0, table
        assert history.postings("ferry") is None
        with pytest.raises(ValueError, match="naive"):
            history.append("s", "users/ana", "user", "x", tokens=1, now=datetime(2026, 3, 1))
