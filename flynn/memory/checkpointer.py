"""Moves the write-ahead log into the database file on a worker thread, so no turn pays for it.

Without it, the commit that crosses ``wal_autocheckpoint`` copies the log and fsyncs inline,
adding several milliseconds to whichever turn happens to make it.
"""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import structlog

from flynn.errors import StoreError
from flynn.memory.database import existing_file

_log = structlog.get_logger(__name__)


class WalCheckpointer:
    """Checkpoints the database at ``path`` through its own short-lived connection.

    ``PASSIVE`` checkpoints never wait for readers or writers, so they run beside the daemon's
    connection; ``sqlite3`` releases the GIL while SQLite works, so the event loop keeps going.
    """

    def __init__(self, path: Path, *, every_seconds: float = 5.0) -> None:
        self._path = path
        self._every_seconds = every_seconds

    def checkpoint(self) -> bool:
        """Copies what it can of the log into the database; returns whether all of it is there
        (not yet, when a reader still uses older frames).

        Raises ``StoreError`` if the database cannot be opened or checkpointed.
        """
        try:
            uri = existing_file(self._path)  # a file gone meanwhile is not made anew, empty
            with closing(sqlite3.connect(uri, uri=True, isolation_level=None)) as connection:
                row = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot checkpoint {self._path}: {exc}") from exc
        # (busy, frames in the log, frames copied); -1 frames when the database is not in WAL mode.
        return row is not None and row[1] == row[2]

    async def run(self) -> None:
        """Checkpoints every ``every_seconds`` until cancelled. A failed checkpoint is logged and
        retried next time (the connection's own autocheckpoint remains as a safety net).

        On cancellation a checkpoint already running on its thread finishes there, closing its
        own connection; nothing is left half-done.
        """
        while True:
            await asyncio.sleep(self._every_seconds)
            try:
                await asyncio.to_thread(self.checkpoint)
            except StoreError as exc:
                _log.warning("memory.checkpoint_failed", error=str(exc))
