from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
from contextlib import closing
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from flynn.errors import StorageUnusable, StoreError
from flynn.memory.database import (
    READER_CACHE_KIB,
    WRITER_CACHE_KIB,
    Database,
    decode_time,
    encode_time,
)
from flynn.memory.health import StorageHealth, StorageStatus
from flynn.memory.migrations import Schema, SchemaPart
from flynn.schedule.migrations import SCHEMA


def _tables(db: Database) -> set[str]:
    return {row[0] for row in db.fetchall("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_open_creates_directory_and_migrates(db_path: Path) -> None:
    with Database.open(db_path, SCHEMA) as db:
        assert db_path.exists()
        assert db.version == SCHEMA.latest
        assert {"documents", "facts", "facts_fts", "sessions", "messages", "costs"} <= _tables(db)
        journal = db.fetchone("PRAGMA journal_mode")
        foreign_keys = db.fetchone("PRAGMA foreign_keys")
        assert journal is not None and journal[0] == "wal"
        assert foreign_keys is not None and foreign_keys[0] == 1


def test_the_writer_and_each_reader_cap_their_page_cache_at_8_mib(db_path: Path) -> None:
    # What a daemon at rest holds for SQLite: each cache fills to its cap and stays full
    # (docs/embeddings.md, "Resident memory": the writer's 32 MiB were 25 MiB of it).
    assert WRITER_CACHE_KIB == READER_CACHE_KIB == 8192
    with Database.open(db_path, SCHEMA) as writer, Database.open_reader(writer) as reader:
        for db, kib in ((writer, WRITER_CACHE_KIB), (reader, READER_CACHE_KIB)):
            row = db.fetchone("PRAGMA cache_size")
            assert row is not None and row[0] == -kib  # negative: KiB, not pages


def test_migrations_are_idempotent_and_keep_data(db_path: Path) -> None:
    with Database.open(db_path, SCHEMA) as db:
        db.execute(
            "INSERT INTO costs (provider, model, task, input_tokens, output_tokens, "
            "created_at) VALUES ('p', 'm', 'chat', 1, 2, 'x')"
        )
    with Database.open(db_path, SCHEMA) as db:
        assert db.version == SCHEMA.latest
        row = db.fetchone("SELECT count(*) FROM costs")
        assert row is not None and row[0] == 1
        assert db.integrity_check() == []


def test_an_older_database_is_upgraded_in_place(db_path: Path) -> None:
    with Database.open(db_path, SCHEMA.up_to(1)) as db:
        assert db.version == 1
        assert "inbound" not in _tables(db)
        _insert(db, "kept")
    with Database.open(db_path, SCHEMA) as db:
        assert db.version == SCHEMA.latest
        assert "intake" in _tables(db)  # migration 2's inbound, rebuilt by migration 9
        assert _count(db) == 1


def test_newer_database_is_refused(db_path: Path) -> None:
    Database.open(db_path, SCHEMA).close()
    with closing(sqlite3.connect(db_path)) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA.latest + 1}")
    with pytest.raises(StoreError, match="upgrade flynn"):
        Database.open(db_path, SCHEMA)


def test_failed_migration_changes_nothing(db_path: Path) -> None:
    broken = Schema(
        (*SCHEMA.migrations, "CREATE TABLE extra (a); CREATE TABLE extra (a);"), SCHEMA.parts
    )
    with pytest.raises(StoreError, match=f"migration {broken.latest}"):
        Database.open(db_path, broken)
    with Database.open(db_path, SCHEMA) as db:
        assert db.version == SCHEMA.latest
        assert "extra" not in _tables(db)


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError):
        Database.open(path, SCHEMA)


def test_sqlite_errors_become_store_errors(db_path: Path) -> None:
    with Database.open(db_path, SCHEMA) as db:
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
    with Database.open(db_path, SCHEMA) as db:
        with pytest.raises(RuntimeError), db.transaction():
            _insert(db, "a")
            raise RuntimeError("boom")
        assert _count(db) == 0
        assert not db.in_transaction
        with db.transaction():
            _insert(db, "b")
        assert _count(db) == 1


def test_nested_transaction_rolls_back_only_the_inner_block(db_path: Path) -> None:
    with Database.open(db_path, SCHEMA) as db:
        with db.transaction():
            _insert(db, "outer")
            with pytest.raises(StoreError), db.transaction():
                _insert(db, "inner")
                _insert(db, "outer")  # duplicate key
            _insert(db, "after")
        names = [row[0] for row in db.fetchall("SELECT namespace FROM documents ORDER BY 1")]
        assert names == ["after", "outer"]


def test_nested_failure_that_escapes_rolls_back_everything(db_path: Path) -> None:
    with Database.open(db_path, SCHEMA) as db:
        with pytest.raises(RuntimeError), db.transaction():
            _insert(db, "outer")
            with db.transaction():
                _insert(db, "inner")
                raise RuntimeError("boom")
        assert _count(db) == 0


