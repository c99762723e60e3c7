from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from flynn.memory.stores import SqliteMemory

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def test_read_missing_is_none(memory: SqliteMemory) -> None:
    assert memory.documents.read("user/profile") is None


def test_replace_then_read_round_trips_times(memory: SqliteMemory) -> None:
    now = datetime(2026, 2, 25, 12, 30, 0, 654321, tzinfo=timezone(timedelta(hours=1)))
    expires = now + timedelta(days=14)
    written = memory.documents.replace("user/profile", "likes tea", now=now, expires_at=expires)
    read = memory.documents.read("user/profile")
    assert read == written
    assert read is not None
    assert (read.content, read.updated_at, read.expires_at) == ("likes tea", now, expires)
    assert read.updated_at.tzinfo == UTC


def test_replace_overwrites_content_and_expiry(memory: SqliteMemory) -> None:
    memory.documents.replace("user/profile", "one", now=T0, expires_at=T0)
    later = T0 + timedelta(hours=1)
    memory.documents.replace("user/profile", "two", now=later)
    read = memory.documents.read("user/profile")
    assert read is not None
    assert (read.content, read.updated_at, read.expires_at) == ("two", later, None)


def test_append_creates_then_adds_lines(memory: SqliteMemory) -> None:
    first = memory.documents.append("user/patterns", "walks at 7", now=T0)
    assert first.content == "walks at 7"
    memory.documents.append("user/patterns", "tea at 4", now=T0 + timedelta(minutes=1))
    memory.documents.replace("user/notes", "ends with newline\n", now=T0)
    memory.documents.append("user/notes", "next", now=T0)
    patterns = memory.documents.read("user/patterns")
    notes = memory.documents.read("user/notes")
    assert patterns is not None and patterns.content == "walks at 7\ntea at 4"
    assert patterns.updated_at == T0 + timedelta(minutes=1)
    assert notes is not None and notes.content == "ends with newline\nnext"


def test_append_keeps_expiry(memory: SqliteMemory) -> None:
    memory.documents.replace("user/x", "a", now=T0, expires_at=T0 + timedelta(days=1))
    appended = memory.documents.append("user/x", "b", now=T0)
    assert appended.expires_at == T0 + timedelta(days=1)


def test_delete(memory: SqliteMemory) -> None:
    memory.documents.replace("user/profile", "x", now=T0)
    assert memory.documents.delete("user/profile") is True
    assert memory.documents.delete("user/profile") is False
    assert memory.documents.read("user/profile") is None


def test_list_matches_the_namespace_and_its_children_only(memory: SqliteMemory) -> None:
    for namespace in (
        "user",
        "user/profile",
        "user/working",
        "user/deep/er",
        "username/profile",
        "users/alice",
        "user0",
        "User/profile",
        "user%/x",
        "use",
    ):
        memory.documents.replace(namespace, namespace, now=T0)
    listed = [document.namespace for document in memory.documents.list("user")]
    assert listed == ["user", "user/deep/er", "user/profile", "user/working"]
    assert [d.namespace for d in memory.documents.list("user/")] == listed
    assert [d.namespace for d in memory.documents.list("user%")] == ["user%/x"]
    assert memory.documents.list("nobody") == []


def test_empty_prefix_is_refused(memory: SqliteMemory) -> None:
    with pytest.raises(ValueError, match="empty"):
        memory.documents.list("")
