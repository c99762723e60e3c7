from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from flynn.errors import StoreError
from flynn.memory import database
from flynn.memory.database import LATEST_VERSION, Database, decode_time, encode_time


def _tables(db: Database) -> set[str]:
    return {row[0] for row in db.fetchall("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_open_creates_directory_and_migrates(db_path: Path) -> None:
    with Database.open(db_path) as db:
        assert db_path.exists()
        assert db.version == LATEST_VERSION
        assert {"documents", "facts", "facts_fts", "sessions", "messages", "costs"} <= _tables(db)
        journal = db.fetchone("PRAGMA journal_mode")
        foreign_keys = db.fetchone("PRAGMA foreign_keys")
        assert journal is not None and journal[0] == "wal"
        assert foreign_keys is not None and foreign_keys[0] == 1


def test_migrations_are_idempotent_and_keep_data(db_path: Path) -> None:
    with Database.open(db_path) as db:
        db.execute(
            "INSERT INTO costs (provider, model, task, input_tokens, output_tokens, "
            "created_at) VALUES ('p', 'm', 'chat', 1, 2, 'x')"
        )
    with Database.open(db_path) as db:
        assert db.version == LATEST_VERSION
        row = db.fetchone("SELECT count(*) FROM costs")
        assert row is not None and row[0] == 1
        assert db.integrity_check() == []


def test_an_older_database_is_upgraded_in_place(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "MIGRATIONS", database.MIGRATIONS[:1])
    monkeypatch.setattr(database, "LATEST_VERSION", 1)
    with Database.open(db_path) as db:
        assert db.version == 1
        assert "inbound" not in _tables(db)
        _insert(db, "kept")
    monkeypatch.undo()
    with Database.open(db_path) as db:
        assert db.version == LATEST_VERSION
        assert "intake" in _tables(db)  # migration 2's inbound, rebuilt by migration 9
        assert _count(db) == 1


def test_newer_database_is_refused(db_path: Path) -> None:
    Database.open(db_path).close()
    with closing(sqlite3.connect(db_path)) as raw:
        raw.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    with pytest.raises(StoreError, match="upgrade flynn"):
        Database.open(db_path)


def test_failed_migration_changes_nothing(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = (*database.MIGRATIONS, "CREATE TABLE extra (a); CREATE TABLE extra (a);")
    monkeypatch.setattr(database, "MIGRATIONS", broken)
    monkeypatch.setattr(database, "LATEST_VERSION", len(broken))
    with pytest.raises(StoreError, match=f"migration {len(broken)}"):
        Database.open(db_path)
    monkeypatch.undo()
    with Database.open(db_path) as db:
        assert db.version == LATEST_VERSION
        assert "extra" not in _tables(db)


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError):
        Database.open(path)


def test_sqlite_errors_become_store_errors(db_path: Path) -> None:
    with Database.open(db_path) as db:
        with pytest.raises(StoreError):
            db.execute("INSERT INTO nowhere VALUES (1)")
        with pytest.raises(StoreError):
            db.fetchall("SELECT nonsense FROM costs")


def _count(db: Database) -> int:
    row = db.fetchone("SELECT count(*) FROM documents")
    assert row is not None
    return int(row[0])


def _insert(db: Database, namespace: str) -> None:
    db.execute(
        "INSERT INTO documents (namespace, content, updated_at) VALUES (?, '', 'x')", (namespace,)
    )


def test_transaction_rolls_back_on_error(db_path: Path) -> None:
    with Database.open(db_path) as db:
        with pytest.raises(RuntimeError), db.transaction():
            _insert(db, "a")
            raise RuntimeError("boom")
        assert _count(db) == 0
        assert not db.in_transaction
        with db.transaction():
            _insert(db, "b")
        assert _count(db) == 1


def test_nested_transaction_rolls_back_only_the_inner_block(db_path: Path) -> None:
    with Database.open(db_path) as db:
        with db.transaction():
            _insert(db, "outer")
            with pytest.raises(StoreError), db.transaction():
                _insert(db, "inner")
                _insert(db, "outer")  # duplicate key
            _insert(db, "after")
        names = [row[0] for row in db.fetchall("SELECT namespace FROM documents ORDER BY 1")]
        assert names == ["after", "outer"]


def test_nested_failure_that_escapes_rolls_back_everything(db_path: Path) -> None:
    with Database.open(db_path) as db:
        with pytest.raises(RuntimeError), db.transaction():
            _insert(db, "outer")
            with db.transaction():
                _insert(db, "inner")
                raise RuntimeError("boom")
        assert _count(db) == 0


def test_close_is_idempotent(db_path: Path) -> None:
    db = Database.open(db_path)
    db.close()
    db.close()


def test_time_round_trips_exactly_as_utc() -> None:
    moment = datetime(2026, 2, 25, 12, 30, 1, 123456, tzinfo=timezone(timedelta(hours=1)))
    decoded = decode_time(encode_time(moment))
    assert decoded == moment
    assert decoded.tzinfo == UTC
    assert decoded.hour == 11 and decoded.microsecond == 123456


def test_text_order_is_time_order() -> None:
    early = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
    late = datetime(2026, 1, 1, 10, 0, tzinfo=timezone(timedelta(hours=-5)))
    assert encode_time(early) < encode_time(late)


def test_naive_time_is_rejected() -> None:
    with pytest.raises(ValueError, match="naive"):
        encode_time(datetime(2026, 1, 1))


def test_rewrites_count_updates_and_deletes_by_any_sql_but_not_inserts(db_path: Path) -> None:
    with Database.open(db_path) as db:
        db.watch_rewrites("costs")
        db.watch_rewrites("costs")  # idempotent
        insert = (
            "INSERT INTO costs (provider, model, task, input_tokens, output_tokens, created_at) "
            "VALUES ('p', 'm', 'chat', 1, 2, 'x')"
        )
        start = db.rewrites("costs")
        db.execute(insert)
        db.execute(insert)
        assert db.rewrites("costs") == start
        db.execute("UPDATE costs SET input_tokens = 5")
        updated = db.rewrites("costs")
        assert updated != start
        db.execute("DELETE FROM costs WHERE id = 1")
        deleted = db.rewrites("costs")
        assert deleted != updated
        with pytest.raises(RuntimeError), db.transaction():
            db.execute(insert)
            raise RuntimeError("rolled back: ids read inside may be handed out again")
        assert db.rewrites("costs") != deleted


def test_rewrites_see_other_connections_commit(db_path: Path) -> None:
    with Database.open(db_path) as db:
        db.watch_rewrites("costs")
        before = db.rewrites("costs")
        with closing(sqlite3.connect(db_path)) as other:
            other.execute("DELETE FROM costs")
            other.commit()
        assert db.rewrites("costs") != before
