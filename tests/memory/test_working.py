from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from structlog.testing import capture_logs

from flynn.memory.stores import SqliteMemory
from flynn.memory.working import (
    WorkingMemory,
    read_working_memory,
    render_working_memory,
    write_working_memory,
)
from flynn.schedule.migrations import SCHEMA

NS = "user/working"
NOW = datetime(2026, 2, 25, 11, 30, 0, 250000, tzinfo=UTC)


def _write(memory: SqliteMemory, content: str, *, max_tokens: int = 1000) -> WorkingMemory:
    return write_working_memory(
        memory.documents, NS, content, ttl_days=14, max_tokens=max_tokens, now=NOW
    )


def _raw(memory: SqliteMemory) -> str:
    document = memory.documents.read(NS)
    assert document is not None
    return document.content


def test_writes_the_seed_file_format(memory: SqliteMemory) -> None:
    _write(memory, "some content")
    assert _raw(memory) == (
        "# Working Memory\n"
        "Updated: 2026-02-25T11:30:00Z\n"
        "Expires: 2026-03-11T11:30:00Z\n"
        "\n"
        "some content"
    )
    document = memory.documents.read(NS)
    assert document is not None
    assert document.expires_at == datetime(2026, 3, 11, 11, 30, tzinfo=UTC)


def test_truncates_content_to_token_budget(memory: SqliteMemory) -> None:
    _write(memory, "x" * 10000, max_tokens=100)
    content_part = "\n\n".join(_raw(memory).split("\n\n")[1:])
    assert len(content_part) <= 400 + 10


def test_absent_is_none(memory: SqliteMemory) -> None:
    with capture_logs() as logs:
        assert read_working_memory(memory.documents, NS, now=NOW) is None
    assert logs == [
        {
            "event": "working_memory.skipped",
            "namespace": NS,
            "reason": "absent",
            "log_level": "debug",
        }
    ]


def test_not_expired_returns_content(memory: SqliteMemory) -> None:
    written = _write(memory, "hello world")
    result = read_working_memory(memory.documents, NS, now=NOW + timedelta(days=13))
    assert result is not None
    assert result.content == "hello world"
    assert result == written
    assert result.updated_at == datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def test_expired_is_none(memory: SqliteMemory) -> None:
    expired = "\n".join(
        [
            "# Working Memory",
            "Updated: 2025-01-01T00:00:00Z",
            "Expires: 2025-01-02T00:00:00Z",
            "",
            "stale content",
        ]
    )
    memory.documents.replace(NS, expired, now=NOW)
    with capture_logs() as logs:
        assert read_working_memory(memory.documents, NS, now=NOW) is None
    assert [log["reason"] for log in logs] == ["expired"]


def test_expires_exactly_at_its_time(memory: SqliteMemory) -> None:
    written = _write(memory, "edge")
    assert read_working_memory(memory.documents, NS, now=written.expires_at) is None
    before = written.expires_at - timedelta(seconds=1)
    assert read_working_memory(memory.documents, NS, now=before) == written


def test_malformed_is_none(memory: SqliteMemory) -> None:
    memory.documents.replace(NS, "no headers here", now=NOW)
    with capture_logs() as logs:
        assert read_working_memory(memory.documents, NS, now=NOW) is None
    assert [log["reason"] for log in logs] == ["malformed"]


def test_bad_times_are_malformed(memory: SqliteMemory) -> None:
    for text in (
        "# Working Memory\nUpdated: yesterday\nExpires: 2099-01-02T00:00:00Z\n\nx",
        "# Working Memory\nUpdated: 2025-01-01T00:00:00Z\n\nx",
        "Working Memory\nUpdated: 2025-01-01T00:00:00Z\nExpires: 2099-01-02T00:00:00Z\n\nx",
    ):
        memory.documents.replace(NS, text, now=NOW)
        assert read_working_memory(memory.documents, NS, now=NOW) is None, text


def test_second_write_replaces_the_first(memory: SqliteMemory) -> None:
    _write(memory, "first")
    _write(memory, "second")
    result = read_working_memory(memory.documents, NS, now=NOW)
    assert result is not None and result.content == "second"
    assert "first" not in _raw(memory)


def test_survives_reopening_the_database(db_path: Path) -> None:
    with SqliteMemory.open(db_path, SCHEMA) as memory:
        _write(memory, "remember me")
    with SqliteMemory.open(db_path, SCHEMA) as memory:
        result = read_working_memory(memory.documents, NS, now=NOW + timedelta(days=1))
    assert result is not None and result.content == "remember me"


def test_render_is_the_stored_format(memory: SqliteMemory) -> None:
    written = _write(memory, "  multi\nline  \n")
    assert render_working_memory(written) == _raw(memory)
    assert written.content == "multi\nline"
