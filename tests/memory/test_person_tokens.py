"""People's gateway tokens: a new token verifies as its person, several per person, revoking
takes all of one person's and no one else's, and the token itself is nowhere on disk."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from memory.conftest import Stores

from flynn.memory.database import Database
from flynn.memory.person_tokens import SqlitePersonTokens, token_digest
from flynn.schedule.migrations import SCHEMA

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def test_a_token_is_its_person_until_revoked(stores: Stores) -> None:
    tokens = stores.tokens
    laptop = tokens.issue("alice", now=NOW)
    phone = tokens.issue("alice", now=NOW)
    bob = tokens.issue("bob", now=NOW)
    assert len({laptop, phone, bob}) == 3 and len(laptop) >= 43
    found = tokens.verify(phone)
    assert found is not None and (found.person, found.created_at) == ("alice", NOW)
    assert tokens.verify(laptop[:-1]) is None
    assert tokens.verify("") is None
    assert tokens.revoke("alice") == 2
    assert tokens.verify(laptop) is None and tokens.verify(phone) is None
    still = tokens.verify(bob)
    assert still is not None and still.person == "bob"
    assert [token.person for token in tokens.tokens()] == ["bob"]


def test_only_a_digest_is_stored(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Database.open(data / "flynn.db", SCHEMA) as db:
        token = SqlitePersonTokens(db).issue("alice", now=NOW)
        on_disk = b"".join(path.read_bytes() for path in data.iterdir() if path.is_file())
    assert token.encode() not in on_disk
    assert token_digest(token).encode() in on_disk  # what is kept instead


def test_only_a_digest_is_in_the_database(stores: Stores) -> None:
    token = stores.tokens.issue("alice", now=NOW)
    rows = stores.sql.fetchall("SELECT * FROM person_tokens")
    assert len(rows) == 1
    stored = [str(rows[0][column]) for column in ("id", "person", "digest", "created_at")]
    assert not any(token in value for value in stored)
    assert rows[0]["digest"] == token_digest(token)  # what is kept instead
