"""The ``Documents`` contract, on SQLite and on PostgreSQL (the ``documents`` fixture)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from flynn.memory.store import Documents
from flynn.memory.working import read_working_memory, write_working_memory

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def test_read_missing_is_none(documents: Documents) -> None:
    assert documents.read("user/profile") is None


def test_replace_then_read_round_trips_times(documents: Documents) -> None:
    now = datetime(2026, 2, 25, 12, 30, 0, 654321, tzinfo=timezone(timedelta(hours=1)))
    expires = now + timedelta(days=14)
    written = documents.replace("user/profile", "likes tea", now=now, expires_at=expires)
    read = documents.read("user/profile")
    assert read == written
    assert read is not None
    assert (read.content, read.updated_at, read.expires_at) == ("likes tea", now, expires)
    assert read.updated_at.tzinfo == UTC
    assert read.expires_at is not None and read.expires_at.tzinfo == UTC


def test_naive_times_are_refused(documents: Documents) -> None:
    with pytest.raises(ValueError, match="naive"):
        documents.replace("user/profile", "x", now=datetime(2026, 2, 25, 11, 30))
    assert documents.read("user/profile") is None


def test_replace_overwrites_content_and_expiry(documents: Documents) -> None:
    documents.replace("user/profile", "one", now=T0, expires_at=T0)
    later = T0 + timedelta(hours=1)
    documents.replace("user/profile", "two", now=later)
    read = documents.read("user/profile")
    assert read is not None
    assert (read.content, read.updated_at, read.expires_at) == ("two", later, None)


def test_append_creates_then_adds_lines(documents: Documents) -> None:
    first = documents.append("user/patterns", "walks at 7", now=T0)
    assert first.content == "walks at 7"
    documents.append("user/patterns", "tea at 4", now=T0 + timedelta(minutes=1))
    documents.replace("user/notes", "ends with newline\n", now=T0)
    documents.append("user/notes", "next", now=T0)
    documents.replace("user/empty", "", now=T0)
    documents.append("user/empty", "first", now=T0)
    patterns = documents.read("user/patterns")
    notes = documents.read("user/notes")
    empty = documents.read("user/empty")
    assert patterns is not None and patterns.content == "walks at 7\ntea at 4"
    assert patterns.updated_at == T0 + timedelta(minutes=1)
    assert notes is not None and notes.content == "ends with newline\nnext"
    assert empty is not None and empty.content == "first"


def test_append_keeps_expiry(documents: Documents) -> None:
    documents.replace("user/x", "a", now=T0, expires_at=T0 + timedelta(days=1))
    appended = documents.append("user/x", "b", now=T0)
    assert appended.expires_at == T0 + timedelta(days=1)


def test_a_credential_is_never_kept(documents: Documents) -> None:
    key = "sk-ant-api03-" + "A1b2C3d4" * 8
    replaced = documents.replace("user/working", f"the key is {key}", now=T0)
    appended = documents.append("user/notes", f"also {key}", now=T0)
    for document in (replaced, appended, *documents.list("user")):
        assert key not in document.content


def test_delete(documents: Documents) -> None:
    documents.replace("user/profile", "x", now=T0)
    assert documents.delete("user/profile") is True
    assert documents.delete("user/profile") is False
    assert documents.read("user/profile") is None


def test_list_matches_the_namespace_and_its_children_only(documents: Documents) -> None:
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
        "user/Zed",
        "user/émile",
    ):
        documents.replace(namespace, namespace, now=T0)
    listed = [document.namespace for document in documents.list("user")]
    # Bytewise, as SQLite orders text: capitals before small letters, accents after both.
    assert listed == [
        "user",
        "user/Zed",
        "user/deep/er",
        "user/profile",
        "user/working",
        "user/émile",
    ]
    assert [d.namespace for d in documents.list("user/")] == listed
    assert [d.namespace for d in documents.list("user%")] == ["user%/x"]
    assert documents.list("nobody") == []


def test_empty_prefix_is_refused(documents: Documents) -> None:
    with pytest.raises(ValueError, match="empty"):
        documents.list("")


def test_working_memory_round_trips_and_expires(documents: Documents) -> None:
    written = write_working_memory(
        documents, "user/working", "planning a trip", ttl_days=2, max_tokens=50, now=T0
    )
    assert read_working_memory(documents, "user/working", now=T0) == written
    later = T0 + timedelta(days=2)
    assert read_working_memory(documents, "user/working", now=later) is None
