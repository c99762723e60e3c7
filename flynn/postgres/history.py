"""Conversation history in PostgreSQL: ``History`` on the ``messages`` and ``sessions`` tables,
as ``flynn.memory.history`` keeps it in SQLite, with each message's terms written in its own
transaction (``message_terms``: what FTS5 would index) so its search ranks as SQLite's does
(``flynn.postgres.history_search``).

Several workers may append to one session at once: ids come from the identity column, the
session row is an upsert, and a namespace root's counts are updated in place by triggers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

from flynn.errors import StoreError
from flynn.memory.fts_words import FtsWords, IndexedText
from flynn.memory.history import (
    PAGE_SIZE,
    in_time_order,
    session_summaries,
    stored_steps,
    stored_text,
)
from flynn.memory.namespaces import namespace_root, scope_params
from flynn.memory.store import (
    MessageRole,
    NewMessage,
    SessionSummary,
    StoredMessage,
)
from flynn.postgres.database import PostgresDatabase, aware, utc
from flynn.postgres.history_search import COLUMNS, PostgresMessageSearch, decode_message
from flynn.postgres.postings import TermRows

_SCOPE = "(namespace = %s OR (namespace >= %s AND namespace < %s))"
_TOUCH_SESSION = """
INSERT INTO sessions AS s (key, namespace, created_at, updated_at) VALUES (%s, %s, %s, %s)
ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at
"""
# One statement (so one round trip, and atomic on its own): the session row, the message, its
# terms and its tool steps.
_APPEND = f"""
WITH touched AS (
    INSERT INTO sessions AS s (key, namespace, created_at, updated_at)
    VALUES (%(session)s, %(namespace)s, %(at)s, %(at)s)
    ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at
), stored AS (
    INSERT INTO messages
        (session, namespace, root, role, content, tokens, created_at, offline, terms)
    VALUES (%(session)s, %(namespace)s, %(root)s, %(role)s, %(content)s, %(tokens)s, %(at)s,
            %(offline)s, %(length)s)
    RETURNING {COLUMNS}
), indexed AS (
    INSERT INTO message_terms (term, message_id, root, occurs)
    SELECT t.term, stored.id, %(root)s, t.occurs
    FROM stored, unnest(%(terms)s::text[], %(occurs)s::integer[]) AS t (term, occurs)
), steps AS (
    INSERT INTO message_tools (message_id, steps)
    SELECT stored.id, %(steps)s::text FROM stored WHERE %(steps)s::text IS NOT NULL
)
SELECT {COLUMNS} FROM stored
"""
# Ids taken first (from the identity's sequence, so other workers' messages never take them),
# then the rows in one statement each: an import of thousands is three round trips.
_NEW_IDS = """
SELECT nextval(pg_get_serial_sequence('messages', 'id')) AS id FROM generate_series(1, %s)
ORDER BY 1
"""
_INSERT_MANY = """
INSERT INTO messages
    (id, session, namespace, root, role, content, tokens, created_at, offline, terms)
OVERRIDING SYSTEM VALUE
SELECT id, %s, %s, %s, role, content, tokens, created_at, false, terms
FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::integer[], %s::timestamptz[],
            %s::integer[]) AS m (id, role, content, tokens, created_at, terms)
"""
_SAVE_TOOL_STEPS = (
    "INSERT INTO message_tools (message_id, steps) VALUES (%s, %s) "
    "ON CONFLICT (message_id) DO UPDATE SET steps = excluded.steps"
)
_REWRITE = "UPDATE messages SET content = %s, terms = %s WHERE id = %s RETURNING root"
_DROP_TERMS = "DELETE FROM message_terms WHERE message_id = %s"
_TOOL_STEPS = "SELECT message_id, steps FROM message_tools WHERE message_id = ANY(%s)"
_RECENT = f"SELECT {COLUMNS} FROM messages WHERE session = %s AND NOT summarized ORDER BY id"
_SUMMARY = "SELECT summary FROM sessions WHERE key = %s"
_LATEST_HALF = f"""
(SELECT {COLUMNS} FROM messages
 WHERE session = %(session)s AND summarized = {{}} AND role IN ('user', 'assistant')
    AND trim(content) != ''
 ORDER BY id DESC LIMIT %(limit)s)