def test_close_is_idempotent(db_path: Path) -> None:
    db = Database.open(db_path, SCHEMA)
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
    with Database.open(db_path, SCHEMA) as db:
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
    with Database.open(db_path, SCHEMA) as db:
        db.watch_rewrites("costs")
        before = db.rewrites("costs")
        with closing(sqlite3.connect(db_path)) as other:
            other.execute("DELETE FROM costs")
            other.commit()
        assert db.rewrites("costs") != before


async def test_rewrites_read_data_version_once_a_step_of_the_loop(db_path: Path) -> None:
    # A turn's caches look at ``rewrites`` six times in one step of the loop: one query does,
    # and another connection's commit is seen from the next step on (this connection's own
    # writes at once). Without a loop (the CLI, a thread), every call asks, as above.
    with Database.open(db_path, SCHEMA) as db:
        db.watch_rewrites("costs")
        db.execute(
            "INSERT INTO costs (provider, model, task, input_tokens, output_tokens, created_at) "
            "VALUES ('p', 'm', 'chat', 1, 2, 'x')"
        )
        before = db.rewrites("costs")
        with closing(sqlite3.connect(db_path)) as other:
            other.execute("DELETE FROM costs")
            other.commit()
        assert db.rewrites("costs") == before  # the same step: not asked again
        await asyncio.sleep(0)
        after = db.rewrites("costs")
        assert after[1] != before[1]
        assert db.rewrites("costs") == after


def test_a_loop_stopped_in_the_step_that_read_data_version_leaves_no_version_behind(
    db_path: Path,
) -> None:
    # The step's version is forgotten by a callback of the loop that read it: a loop stopped
    # in that step and closed never runs it, and the connection kept that version for good,
    # blind to every later commit of another process (also when a thread without a loop, or
    # another loop, asked).
    with Database.open(db_path, SCHEMA) as db:
        db.watch_rewrites("costs")
        loop = asyncio.new_event_loop()

        def last_step() -> None:
            db.rewrites("costs")
            loop.stop()

        loop.call_soon(last_step)
        loop.run_forever()
        loop.close()
        before = db.rewrites("costs")
        with closing(sqlite3.connect(db_path)) as other:
            other.execute("DELETE FROM costs")
            other.commit()
        # On main: the version read in the loop's last step, for good.
        assert db.rewrites("costs") != before


def test_a_reader_reads_the_last_commit_while_the_writer_writes_and_never_writes(
    db_path: Path,
) -> None:
    insert = (
        "INSERT INTO costs (provider, model, task, input_tokens, output_tokens, created_at) "
        "VALUES ('p', 'm', 'chat', 1, 2, 'x')"
    )
    with Database.open(db_path, SCHEMA) as writer, Database.open_reader(writer) as reader:
        writer.execute(insert)
        with writer.transaction():
            writer.execute(insert)
            # WAL: the reader is not blocked by the open write, and sees the last commit only.
            row = reader.fetchone("SELECT count(*) FROM costs")
            assert row is not None and row[0] == 1
        batches = reader.batches("SELECT id FROM costs ORDER BY id", size=1)
        assert [[row[0] for row in rows] for rows in batches] == [[1], [2]]
        with pytest.raises(StoreError, match="readonly"):
            reader.execute(insert)


def test_a_reader_follows_what_its_writer_published(db_path: Path) -> None:
    with Database.open(db_path, SCHEMA) as writer, Database.open_reader(writer) as reader:
        writer.watch_rewrites("costs")
        reader.watch_rewrites("costs")
        writer.publish_rewrites()
        published = reader.rewrites("costs")
        assert published == writer.rewrites("costs")
        writer.execute(
            "INSERT INTO costs (provider, model, task, input_tokens, output_tokens, created_at) "
            "VALUES ('p', 'm', 'chat', 1, 2, 'x')"
        )
        writer.publish_rewrites()
        assert reader.rewrites("costs") == published  # an insert changes no row read before
        writer.execute("UPDATE costs SET input_tokens = 5")
        assert reader.rewrites("costs") == published  # not published yet
        writer.publish_rewrites()
        assert reader.rewrites("costs") != published


# -- storage that cannot be used ---------------------------------------------------------------


def _filled(path: Path) -> None:
    """A database with a few pages of rows, checkpointed into the main file."""
    with Database.open(path, SCHEMA) as db:
        db.executemany(
            "INSERT INTO costs (provider, model, task, input_tokens, output_tokens, created_at) "
            "VALUES (?, 'm', 'chat', 1, 2, 'x')",
            [("p" * 500,) for _ in range(200)],
        )
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _corrupt(path: Path) -> None:
    with closing(sqlite3.connect(path)) as connection:
        root = connection.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'costs'")
        page = int(root.fetchone()[0])
        size = int(connection.execute("PRAGMA page_size").fetchone()[0])
    with path.open("r+b") as handle:
        handle.seek((page - 1) * size + 8)
        handle.write(b"\xa5" * (size - 16))


def test_an_empty_database_file_is_refused_not_recreated(db_path: Path) -> None:
    db_path.parent.mkdir()
    db_path.write_bytes(b"")
    with pytest.raises(StorageUnusable, match="empty file"):
        Database.open(db_path, SCHEMA)
    assert db_path.stat().st_size == 0


