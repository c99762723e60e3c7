"""Durable intake (the ``intake`` table; ``SqlInboundLog`` on any SQL database, ``SqliteInboundLog``
on SQLite): every accepted message is stored, with its text, before
the channel confirms it, and follows ``accepted -> answered -> delivered`` (or ``failed``: its
turn ended in an error). A message is known by its ``IntakeKey`` (channel, chat, the channel's
message id: three columns). ``delivered`` is what the channel said (``Delivery``): a gateway
client's acknowledgement, or the chat service taking it. A restart replays what was accepted
but not answered and sends again what was answered but not delivered; a channel's redelivery,
or a client's resend of the same id, is joined while pending, answered from the stored reply
while that is undelivered, and given nothing once it was delivered.

A message's pictures and files are kept in the person's files folder before it is accepted;
its row names them (``attachments``: names and how each was taken, never bytes), so a replayed
turn reads them back from there. Off-the-record messages are recorded without their text or
files (nothing of them is written), so they are deduplicated but cannot be replayed. The text
of a message (and the names of its files) is cleared once it is answered; replies are kept
until pruned, so a resend can get them again; a reply not delivered by then (nobody
acknowledged it) is pruned too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from flynn.credentials import redact
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.sql import NamedRow, TransactionalSql, storable
from flynn.messages import Attachment, InboundMessage, IntakeKey

IntakeState = Literal["new", "pending", "answered", "delivered"]


@dataclass(frozen=True, slots=True)
class Intake:
    """What ``accept`` found: ``new`` (run a turn for it), ``pending`` (the same id is queued
    or running: its reply will come), ``answered`` (its reply is stored and not yet delivered:
    send ``reply`` again), or ``delivered`` (the person has the reply: send nothing)."""

    state: IntakeState
    reply: str | None = None
    error_code: str | None = None


@dataclass(frozen=True, slots=True)
class Unfinished:
    """An accepted message a restart must finish: run its turn (``reply`` None, ``message.text``
    kept), send its stored reply again, or (off the record, no text) tell the person."""

    message: InboundMessage
    session: str
    reply: str | None
    error_code: str | None
    has_text: bool


_COLUMNS = (
    "id, channel, message_id, session, chat_id, thread, sender_id, sender_name, is_group, "
    "forwarded, text, attachments, state, reply, reply_error, received_at"
)
_ACCEPT = """
INSERT INTO intake (channel, message_id, session, namespace, chat_id, thread, sender_id,
                    sender_name, is_group, forwarded, text, attachments, received_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (channel, chat_id, message_id) DO NOTHING
"""
_KEY = "channel = ? AND chat_id = ? AND message_id = ?"
_EXISTING = f"SELECT state, reply, reply_error FROM intake WHERE {_KEY}"
# A compare-and-set: of two processes retrying one failed message at once, one changes the row
# and the other finds it accepted (pending).
_RETRY = f"""
UPDATE intake SET state = 'accepted', text = ?, attachments = ?, reply = NULL, reply_error = NULL,
                  answered_at = NULL, completed_at = NULL, received_at = ?, session = ?
WHERE {_KEY} AND state = 'failed'
"""
_ANSWERED = f"""
UPDATE intake SET state = ?, text = NULL, attachments = NULL, reply = ?, reply_error = ?,
                  answered_at = ?
WHERE {_KEY}
"""
# Only a stored reply is delivered: an acknowledged notice about a message not answered yet
# (an error frame under its id, "restarting") would otherwise close the row, and its answer,
# stored later, would stay ``answered`` for good, sent again at every hello.
_DELIVERED = f"""
UPDATE intake SET state = CASE state WHEN 'answered' THEN 'delivered' ELSE state END,
                  completed_at = ?
WHERE {_KEY} AND completed_at IS NULL AND state IN ('answered', 'failed')
"""
_GIVE_UP = f"""
UPDATE intake SET state = 'failed', text = NULL, attachments = NULL, completed_at = ?
WHERE {_KEY}
"""
_UNFINISHED = f"""
SELECT {_COLUMNS} FROM intake
WHERE state IN ('accepted', 'answered') OR (state = 'failed' AND completed_at IS NULL
                                            AND reply IS NOT NULL)
ORDER BY id
"""
# Replies stored and not yet delivered to one chat (a gateway client that was away), oldest first.
_UNDELIVERED = f"""
SELECT {_COLUMNS} FROM intake
WHERE channel = ? AND chat_id = ?
  AND (state = 'answered' OR (state = 'failed' AND completed_at IS NULL AND reply IS NOT NULL))
ORDER BY id
"""
# Finished messages, and replies nobody took in time (a protocol 2 client that never
# acknowledges, a client id never seen again): kept, they would be sent again at every restart
# and every hello, for ever. A message whose turn has not run yet is kept.
_PRUNE = "DELETE FROM intake WHERE received_at < ? AND state != 'accepted'"
_FORGET = f"DELETE FROM intake WHERE {namespace_scope('namespace')}"


@dataclass(frozen=True, slots=True)
class InboundDialect:
    """One backend's statements for ``SqlInboundLog`` (``inbound_dialect``) and its times."""

    accept: str
    existing: str
    retry: str
    answered: str
    delivered: str
    give_up: str
    unfinished: str
    undelivered: str
    prune: str
    forget: str
    time: Callable[[datetime], object]
    """Raises ``ValueError`` for a naive time."""
    stored_time: Callable[[Any], datetime]
    """A stored time, back as an aware ``UTC`` datetime."""


def inbound_dialect(
    parameters: Callable[[str], str],
    time: Callable[[datetime], object],
    stored_time: Callable[[Any], datetime],
) -> InboundDialect:
    """The statements above, written once with ``?``, with ``parameters`` turning them into
    the backend's."""
    return InboundDialect(
        accept=parameters(_ACCEPT),
        existing=parameters(_EXISTING),
        retry=parameters(_RETRY),
        answered=parameters(_ANSWERED),
        delivered=parameters(_DELIVERED),
        give_up=parameters(_GIVE_UP),
        unfinished=parameters(_UNFINISHED),
        undelivered=parameters(_UNDELIVERED),
        prune=parameters(_PRUNE),
        forget=parameters(_FORGET),
        time=time,
        stored_time=stored_time,
    )


SQLITE_INBOUND = inbound_dialect(lambda statement: statement, encode_time, decode_time)


class SqlInboundLog:
    """``InboundLog`` on an ``intake`` table; one statement (or one transaction) per call.

    Safe with several processes on one database: of two accepting one message at once, the
    one whose row lands runs its turn and the other is told it is pending (the unique key and
    ``ON CONFLICT DO NOTHING``); a failed message is accepted again by one of them only (a
    compare-and-set on its state)."""

    def __init__(self, db: TransactionalSql, dialect: InboundDialect) -> None:
        self._db = db
        self._sql = dialect

    def accept(
        self,
        message: InboundMessage,
        session: str,
        namespace: str | None,
        *,
        keep_text: bool,
        now: datetime,
    ) -> Intake:
        """Records ``message`` as accepted (with its text unless ``keep_text`` is false), or
        says what became of the same id before. A failed one is accepted again (a retry)."""
        text = storable(redact(message.text)[0]) if keep_text else None
        files = _encode_files(message.attachments) if keep_text else None
        sql = self._sql
        with self._db.transaction():
            inserted = self._db.execute(
                sql.accept,
                (
                    message.channel,
                    message.message_id,
                    session,
                    namespace,
                    message.chat_id,
                    message.thread,
                    message.sender_id,
                    None if message.sender_name is None else storable(message.sender_name),
                    int(message.is_group),
                    int(message.forwarded),
                    text,
                    files,
                    sql.time(now),
                ),
            )
            if inserted:
                return Intake("new")
            key = _key(message.intake_key)
            row = self._db.fetchone(sql.existing, key)
            if row is None:  # pruned between the two statements: cannot happen in one write
                return Intake("new")
            state = str(row["state"])
            if state == "failed":
                retried = self._db.execute(sql.retry, (text, files, sql.time(now), session, *key))
                # Another process retried it first: it is that one's turn to run.
                return Intake("new") if retried else Intake("pending")
            if state == "delivered":
                return Intake("delivered", row["reply"], row["reply_error"])
            if state == "answered":
                return Intake("answered", row["reply"], row["reply_error"])
            return Intake("pending")

    def answered(
        self,
        key: IntakeKey,
        *,
        reply: str,
        error_code: str | None,
        now: datetime,
    ) -> None:
        """Records the reply (before it is sent); the message's text is dropped. A reply that
        is an error marks the message ``failed``, so a resend of the same id runs again."""
        state = "failed" if error_code else "answered"
        params = (state, storable(reply), error_code, self._sql.time(now), *_key(key))
        self._db.execute(self._sql.answered, params)

    def delivered(self, key: IntakeKey, *, now: datetime) -> bool:
        """Records that the person has the reply (the channel said ``delivered``, or a gateway
        client acknowledged it); False when it already was, or the id is unknown."""
        return self._db.execute(self._sql.delivered, (self._sql.time(now), *_key(key))) > 0

    def give_up(self, key: IntakeKey, *, now: datetime) -> None:
        """Closes a message that cannot be answered (off the record, its text was never kept)."""
        self._db.execute(self._sql.give_up, (self._sql.time(now), *_key(key)))

    def unfinished(self) -> list[Unfinished]:
        """What a restart must finish, in the order it was accepted."""
        return [self._unfinished(row) for row in self._db.fetchall(self._sql.unfinished)]

    def undelivered(self, channel: str, chat_id: str) -> list[Unfinished]:
        """The replies stored for one chat and not delivered yet, oldest first (what a gateway
        client that was away gets after its hello)."""
        rows = self._db.fetchall(self._sql.undelivered, (channel, chat_id))
        return [self._unfinished(row) for row in rows]

    def forget(self, prefix: str) -> int:
        """Deletes every record of messages under namespace ``prefix``; returns how many."""
        return self._db.execute(self._sql.forget, scope_params(prefix))

    def prune(self, *, before: datetime) -> int:
        """Forgets messages received before ``before`` that were answered (delivered or not:
        the conversation keeps the reply); returns how many."""
        return self._db.execute(self._sql.prune, (self._sql.time(before),))

    def _unfinished(self, row: NamedRow) -> Unfinished:
        text = row["text"]
        message = InboundMessage(
            channel=row["channel"],
            chat_id=row["chat_id"],
            sender_id=row["sender_id"],
            text=text or "",
            message_id=row["message_id"],
            received_at=self._sql.stored_time(row["received_at"]),
            thread=row["thread"],
            sender_name=row["sender_name"],
            is_group=bool(row["is_group"]),
            forwarded=bool(row["forwarded"]),
            attachments=_decode_files(row["attachments"]),
        )
        replied = row["state"] != "accepted"
        return Unfinished(
            message,
            row["session"],
            row["reply"] if replied else None,
            row["reply_error"] if replied else None,
            text is not None,
        )


class SqliteInboundLog(SqlInboundLog):
    """``InboundLog`` on SQLite's ``intake`` table."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, SQLITE_INBOUND)


def _key(key: IntakeKey) -> tuple[str, str, str]:
    return key.channel, key.chat_id, key.message_id


def _encode_files(attachments: tuple[Attachment, ...]) -> str | None:
    """What the row keeps of a message's attachments: their names and how they were taken
    (kept in the person's files, or refused and why), never their bytes."""
    if not attachments:
        return None
    return json.dumps(
        [
            {
                "name": a.name,
                "media_type": a.media_type,
                "kind": a.kind,
                "size": a.byte_size,
                "kept": a.kept,
                "refused": a.refused,
            }
            for a in attachments
        ]
    )


def _decode_files(stored: str | None) -> tuple[Attachment, ...]:
    """The attachments of a replayed message, without their bytes: the turn reads a kept one
    from the person's files (``Attachment.kept``). One that was neither kept nor refused was
    cut off by a crash while being kept: it is refused, with why."""
    if not stored:
        return ()
    restored = []
    for item in json.loads(stored):
        name = str(item["name"])
        refused = item.get("refused")
        if not item.get("kept") and refused is None:
            refused = f"I lost {name} in a restart before I had kept it; please send it again."
        restored.append(
            Attachment(
                name=name,
                media_type=str(item["media_type"]),
                data=b"",
                kind="photo" if item.get("kind") == "photo" else "document",
                size=int(item.get("size", -1)),
                kept=bool(item.get("kept")),
                refused=None if refused is None else str(refused),
            )
        )
    return tuple(restored)