"""
_LATEST = f"""
{_LATEST_HALF.format("false")} UNION ALL {_LATEST_HALF.format("true")}
ORDER BY id DESC LIMIT %(limit)s
"""
_PREVIOUS_ID = """
SELECT greatest(
    (SELECT max(id) FROM messages WHERE session = %(session)s AND NOT summarized AND id < %(id)s),
    (SELECT max(id) FROM messages WHERE session = %(session)s AND summarized AND id < %(id)s)
) AS id
"""
_MARK_SUMMARIZED = """
UPDATE messages SET summarized = true WHERE session = %s AND NOT summarized AND id <= %s
"""
_SAVE_SUMMARY = """
UPDATE sessions
SET summary = %s, summarized_through = greatest(coalesce(summarized_through, 0), %s),
    updated_at = %s
WHERE key = %s
"""
_SUMMARIES = f"""
SELECT key, namespace, summary, summarized_through, updated_at FROM sessions
WHERE {_SCOPE} AND summary IS NOT NULL AND summary != ''
ORDER BY updated_at DESC LIMIT %s
"""
_NAMESPACES_UNDER = f"SELECT DISTINCT namespace FROM messages WHERE {_SCOPE}"
_PAGE = f"""
SELECT {COLUMNS} FROM messages
WHERE namespace = %(namespace)s AND (created_at, id) > (%(after_at)s, %(after_id)s)
    AND created_at < %(end)s
ORDER BY created_at, id LIMIT %(page)s
"""
_BEFORE_ANY_TIME = datetime.min.replace(tzinfo=UTC)
_AFTER_EVERY_TIME = datetime.max.replace(tzinfo=UTC)
_FORGET_SESSION_MESSAGES = "DELETE FROM messages WHERE session = %s"
_FORGET_SESSION = "DELETE FROM sessions WHERE key = %s"
_FORGET_MESSAGES = f"DELETE FROM messages WHERE {_SCOPE}"
# Also sessions that wrote under the prefix while recorded under another namespace: their
# summaries hold the same person's words.
_FORGET_SESSIONS = f"""
DELETE FROM sessions WHERE {_SCOPE}
    OR key IN (SELECT session FROM messages WHERE {_SCOPE})
