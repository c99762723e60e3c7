"""Conversation history in SQLite: every persisted turn, per session, searchable through FTS5.

Compaction marks rows summarised and stores the running summary on the session; rows are only
deleted by ``forget``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime

from flynn.errors import StoreError
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.fts import FtsQueryPlanner, MatchPlan
from flynn.memory.scope import namespace_scope, scope_params
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

EXCERPT_TOKENS = 16
"""Words around the best match in a search excerpt (FTS5 allows 1..64)."""

_COLUMNS = "id, session, namespace, role, content, tokens, created_at, summarized"
_M_COLUMNS = ", ".join(f"m.{column.strip()}" for column in _COLUMNS.split(","))

_TOUCH_SESSION = """
INSERT INTO sessions (key, namespace, created_at, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at
"""
_INSERT = f"""
INSERT INTO messages (session, namespace, role, content, tokens, created_at)
VALUES (?, ?, ?, ?, ?, ?)
RETURNING {_COLUMNS}
"""
_INSERT_MANY = """
INSERT INTO messages (session, namespace, role, content, tokens, created_at)
VALUES (?, ?, ?, ?, ?, ?)
"""
_RECENT = f"SELECT {_COLUMNS} FROM messages WHERE session = ? AND summarized = 0 ORDER BY id"
_SUMMARY = "SELECT summary FROM sessions WHERE key = ?"
_MARK_SUMMARIZED = (
    "UPDATE messages SET summarized = 1 WHERE session = ? AND summarized = 0 AND id <= ?"
)
_SAVE_SUMMARY = """
UPDATE sessions
SET summary = ?, summarized_through = max(coalesce(summarized_through, 0), ?), updated_at = ?
WHERE key = ?
"""
# CROSS JOIN keeps the FTS table as the outer loop (see facts.py); FTS5 sorts by ``rank`` (bm25)
# itself, so ``snippet`` is only computed for the rows that survive the filters and LIMIT.
_SEARCH = f"""
SELECT {_M_COLUMNS},
       snippet(messages_fts, 0, '[', ']', '…', {EXCERPT_TOKENS}) AS excerpt,
       messages_fts.rank AS rank
FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid
WHERE messages_fts MATCH ? AND messages_fts.rowid >= ? AND {namespace_scope("m.namespace")}
"""
_SEARCH_ALL = _SEARCH + " ORDER BY messages_fts.rank LIMIT ?"
_SEARCH_EXCLUDING = _SEARCH + " AND m.session != ? ORDER BY messages_fts.rank LIMIT ?"
_MATCH = f"""
SELECT {_M_COLUMNS}, messages_fts.rank AS rank
FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid
WHERE messages_fts MATCH ? AND messages_fts.rowid >= ? AND {namespace_scope("m.namespace")}
"""
_MATCH_ALL = _MATCH + " ORDER BY messages_fts.rank LIMIT ?"
_MATCH_EXCLUDING = _MATCH + " AND m.session != ? ORDER BY messages_fts.rank LIMIT ?"
# A small rowid window around each anchor: the primary key range is the cheapest read there is,
# and a session's turns are nearly consecutive (other sessions' turns may interleave). One
# statement for all anchors; ``place`` numbers a session's rows outward from the anchor, computed
# before the wanted rows are read whole. The unary ``+`` keeps SQLite from reading a whole session
# (or namespace) through an index instead of the few rows in the window.
_AROUND = f"""
WITH near AS (
    SELECT m.id AS id, a.id AS anchor,
           iif(m.id < a.id, -1, 1) * row_number() OVER (
               PARTITION BY a.id, m.id < a.id ORDER BY abs(m.id - a.id)
           ) AS place
    FROM messages AS a
    JOIN messages AS m
        ON m.id BETWEEN a.id - ? AND a.id + ? AND m.id != a.id AND +m.session = a.session
    WHERE a.id IN (SELECT value FROM json_each(?)) AND {namespace_scope("+m.namespace")}
)
SELECT {_M_COLUMNS}, near.anchor, near.place
FROM near CROSS JOIN messages AS m ON m.id = near.id
WHERE abs(near.place) <= ?
"""
_UNDER = f"""
SELECT {_COLUMNS} FROM messages
WHERE id IN (SELECT value FROM json_each(?)) AND {namespace_scope("+namespace")}
"""
_UNDER_EXCLUDING = _UNDER + " AND session != ?"
# The root namespace and the namespaces under it are read apart: as one OR, SQLite reads every
# row of the window through two indexes and sorts them all; apart, the root's newest rows come
# straight off ``messages_namespace_created`` and the read stops at the limit.
_BETWEEN = """
SELECT * FROM (
    SELECT {columns} FROM messages
    WHERE namespace = :root AND created_at >= :start AND created_at < :end {excluding}
    ORDER BY created_at DESC LIMIT :limit
)
UNION ALL
SELECT * FROM (
    SELECT {columns} FROM messages
    WHERE namespace >= :below AND namespace < :after
        AND created_at >= :start AND created_at < :end {excluding}
    ORDER BY created_at DESC LIMIT :limit
)
ORDER BY created_at DESC LIMIT :limit
"""
_BETWEEN_ALL = _BETWEEN.format(columns=_COLUMNS, excluding="")
_BETWEEN_EXCLUDING = _BETWEEN.format(columns=_COLUMNS, excluding="AND session != :exclude")
_SUMMARIES = f"""
SELECT key, namespace, summary, summarized_through, updated_at FROM sessions
WHERE {namespace_scope("namespace")} AND summary IS NOT NULL AND summary != ''
ORDER BY updated_at DESC LIMIT ?
"""
_AROUND_WINDOW = 8
"""How far (in message ids) to look for a neighbour of the same session."""
WIDE_BUDGET = 3000
"""Rows ranked by a recall search (``match(wide=True)``) whose rarest word is too common for the
interactive budget: at ~1.5 µs each, a few milliseconds."""
_FORGET_SESSION_MESSAGES = "DELETE FROM messages WHERE session = ?"
_FORGET_SESSION = "DELETE FROM sessions WHERE key = ?"
_FORGET_MESSAGES = f"DELETE FROM messages WHERE {namespace_scope('namespace')}"
# Also sessions that wrote under the prefix while recorded under another namespace (the identity
# config changed): their summaries hold the same person's words.
_FORGET_SESSIONS = f"""
DELETE FROM sessions WHERE {namespace_scope("namespace")}
    OR key IN (SELECT session FROM messages WHERE {namespace_scope("namespace")})
"""


class SqliteHistory:
    """``History`` on the ``messages`` and ``sessions`` tables; ``messages_fts`` follows by
    triggers, so a deleted message leaves no index row behind."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._planner = FtsQueryPlanner(db, "messages_fts")
        self._wide_planner = FtsQueryPlanner(db, "messages_fts", budget=WIDE_BUDGET)

    def append(
        self,
        session: str,
        namespace: str,
        role: MessageRole,
        content: str,
        *,
        tokens: int,
        now: datetime,
    ) -> StoredMessage:
        """Stores one message and creates or touches its session row, in one transaction."""
        at = encode_time(now)
        with self._db.transaction():
            self._db.execute(_TOUCH_SESSION, (session, namespace, at, at))
            row = self._db.fetchone(_INSERT, (session, namespace, role, content, tokens, at))
        if row is None:
            raise StoreError("message insert returned no row")
        return _message(row)

    def append_many(self, session: str, namespace: str, messages: Sequence[NewMessage]) -> int:
        """Stores many messages of one session and creates or touches its session row, in one
        transaction; returns how many were stored."""
        if not messages:
            return 0
        rows = [
            (session, namespace, m.role, m.content, m.tokens, encode_time(m.created_at))
            for m in messages
        ]
        first, last = rows[0][5], max(row[5] for row in rows)
        with self._db.transaction():
            self._db.execute(_TOUCH_SESSION, (session, namespace, first, last))
            return self._db.executemany(_INSERT_MANY, rows)

    def recent(self, session: str) -> list[StoredMessage]:
        """The session's messages not yet summarised by compaction, oldest first."""
        return [_message(row) for row in self._db.fetchall(_RECENT, (session,))]

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
        """Messages under ``namespace_prefix`` matching the words of ``query``, best first.

        ``query`` is plain text (FTS5 syntax in it is treated as words). ``SearchHit.score`` is
        the negated bm25 rank: higher is better. Excerpts mark matches with ``[`` and ``]``.
        """
        if limit <= 0:
            return []
        plan = self._planner.plan(query)
        if plan is None:
            return []
        match = (plan.expression, plan.min_rowid, *scope_params(namespace_prefix))
        if exclude_session is None:
            rows = self._db.fetchall(_SEARCH_ALL, (*match, limit))
        else:
            rows = self._db.fetchall(_SEARCH_EXCLUDING, (*match, exclude_session, limit))
        return [
            SearchHit(message=_message(row), excerpt=row["excerpt"], score=-row["rank"])
            for row in rows
        ]

    def match(
        self,
        namespace_prefix: str,
        query: str,
        *,
        limit: int,
        exclude_session: str | None = None,
        wide: bool = False,
    ) -> list[MessageMatch]:
        """Like ``search`` without excerpts, best first. ``wide`` ranks up to ``WIDE_BUDGET``
        rows when the interactive budget cannot hold every match of even the rarest word."""
        if limit <= 0:
            return []
        plan = self._plan(query, wide=wide)
        if plan is None:
            return []
        match = (plan.expression, plan.min_rowid, *scope_params(namespace_prefix))
        if exclude_session is None:
            rows = self._db.fetchall(_MATCH_ALL, (*match, limit))
        else:
            rows = self._db.fetchall(_MATCH_EXCLUDING, (*match, exclude_session, limit))
        return [MessageMatch(message=_message(row), score=-row["rank"]) for row in rows]

    def postings(self, query: str, *, wide: bool = False) -> Postings | None:
        """The words ``match`` would search ``query`` for, each with the ids of the messages
        containing it (every namespace); ``None`` when no word occurs. Reads only the index."""
        plan = self._plan(query, wide=wide)
        return None if plan is None else self._planner.postings(plan)

    def messages_under(
        self, namespace_prefix: str, ids: Sequence[int], *, exclude_session: str | None = None
    ) -> list[StoredMessage]:
        """The messages with these ids under ``namespace_prefix`` (and not of
        ``exclude_session``), in no particular order."""
        if not ids:
            return []
        params = (json.dumps(list(ids)), *scope_params(namespace_prefix))
        if exclude_session is None:
            rows = self._db.fetchall(_UNDER, params)
        else:
            rows = self._db.fetchall(_UNDER_EXCLUDING, (*params, exclude_session))
        return [_message(row) for row in rows]

    def _plan(self, query: str, *, wide: bool) -> MatchPlan | None:
        """The interactive plan; with ``wide``, the wide one when the interactive budget could
        not hold every match of even the rarest word (the plan ranks only the newest): other
        words it leaves out are common ones, which weigh little under bm25 and would cost
        several times as much to rank."""
        plan = self._planner.plan(query)
        if wide and plan is not None and plan.is_windowed:
            return self._wide_planner.plan(query)
        return plan

    def around(
        self, namespace_prefix: str, message_ids: Sequence[int], *, radius: int
    ) -> list[Neighbour]:
        """For each id, up to ``radius`` messages of the same session just before and after it
        (looked for within a few ids, so a session interleaved with many others may show fewer),
        in one statement. Unknown ids are ignored."""
        if radius <= 0 or not message_ids:
            return []
        window = radius + _AROUND_WINDOW
        anchors = json.dumps(sorted(set(message_ids)))
        params = (window, window, anchors, *scope_params(namespace_prefix), radius)
        return [
            Neighbour(anchor=row["anchor"], offset=row["place"], message=_message(row))
            for row in self._db.fetchall(_AROUND, params)
        ]

    def between(
        self,
        namespace_prefix: str,
        start: datetime,
        end: datetime,
        *,
        limit: int,
        exclude_session: str | None = None,
    ) -> list[StoredMessage]:
        """Messages under ``namespace_prefix`` written in ``[start, end)``, newest first."""
        if limit <= 0 or end <= start:
            return []
        root, below, after = scope_params(namespace_prefix)
        params = {
            "root": root,
            "below": below,
            "after": after,
            "start": encode_time(start),
            "end": encode_time(end),
            "limit": limit,
        }
        if exclude_session is None:
            rows = self._db.fetchall(_BETWEEN_ALL, params)
        else:
            rows = self._db.fetchall(_BETWEEN_EXCLUDING, {**params, "exclude": exclude_session})
        return [_message(row) for row in rows]

    def summaries(self, namespace_prefix: str, *, limit: int) -> list[SessionSummary]:
        """Non-empty compaction summaries of sessions under ``namespace_prefix``, newest first."""
        if limit <= 0:
            return []
        rows = self._db.fetchall(_SUMMARIES, (*scope_params(namespace_prefix), limit))
        return [
            SessionSummary(
                session=row["key"],
                namespace=row["namespace"],
                summary=row["summary"],
                through_id=row["summarized_through"] or 0,
                updated_at=decode_time(row["updated_at"]),
            )
            for row in rows
        ]

    def messages(self, ids: Sequence[int]) -> list[StoredMessage]:
        """The messages with these ids that exist, in id order."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._db.fetchall(
            f"SELECT {_COLUMNS} FROM messages WHERE id IN ({marks}) ORDER BY id", ids
        )
        return [_message(row) for row in rows]

    def forget(self, namespace_prefix: str) -> int:
        """Deletes messages (with their index rows) and session rows under the prefix, for real;
        returns how many messages went."""
        messages, _ = self.forget_counted(namespace_prefix)
        return messages

    def forget_session(self, session: str) -> int:
        """Deletes one session's messages (and index rows) and its summary for real, in one
        transaction; returns how many messages went."""
        self._planner.forget_counts()
        self._wide_planner.forget_counts()
        with self._db.transaction():
            messages = self._db.execute(_FORGET_SESSION_MESSAGES, (session,))
            self._db.execute(_FORGET_SESSION, (session,))
        return messages

    def forget_counted(self, namespace_prefix: str) -> tuple[int, int]:
        """Like ``forget``, in one transaction; returns (messages, sessions) deleted."""
        scope = scope_params(namespace_prefix)
        self._planner.forget_counts()
        self._wide_planner.forget_counts()
        with self._db.transaction():
            sessions = self._db.execute(_FORGET_SESSIONS, scope + scope)
            messages = self._db.execute(_FORGET_MESSAGES, scope)
        return messages, sessions


def _message(row: sqlite3.Row) -> StoredMessage:
    # By position (every query here starts with ``_COLUMNS``): recall decodes hundreds of rows
    # per turn, and that is measurably cheaper than by name.
    return StoredMessage(
        row[0], row[1], row[2], row[3], row[4], row[5], decode_time(row[6]), bool(row[7])
    )