def test_verify_refuses_a_corrupt_database_in_one_line(db_path: Path) -> None:
    _filled(db_path)
    _corrupt(db_path)
    with (
        Database.open(db_path, SCHEMA) as db,
        pytest.raises(StorageUnusable, match="corrupt") as raised,
    ):
        db.verify()
    assert "\n" not in str(raised.value)


def test_verify_passes_a_healthy_database(db_path: Path) -> None:
    _filled(db_path)
    with Database.open(db_path, SCHEMA) as db:
        db.verify()
        assert db.version == SCHEMA.latest


def _read_only(path: Path) -> Database:
    """A connection that cannot write, as a file opened read-only by SQLite gives (root, which
    runs these tests in containers, can write any file whatever its mode)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    return Database(connection, path, SCHEMA)


def test_verify_refuses_a_database_that_cannot_be_written(db_path: Path) -> None:
    _filled(db_path)
    with _read_only(db_path) as db, pytest.raises(StorageUnusable, match="readonly"):
        db.verify()


def test_storage_health_probes_at_most_once_per_interval(db_path: Path) -> None:
    _filled(db_path)
    now = [0.0]
    with Database.open(db_path, SCHEMA) as db:
        health = StorageHealth(db, max_age_seconds=10, clock=lambda: now[0])
        assert health.check() == StorageStatus(True, "writable")
        db.close()  # from now on every probe would fail
        now[0] = 9.9
        assert health.check().ok  # cached
        now[0] = 10.0
        status = health.check()
        assert not status.ok and "cannot be written" in status.detail


def test_storage_health_reports_a_database_that_cannot_be_written(db_path: Path) -> None:
    _filled(db_path)
    with _read_only(db_path) as db:
        status = StorageHealth(db).check()
    assert not status.ok
    assert "readonly" in status.detail
    assert status.as_json() == {"ok": False, "detail": status.detail}


def test_storage_health_keeps_its_status_while_another_writer_holds_the_lock(
    db_path: Path,
) -> None:
    _filled(db_path)
    now = [0.0]
    with Database.open(db_path, SCHEMA) as db, closing(sqlite3.connect(db_path)) as other:
        health = StorageHealth(db, max_age_seconds=1, busy_timeout_ms=10, clock=lambda: now[0])
        assert health.check().ok
        other.execute("BEGIN IMMEDIATE")
        now[0] = 5.0
        assert health.check().ok  # busy is work going on, not a broken file
        other.execute("ROLLBACK")
        db.execute(
            "INSERT INTO costs (provider, model, task, input_tokens, output_tokens, "
            "created_at) VALUES ('p', 'm', 'chat', 1, 2, 'x')"
        )  # busy_timeout restored


def test_the_probe_is_refused_inside_a_transaction(db_path: Path) -> None:
    with Database.open(db_path, SCHEMA) as db, db.transaction():
        with pytest.raises(StoreError, match="inside a transaction"):
            db.probe_write()
        assert StorageHealth(db).check().ok  # not probed; the previous status stands


def test_database_files_are_private_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "new" / "flynn.db"
    previous = os.umask(0o022)
    try:
        with Database.open(path, SCHEMA) as db:
            db.execute(
                "INSERT INTO costs (provider, model, task, input_tokens, output_tokens, "
                "created_at) VALUES ('p', 'm', 'chat', 1, 2, 'x')"
            )
            for name in ("flynn.db", "flynn.db-wal", "flynn.db-shm"):
                assert stat.S_IMODE((path.parent / name).stat().st_mode) == 0o600, name
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    finally:
        os.umask(previous)


def test_an_existing_loose_database_is_tightened(db_path: Path) -> None:
    _filled(db_path)
    db_path.chmod(0o644)
    with Database.open(db_path, SCHEMA):
        pass
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600


class _NothingToForget:
    def __init__(self, db: Database) -> None:
        self.db = db

    def forget_namespace(self, prefix: str) -> dict[str, int]:
        return {}


def test_a_parts_steps_run_after_memorys_at_their_version(db_path: Path) -> None:
    part = SchemaPart("extra", {2: "CREATE TABLE early (a);"}, forgetting=_NothingToForget)
    schema = Schema.of(*SCHEMA.parts, part)

    assert schema.latest == SCHEMA.latest
    assert schema.migrations[1].endswith("CREATE TABLE early (a);")
    with Database.open(db_path, schema.up_to(1)) as db:
        assert "early" not in _tables(db)
    with Database.open(db_path, schema) as db:
        assert {"early", "jobs", "intake"} <= _tables(db)
        assert db.version == SCHEMA.latest


@pytest.mark.parametrize("version", [0, SCHEMA.latest + 1])
def test_a_step_at_a_version_memorys_ledger_does_not_list_is_refused(version: int) -> None:
    part = SchemaPart("extra", {version: "CREATE TABLE t (a);"}, forgetting=_NothingToForget)

    with pytest.raises(ValueError, match=f"extra: schema version {version} is not in memory's"):
        Schema.of(part)
