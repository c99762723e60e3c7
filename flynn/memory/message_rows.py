"""Stored messages as SQLite gives them back: the columns every history query starts with, their
decoding, and the decoded rows kept by id between reads (``CachedMessages``)."""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterable

from flynn.memory.database import Database, decode_time
from flynn.memory.store import StoredMessage

COLUMNS = "id, session, namespace, role, content, tokens, created_at, summarized, offline"
"""What every query read by ``decode_message`` selects first, in this order."""
M_COLUMNS = ", ".join(f"m.{column.strip()}" for column in COLUMNS.split(","))
"""``COLUMNS`` of the ``messages`` table aliased ``m``."""

ROW_CACHE_SIZE = 8192
"""Messages kept decoded after a read, by id (a few megabytes): recall reads many of the same
turns again for related messages, and a kept one costs a dict lookup instead of a seek and a
decode."""

_BY_ID = f"SELECT {COLUMNS} FROM messages WHERE id IN (SELECT value FROM json_each(?))"


def decode_message(row: sqlite3.Row) -> StoredMessage:
    # By position (every query here starts with ``COLUMNS``): recall decodes hundreds of rows
    # per turn, and that is measurably cheaper than by name.
    return StoredMessage(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        decode_time(row[6]),
        bool(row[7]),
        bool(row[8]),
    )


class CachedMessages:
    """Messages by id as last read, in any namespace; all dropped whenever a stored message may
    have changed (``Database.rewrites``: this connection updated or deleted one, or rolled back,
    or another connection committed). A new message changes none that was read before."""

    def __init__(self, db: Database, size: int = ROW_CACHE_SIZE) -> None:
        db.watch_rewrites("messages")
        self._db = db
        self._size = size
        self._rows: dict[int, StoredMessage] = {}
        self._stamp = db.rewrites("messages")

    def read(self, ids: Iterable[int]) -> list[StoredMessage]:
        """The messages with these ids that exist, each once, in no particular order."""
        stamp = self._db.rewrites("messages")
        if stamp != self._stamp:
            self._rows.clear()
            self._stamp = stamp
        rows = self._rows
        found: list[StoredMessage] = []
        missing: list[int] = []
        for key in dict.fromkeys(ids):
            message = rows.get(key)
            if message is None:
                missing.append(key)
            else:
                found.append(message)
        if not missing:
            return found
        read = [decode_message(row) for row in self._db.fetchall(_BY_ID, (json.dumps(missing),))]
        found.extend(read)
        if self._size <= 0:
            return found
        excess = len(rows) + len(read) - self._size
        if excess > 0:  # the oldest reads go first
            for key in list(itertools.islice(rows, excess)):
                del rows[key]
        for message in read[: self._size]:
            rows[message.id] = message
        return found