"""


class PostgresHistory(PostgresMessageSearch):
    """``History`` on PostgreSQL's ``messages`` and ``sessions`` tables; its searching reads
    are ``PostgresMessageSearch``'s. Rows are read afresh each time: another worker may mark or
    delete them, and nothing tells this one."""

    def __init__(self, db: PostgresDatabase, *, words: FtsWords | None = None) -> None:
        super().__init__(db, FtsWords() if words is None else words)

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
        """``SqliteHistory.append``: the message, its terms, its tool steps and its session
        row in one statement, credentials redacted first."""
        at = aware(now)
        content = stored_text(content)
        tool_steps = None if tool_steps is None else stored_steps(tool_steps)
        indexed = self._words.index([content])[0]
        row = self._db.fetchone(
            _APPEND,
            {
                "session": session,
                "namespace": namespace,
                "root": namespace_root(namespace),
                "role": role,
                "content": content,
                "tokens": tokens,
                "at": at,
                "offline": offline,
                "length": indexed.length,
                "terms": list(indexed.terms),
                "occurs": list(indexed.terms.values()),
                "steps": tool_steps,
            },
        )
        if row is None:
            raise StoreError("message insert returned no row")
        return decode_message(row)

    def save_tool_steps(self, message_id: int, steps: str) -> None:
        self._db.execute(_SAVE_TOOL_STEPS, (message_id, stored_steps(steps)))

    def tool_steps(self, message_ids: Sequence[int]) -> dict[int, str]:
        if not message_ids:
            return {}
        rows = self._db.fetchall(_TOOL_STEPS, (list(message_ids),))
        return {int(row["message_id"]): str(row["steps"]) for row in rows}

    def append_many(self, session: str, namespace: str, messages: Sequence[NewMessage]) -> int:
        """``SqliteHistory.append_many``."""
        if not messages:
            return 0
        contents = [stored_text(m.content) for m in messages]
        times = [aware(m.created_at) for m in messages]
        indexed = self._words.index(contents)
        root = namespace_root(namespace)
        with self._db.transaction():
            self._db.execute(_TOUCH_SESSION, (session, namespace, times[0], max(times)))
            ids = [int(row["id"]) for row in self._db.fetchall(_NEW_IDS, (len(messages),))]
            stored = self._db.execute(
                _INSERT_MANY,
                (
                    session,
                    namespace,
                    root,
                    ids,
                    [m.role for m in messages],
                    contents,
                    [m.tokens for m in messages],
                    times,
                    [text.length for text in indexed],
                ),
            )
            self._insert_terms(root, ids, indexed)
        return stored

    def rewrite(self, message_id: int, content: str) -> bool:
        """Replaces a stored message's text (forgetting redacts a value in it), its terms and
        its root's counts with it, in one transaction; ``False`` when there is no such message.
        What SQLite's ``messages_fts`` does by trigger when ``content`` is updated."""
        indexed = self._words.index([content])[0]
        with self._db.transaction():
            row = self._db.fetchone(_REWRITE, (content, indexed.length, message_id))
            if row is None:
                return False
            self._db.execute(_DROP_TERMS, (message_id,))
            self._insert_terms(row["root"], [message_id], [indexed])
        self.forget_counts()
        return True

    def _insert_terms(self, root: str, ids: Sequence[int], texts: Sequence[IndexedText]) -> None:
        self._index.insert(
            TermRows.of((owner, root, text.terms) for owner, text in zip(ids, texts, strict=True))
        )

    def recent(self, session: str) -> list[StoredMessage]:
        return [decode_message(row) for row in self._db.fetchall(_RECENT, (session,))]

    def latest(self, session: str, limit: int) -> list[StoredMessage]:
        """``SqliteHistory.latest``."""
        if limit <= 0:
            return []
        rows = self._db.fetchall(_LATEST, {"session": session, "limit": limit})
        return [decode_message(row) for row in reversed(rows)]

    def previous(self, session: str, before_id: int) -> StoredMessage | None:
        row = self._db.fetchone(_PREVIOUS_ID, {"session": session, "id": before_id})
        if row is None or row["id"] is None:
            return None
        found = self.read([int(row["id"])])
        return found[0] if found else None

    def summary(self, session: str) -> str | None:
        row = self._db.fetchone(_SUMMARY, (session,))
        summary: str | None = None if row is None else row["summary"]
        return summary

    def save_summary(self, session: str, summary: str, *, through_id: int, now: datetime) -> int:
        """``SqliteHistory.save_summary``: raises ``StoreError`` (and changes nothing) for a
        session with no row."""
        summary = stored_text(summary)
        with self._db.transaction():
            marked = self._db.execute(_MARK_SUMMARIZED, (session, through_id))
            updated = self._db.execute(_SAVE_SUMMARY, (summary, through_id, aware(now), session))
            if updated != 1:
                raise StoreError(f"no session {session!r} to save a summary for")
        return marked

    def summaries(self, namespace_prefix: str, *, limit: int) -> list[SessionSummary]:
        if limit <= 0:
            return []
        rows = self._db.fetchall(_SUMMARIES, (*scope_params(namespace_prefix), limit))
        return session_summaries(rows, utc)

    def in_order(
        self,
        namespace_prefix: str,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        page: int = PAGE_SIZE,
    ) -> Iterator[StoredMessage]:
        """``SqliteHistory.in_order``."""
        if page < 1:
            raise ValueError("page must be at least 1")
        namespaces = self._db.fetchall(_NAMESPACES_UNDER, scope_params(namespace_prefix))
        low = _BEFORE_ANY_TIME if start is None else aware(start)
        high = _AFTER_EVERY_TIME if end is None else aware(end)
        names = [str(row["namespace"]) for row in namespaces]
        return in_time_order(self._db, _PAGE, names, low, high, page, decode_message)

    def messages(self, ids: Sequence[int]) -> list[StoredMessage]:
        return sorted(self.read(ids), key=_message_id)

    def forget(self, namespace_prefix: str) -> int:
        messages, _ = self.forget_counted(namespace_prefix)
        return messages

    def forget_session(self, session: str) -> int:
        self.forget_counts()
        with self._db.transaction():
            messages = self._db.execute(_FORGET_SESSION_MESSAGES, (session,))
            self._db.execute(_FORGET_SESSION, (session,))
        return messages

    def forget_counted(self, namespace_prefix: str) -> tuple[int, int]:
        """``SqliteHistory.forget_counted``: (messages, sessions) deleted, in one
        transaction; their terms, tool steps and vectors go with them."""
        scope = scope_params(namespace_prefix)
        self.forget_counts()
        with self._db.transaction():
            sessions = self._db.execute(_FORGET_SESSIONS, scope + scope)
            messages = self._db.execute(_FORGET_MESSAGES, scope)
        return messages, sessions


def _message_id(message: StoredMessage) -> int:
    return message.id
