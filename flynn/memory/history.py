"""Conversation history in SQLite: every persisted turn, per session, and the running summary
compaction keeps on the session; the searching reads (FTS5, neighbours, time windows) are
``flynn.memory.history_search``'s.

Compaction marks rows summarised and stores the running summary on the session; rows are only
deleted by ``forget``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from flynn.credentials import redact, redact_json
from flynn.errors import StoreError
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.history_search import SqliteMessageSearch
from flynn.memory.message_rows import COLUMNS, ROW_CACHE_SIZE, CachedMessages, decode_message
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.sql import NamedRow, Sql, storable
from flynn.memory.store import (
    MessageMatch,
    MessageRole,
    Neighbour,
    NewMessage,
    Postings,
    SearchHit,
    SessionSummary,
    StoredMessage,
)

_TOUCH_SESSION = """
INSERT INTO sessions (key, namespace, created_at, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at
"""
_INSERT = f"""
INSERT INTO messages (session, namespace, role, content, tokens, created_at, offline)
VALUES (?, ?, ?, ?, ?, ?, ?)
RETURNING {COLUMNS}
"""
_INSERT_MANY = """
INSERT INTO messages (session, namespace, role, content, tokens, created_at)
VALUES (?, ?, ?, ?, ?, ?)
"""
_INSERT_TOOL_STEPS = "INSERT INTO message_tools (message_id, steps) VALUES (?, ?)"
_SAVE_TOOL_STEPS = (
    "INSERT INTO message_tools (message_id, steps) VALUES (?, ?) "
    "ON CONFLICT (message_id) DO UPDATE SET steps = excluded.steps"
)
_RECENT = f"SELECT {COLUMNS} FROM messages WHERE session = ? AND summarized = 0 ORDER BY id"
_SUMMARY = "SELECT summary FROM sessions WHERE key = ?"
# The newest conversation turns of a session, compacted or not: each half reads the
# (session, summarized, id) index backwards from its end, and the merge keeps the newest.
_LATEST_HALF = f"""
SELECT {COLUMNS} FROM messages
WHERE session = :session AND summarized = {{}} AND role IN ('user', 'assistant')
    AND trim(content) != ''
ORDER BY id DESC LIMIT :limit
"""
_LATEST = f"""
SELECT * FROM ({_LATEST_HALF.format(0)}) UNION ALL SELECT * FROM ({_LATEST_HALF.format(1)})
ORDER BY id DESC LIMIT :limit
"""
# Two lookups of the (session, summarized, id) index, each answered from its end.
_PREVIOUS_ID = """
SELECT max(
    coalesce((SELECT max(id) FROM messages
              WHERE session = :session AND summarized = 0 AND id < :id), 0),
    coalesce((SELECT max(id) FROM messages
              WHERE session = :session AND summarized = 1 AND id < :id), 0)
)
"""
_MARK_SUMMARIZED = (
    "UPDATE messages SET summarized = 1 WHERE session = ? AND summarized = 0 AND id <= ?"
)
_SAVE_SUMMARY = """
UPDATE sessions
SET summary = ?, summarized_through = max(coalesce(summarized_through, 0), ?), updated_at = ?
WHERE key = ?
"""
_SUMMARIES = f"""
SELECT key, namespace, summary, summarized_through, updated_at FROM sessions
WHERE {namespace_scope("namespace")} AND summary IS NOT NULL AND summary != ''
ORDER BY updated_at DESC LIMIT ?
"""
_NAMESPACES_UNDER = f"SELECT DISTINCT namespace FROM messages WHERE {namespace_scope('namespace')}"
# One namespace's messages of a window in time order, a page after the last one read: each page
# is a range of ``messages_namespace_created`` (namespace, created_at, then rowid), never a sort.
_PAGE = f"""
SELECT {COLUMNS} FROM messages
WHERE namespace = :namespace AND (created_at, id) > (:after_at, :after_id) AND created_at < :end
ORDER BY created_at, id LIMIT :page
"""
_BEFORE_ANY_TIME = ""
_AFTER_EVERY_TIME = "~"  # sorts after every encoded time, which starts with a digit
PAGE_SIZE = 500
"""Messages read per statement by ``in_order``: a few hundred kilobytes held at once."""
_FORGET_SESSION_MESSAGES = "DELETE FROM messages WHERE session = ?"
_FORGET_SESSION = "DELETE FROM sessions WHERE key = ?"
_FORGET_MESSAGES = f"DELETE FROM messages WHERE {namespace_scope('namespace')}"
# Also sessions that wrote under the prefix while recorded under another namespace (the identity
# config changed): their summaries hold the same person's words.
_FORGET_SESSIONS = f"""
DELETE FROM sessions WHERE {namespace_scope("namespace")}
    OR key IN (SELECT session FROM messages WHERE {namespace_scope("namespace")})
"""


def stored_text(text: str) -> str:
    """What a history keeps of a message's or summary's text: credentials redacted, NUL
    replaced (``storable``)."""
    return storable(redact(text)[0])


def stored_steps(steps: str) -> str:
    """What a history keeps of a turn's tool steps (JSON): a credential in a call's arguments
    or a result (a refused call's too) redacted, NUL replaced."""
    return storable(redact_json(steps)[0])


class SqliteHistory:
    """``History`` on the ``messages`` and ``sessions`` tables; ``messages_fts`` follows by
    triggers, so a deleted message leaves no index row behind."""

    def __init__(self, db: Database, *, cached_rows: int = ROW_CACHE_SIZE) -> None:
        self._db = db
        self._rows = CachedMessages(db, cached_rows)
        self._search = SqliteMessageSearch(db, self._rows)

    def append(
        self,
        session: str,
        namespace: str,
        role: MessageRole,
        content: str,
        *,
        tokens: int,
        now: datetime,
        tool_steps: str | None = None,
        offline: bool = False,
    ) -> StoredMessage:
        """Stores one message (with the tool steps that led to it, if any) and creates or
        touches its session row, in one transaction. Credentials in either are redacted
        first: what reaches the table never holds one. ``offline`` marks a reply the offline
        provider made: searches and embeddings leave it out."""
        at = encode_time(now)
        content = stored_text(content)
        tool_steps = None if tool_steps is None else stored_steps(tool_steps)
        with self._db.transaction():
            self._db.execute(_TOUCH_SESSION, (session, namespace, at, at))
            row = self._db.fetchone(
                _INSERT, (session, namespace, role, content, tokens, at, int(offline))
            )
            if row is None:
                raise StoreError("message insert returned no row")
            if tool_steps is not None:
                self._db.execute(_INSERT_TOOL_STEPS, (row[0], tool_steps))
        return decode_message(row)

    def save_tool_steps(self, message_id: int, steps: str) -> None:
        """Stores (or replaces) the tool steps kept with message ``message_id``; a
        credential in a call's arguments or a result (a refused call's too) is redacted."""
        self._db.execute(_SAVE_TOOL_STEPS, (message_id, stored_steps(steps)))

    def tool_steps(self, message_ids: Sequence[int]) -> dict[int, str]:
        """The tool steps stored with each of ``message_ids`` that has any."""
        found: dict[int, str] = {}
        ids = list(message_ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.fetchall(
                f"SELECT message_id, steps FROM message_tools WHERE message_id IN ({marks})",
                chunk,
            )
            found.update((int(row[0]), str(row[1])) for row in rows)
        return found

    def append_many(self, session: str, namespace: str, messages: Sequence[NewMessage]) -> int:
        """Stores many messages of one session and creates or touches its session row, in one
        transaction; returns how many were stored."""
        if not messages:
            return 0
        rows = [
            (
                session,
                namespace,
                m.role,
                stored_text(m.content),
                m.tokens,
                encode_time(m.created_at),
            )
            for m in messages
        ]
        first, last = rows[0][5], max(row[5] for row in rows)
        with self._db.transaction():
            self._db.execute(_TOUCH_SESSION, (session, namespace, first, last))
            return self._db.executemany(_INSERT_MANY, rows)

    def recent(self, session: str) -> list[StoredMessage]:
        """The session's messages not yet summarised by compaction, oldest first."""
        return [decode_message(row) for row in self._db.fetchall(_RECENT, (session,))]

    def latest(self, session: str, limit: int) -> list[StoredMessage]:
        """The session's newest ``limit`` user and assistant messages with text, compacted ones
        included, oldest first: the conversation as its person saw it (the web page's history
        after a reload)."""
        if limit <= 0:
            return []
        rows = self._db.fetchall(_LATEST, {"session": session, "limit": limit})
        return [decode_message(row) for row in reversed(rows)]

    def previous(self, session: str, before_id: int) -> StoredMessage | None:
        """The session's message just before message ``before_id``, if any."""
        row = self._db.fetchone(_PREVIOUS_ID, {"session": session, "id": before_id})
        if row is None or not row[0]:  # ids start at 1; 0 means none
            return None
        found = self._rows.read([int(row[0])])
        return found[0] if found else None

    def summary(self, session: str) -> str | None:
        """The session's running compaction summary, if it was ever compacted."""
        row = self._db.fetchone(_SUMMARY, (session,))
        summary: str | None = None if row is None else row["summary"]
        return summary

    def save_summary(self, session: str, summary: str, *, through_id: int, now: datetime) -> int:
        """Stores the session summary and marks messages up to ``through_id`` summarised, in one
        transaction; returns how many were marked. Rows are never deleted here.

        Raises ``StoreError`` (and changes nothing) if the session has no row, i.e. never had a
        message appended.
        """
        summary = stored_text(summary)
        with self._db.transaction():
            marked = self._db.execute(_MARK_SUMMARIZED, (session, through_id))
            updated = self._db.execute(
                _SAVE_SUMMARY, (summary, through_id, encode_time(now), session)
            )
            if updated != 1:
                raise StoreError(f"no session {session!r} to save a summary for")
        return marked

    def search(
        self,
        namespace_prefix: str,
        query: str,
        *,
        limit: int,
        exclude_session: str | None = None,
    ) -> list[SearchHit]:
        """See ``SqliteMessageSearch.search``."""
        return self._search.search(
            namespace_prefix, query, limit=limit, exclude_session=exclude_session
        )

    def match(
        self,
        namespace_prefix: str,
        query: str,
        *,
        limit: int,
        exclude_session: str | None = None,
        wide: bool = False,
    ) -> list[MessageMatch]:
        """See ``SqliteMessageSearch.match``."""
        return self._search.match(
            namespace_prefix, query, limit=limit, exclude_session=exclude_session, wide=wide
        )

    def postings(
        self,
        query: str,
        *,
        wide: bool = False,
        max_terms: int = 0,
        namespace_prefix: str | None = None,
        search: Hashable = None,
    ) -> Postings | None:
        """See ``SqliteMessageSearch.postings``."""
        return self._search.postings(
            query, wide=wide, max_terms=max_terms, namespace_prefix=namespace_prefix, search=search
        )

    def messages_under(
        self, namespace_prefix: str, ids: Sequence[int], *, exclude_session: str | None = None
    ) -> list[StoredMessage]:
        """See ``SqliteMessageSearch.messages_under``."""
        return self._search.messages_under(namespace_prefix, ids, exclude_session=exclude_session)

    def around(
        self, namespace_prefix: str, message_ids: Sequence[int], *, radius: int
    ) -> list[Neighbour]:
        """See ``SqliteMessageSearch.around``."""
        return self._search.around(namespace_prefix, message_ids, radius=radius)

    def between(
        self,
        namespace_prefix: str,
        start: datetime,
        end: datetime,
        *,
        limit: int,
        exclude_session: str | None = None,
    ) -> list[StoredMessage]:
        """See ``SqliteMessageSearch.between``."""
        return self._search.between(
            namespace_prefix, start, end, limit=limit, exclude_session=exclude_session
        )

    def summaries(self, namespace_prefix: str, *, limit: int) -> list[SessionSummary]:
        """Non-empty compaction summaries of sessions under ``namespace_prefix``, newest first."""
        if limit <= 0:
            return []
        rows = self._db.fetchall(_SUMMARIES, (*scope_params(namespace_prefix), limit))
        return session_summaries(rows, decode_time)

    def in_order(
        self,
        namespace_prefix: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        page: int = PAGE_SIZE,
    ) -> Iterator[StoredMessage]:
        """Every message under ``namespace_prefix`` created in [``start``, ``end``) (either
        open), in every session, compacted ones included, oldest first (ties by id), read
        ``page`` at a time: a history of any length streams in bounded memory. Messages stored
        while the iteration runs may or may not appear. Raises ``ValueError`` for an empty
        prefix, ``StoreError`` when the database cannot be read."""
        if page < 1:
            raise ValueError("page must be at least 1")
        namespaces = self._db.fetchall(_NAMESPACES_UNDER, scope_params(namespace_prefix))
        low = _BEFORE_ANY_TIME if start is None else encode_time(start)
        high = _AFTER_EVERY_TIME if end is None else encode_time(end)
        return in_time_order(
            self._db, _PAGE, [str(row[0]) for row in namespaces], low, high, page, decode_message
        )

    def messages(self, ids: Sequence[int]) -> list[StoredMessage]:
        """The messages with these ids that exist, in id order."""
        if not ids:
            return []
        return sorted(self._rows.read(ids), key=_message_id)

    def forget(self, namespace_prefix: str) -> int:
        """Deletes messages (with their index rows) and session rows under the prefix, for real;
        returns how many messages went."""
        messages, _ = self.forget_counted(namespace_prefix)
        return messages

    def forget_session(self, session: str) -> int:
        """Deletes one session's messages (and index rows) and its summary for real, in one
        transaction; returns how many messages went."""
        self._search.forget_counts()
        with self._db.transaction():
            messages = self._db.execute(_FORGET_SESSION_MESSAGES, (session,))
            self._db.execute(_FORGET_SESSION, (session,))
        return messages

    def forget_counted(self, namespace_prefix: str) -> tuple[int, int]:
        """Like ``forget``, in one transaction; returns (messages, sessions) deleted."""
        scope = scope_params(namespace_prefix)
        self._search.forget_counts()
        with self._db.transaction():
            sessions = self._db.execute(_FORGET_SESSIONS, scope + scope)
            messages = self._db.execute(_FORGET_MESSAGES, scope)
        return messages, sessions


def session_summaries(
    rows: Iterable[NamedRow], stored_time: Callable[[Any], datetime]
) -> list[SessionSummary]:
    """``History.summaries`` from rows of ``sessions`` (any backend's, its times read by
    ``stored_time``)."""
    return [
        SessionSummary(
            session=row["key"],
            namespace=row["namespace"],
            summary=row["summary"],
            through_id=row["summarized_through"] or 0,
            updated_at=stored_time(row["updated_at"]),
        )
        for row in rows
    ]


def in_time_order(
    db: Sql,
    statement: str,
    namespaces: Sequence[str],
    low: object,
    high: object,
    page: int,
    decode: Callable[[Any], StoredMessage],
) -> Iterator[StoredMessage]:
    """``History.in_order`` on any backend: each namespace's messages in [``low``, ``high``)
    read ``page`` at a time by ``statement`` (parameters ``namespace``, ``after_at``,
    ``after_id``, ``end``, ``page``; rows with ``created_at`` and ``id``), merged by time."""
    pages = [_pages(db, statement, namespace, low, high, page, decode) for namespace in namespaces]
    # A person's messages are nearly all under their root: the merge is of one stream then.
    return heapq.merge(*pages, key=_time_order)


def _pages(
    db: Sql,
    statement: str,
    namespace: str,
    low: object,
    high: object,
    page: int,
    decode: Callable[[Any], StoredMessage],
) -> Iterator[StoredMessage]:
    after_at, after_id = low, 0
    while True:
        rows = db.fetchall(
            statement,
            {
                "namespace": namespace,
                "after_at": after_at,
                "after_id": after_id,
                "end": high,
                "page": page,
            },
        )
        for row in rows:
            yield decode(row)
        if len(rows) < page:
            return
        after_at, after_id = rows[-1]["created_at"], int(rows[-1]["id"])


def _message_id(message: StoredMessage) -> int:
    return message.id


def _time_order(message: StoredMessage) -> tuple[datetime, int]:
    return message.created_at, message.id
