"""Which inbound message ids were already handled (SQLite), so a redelivered message is answered
once, even across a restart."""

from __future__ import annotations

from datetime import datetime

from flynn.memory.database import Database, encode_time

_CLAIM = """
INSERT INTO inbound (channel, message_id, session, received_at) VALUES (?, ?, ?, ?)
ON CONFLICT (channel, message_id) DO NOTHING
"""
_COMPLETE = "UPDATE inbound SET completed_at = ? WHERE channel = ? AND message_id = ?"
_PRUNE = "DELETE FROM inbound WHERE received_at < ?"


class SqliteInboundLog:
    """``InboundLog`` on the ``inbound`` table; one statement per call, each atomic."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def claim(self, channel: str, message_id: str, session: str, *, now: datetime) -> bool:
        """Records the message as being handled; ``False`` if it was seen before."""
        return self._db.execute(_CLAIM, (channel, message_id, session, encode_time(now))) == 1

    def complete(self, channel: str, message_id: str, *, now: datetime) -> None:
        """Records that the reply was sent (nothing happens for an unknown id)."""
        self._db.execute(_COMPLETE, (encode_time(now), channel, message_id))

    def prune(self, *, before: datetime) -> int:
        """Forgets ids received before ``before``; returns how many."""
        return self._db.execute(_PRUNE, (encode_time(before),))
