"""Before per-person gateway tokens, a gateway client id listed under a person in ``users:`` was
that person: their sessions, intake rows and reminders were keyed by the bare client id. Now the
bare id is the channel token's (the owner's) client, so those rows would go to whoever holds the
channel token and names that id: the person's conversation in ``history`` frames and prompts,
and their reminders as pushes. The migration moves them to the person's key,
``<person>@<client_id>``, where the person's own token finds them."""

from __future__ import annotations

from pathlib import Path

from flynn.memory.database import Database
from flynn.schedule.migrations import SCHEMA

T = "2026-01-01T00:00:00+00:00"
KEYED_FROM = next(n for n, m in enumerate(SCHEMA.migrations, 1) if "person_tokens" in m) + 1


def _before(db_path: Path, *, keyed: bool = False) -> None:
    """A database as the last release left it: alice (listed with gateway id ``laptop``) and
    the owner (``user``) each chatted from the gateway and set a reminder; with ``keyed``,
    alice's own token also made ``gateway:alice@laptop`` already."""
    with Database.open(db_path, SCHEMA.up_to(KEYED_FROM - 1)) as db:
        if keyed:
            db.execute(
                "INSERT INTO sessions (key, namespace, created_at, updated_at) "
                "VALUES ('gateway:alice@laptop', 'users/alice', ?, ?)",
                (T, T),
            )
            db.execute(
                "INSERT INTO intake (channel, message_id, session, namespace, chat_id, "
                "sender_id, state, reply, received_at) VALUES ('gateway', 'c1', "
                "'gateway:alice@laptop', 'users/alice', 'alice@laptop', 'alice@laptop', "
                "'delivered', 'newer', ?)",
                (T,),
            )
        for session, namespace in (("gateway:laptop", "users/alice"), ("gateway:web-1", "user")):
            db.execute(
                "INSERT INTO sessions (key, namespace, summary, created_at, updated_at) "
                "VALUES (?, ?, 'a summary', ?, ?)",
                (session, namespace, T, T),
            )
            db.execute(
                "INSERT INTO messages (session, namespace, role, content, tokens, created_at) "
                "VALUES (?, ?, 'user', 'a diary entry', 3, ?)",
                (session, namespace, T),
            )
            chat = session.removeprefix("gateway:")
            db.execute(
                "INSERT INTO intake (channel, message_id, session, namespace, chat_id, sender_id, "
                "state, reply, received_at) "
                "VALUES ('gateway', 'c1', ?, ?, ?, ?, 'answered', 'kept', ?)",
                (session, namespace, chat, chat, T),
            )
        # alice's notify: gateway reminder (to her listed id) and one set in her chat; the
        # owner's set in theirs; a Telegram one of alice's is no gateway client's.
        for namespace, channel, chat_id, recipient in (
            ("users/alice", "gateway", "", "laptop"),
            ("users/alice", "gateway", "laptop", None),
            ("user", "gateway", "web-1", None),
            ("users/alice", "telegram", "", "42"),
        ):
            job = db.fetchone(
                "INSERT INTO jobs (namespace, kind, text, timezone, channel, chat_id, recipient, "
                "next_at, created_at, updated_at) VALUES (?, 'reminder', 'buy a present', 'UTC', "
                "?, ?, ?, ?, ?, ?) RETURNING id",
                (namespace, channel, chat_id, recipient, T, T, T),
            )
            assert job is not None
            db.execute(
                "INSERT INTO pushes (namespace, kind, text, channel, chat_id, recipient, job_id, "
                "created_at) VALUES (?, 'reminder', 'buy a present', ?, ?, ?, ?, ?)",
                (namespace, channel, chat_id, recipient, job[0], T),
            )


def test_a_persons_gateway_rows_move_to_their_key(db_path: Path) -> None:
    _before(db_path)
    with Database.open(db_path, SCHEMA) as db:
        sessions = db.fetchall("SELECT key, namespace, summary FROM sessions ORDER BY key")
        messages = db.fetchall("SELECT session, namespace FROM messages ORDER BY id")
        intake = db.fetchall("SELECT session, chat_id, sender_id FROM intake ORDER BY id")
        jobs = db.fetchall("SELECT channel, chat_id, recipient FROM jobs ORDER BY id")
        pushes = db.fetchall("SELECT channel, chat_id, recipient FROM pushes ORDER BY id")
    assert [tuple(row) for row in sessions] == [
        ("gateway:alice@laptop", "users/alice", "a summary"),
        ("gateway:web-1", "user", "a summary"),
    ]
    assert [tuple(row) for row in messages] == [
        ("gateway:alice@laptop", "users/alice"),
        ("gateway:web-1", "user"),
    ]
    assert [tuple(row) for row in intake] == [
        ("gateway:alice@laptop", "alice@laptop", "alice@laptop"),
        ("gateway:web-1", "web-1", "web-1"),
    ]
    expected = [
        ("gateway", "", "alice@laptop"),
        ("gateway", "alice@laptop", None),
        ("gateway", "web-1", None),
        ("telegram", "", "42"),
    ]
    assert [tuple(row) for row in jobs] == expected
    assert [tuple(row) for row in pushes] == expected


def test_a_session_the_person_already_has_under_their_key_keeps_their_messages(
    db_path: Path,
) -> None:
    """Run with the release before this migration, alice's token made ``gateway:alice@laptop``
    already: both sessions' messages are hers there, and nothing of hers stays under the bare
    id."""
    _before(db_path, keyed=True)
    with Database.open(db_path, SCHEMA) as db:
        left = db.fetchall(
            "SELECT key FROM sessions WHERE key = 'gateway:laptop' "
            "UNION ALL SELECT session FROM messages WHERE session = 'gateway:laptop' "
            "UNION ALL SELECT session FROM intake WHERE session = 'gateway:laptop'"
        )
        moved = db.fetchone("SELECT count(*) FROM messages WHERE session = 'gateway:alice@laptop'")
    assert left == []
    assert moved is not None and moved[0] == 1
