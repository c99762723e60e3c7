"""Conversation history in SQLite: every persisted turn, per session, searchable through FTS5.

Compaction marks rows summarised and stores the running summary on the session; rows are only
deleted by ``forget``.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from flynn.errors import StoreError
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.fts import FtsQueryPlanner, MatchPlan
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.store import (
    MessageMatch,
    MessageRole,
    Neighbour,
    NewMessage,
    Postings,
    SearchHit,
    SessionSummary,
    StoredMessage,
    still_in_prompt,
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
_INSERT_TOOL_STEPS = "INSERT INTO message_tools (message_id, steps) VALUES (?, ?)"
_SAVE_TOOL_STEPS = (
    "INSERT INTO message_tools (message_id, steps) VALUES (?, ?) "
    "ON CONFLICT (message_id) DO UPDATE SET steps = excluded.steps"
)
_RECENT = f"SELECT {_COLUMNS} FROM messages WHERE session = ? AND summarized = 0 ORDER BY id"
_SUMMARY = "SELECT summary FROM sessions WHERE key = ?"
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
# "Excluding" a session leaves out its turns still in its context: its compacted ones are past.
_SEARCH_EXCLUDING = (
    _SEARCH + " AND (m.session != ? OR m.summarized = 1) ORDER BY messages_fts.rank LIMIT ?"
)
_MATCH = f"""
SELECT {_M_COLUMNS}, messages_fts.rank AS rank
FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid
WHERE messages_fts MATCH ? AND messages_fts.rowid >= ? AND {namespace_scope("m.namespace")}
"""
_MATCH_ALL = _MATCH + " ORDER BY messages_fts.rank LIMIT ?"
_MATCH_EXCLUDING = (
    _MATCH + " AND (m.session != ? OR m.summarized = 1) ORDER BY messages_fts.rank LIMIT ?"
)
# A small rowid window around each anchor: the primary key range is the cheapest read there is,
# and a session's turns are nearly consecutive (other sessions' turns may interleave). One
# statement for all anchors reads only what places a row (its session and namespace); the
# neighbours chosen are then read whole, most of them from the cache of decoded rows.
_NEAR = """
SELECT a.value, m.id, m.session, m.namespace
FROM json_each(?) AS a JOIN messages AS m ON m.id BETWEEN a.value - ? AND a.value + ?
"""
_BY_ID = f"SELECT {_COLUMNS} FROM messages WHERE id IN (SELECT value FROM json_each(?))"
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
_BETWEEN_EXCLUDING = _BETWEEN.format(
    columns=_COLUMNS, excluding="AND (session != :exclude OR summarized = 1)"
)
_SUMMARIES = f"""
SELECT key, namespace, summary, summarized_through, updated_at FROM sessions
WHERE {namespace_scope("namespace")} AND summary IS NOT NULL AND summary != ''
ORDER BY updated_at DESC LIMIT ?
"""
_AROUND_WINDOW = 8
"""How far (in message ids) to look for a neighbour of the same session."""
ROW_CACHE_SIZE = 8192
"""Messages kept decoded after a read, by id (a few megabytes): recall reads many of the same
turns again for related messages, and a kept one costs a dict lookup instead of a seek and a
decode."""
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

    def __init__(self, db: Database, *, cached_rows: int = ROW_CACHE_SIZE) -> None:
        self._db = db
        self._planner = FtsQueryPlanner(db, "messages_fts")
        self._wide_planner = FtsQueryPlanner(db, "messages_fts", budget=WIDE_BUDGET)
        self._rows = _CachedRows(db, cached_rows)

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
    ) -> StoredMessage:
        """Stores one message (with the tool steps that led to it, if any) and creates or
        touches its session row, in one transaction."""
        at = encode_time(now)
        with self._db.transaction():
            self._db.execute(_TOUCH_SESSION, (session, namespace, at, at))
            row = self._db.fetchone(_INSERT, (session, namespace, role, content, tokens, at))
            if row is None:
                raise StoreError("message insert returned no row")
            if tool_steps is not None:
                self._db.execute(_INSERT_TOOL_STEPS, (row[0], tool_steps))
        return _message(row)

    def save_tool_steps(self, message_id: int, steps: str) -> None:
        """Stores (or replaces) the tool steps kept with message ``message_id``."""
        self._db.execute(_SAVE_TOOL_STEPS, (message_id, steps))

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
        plan = self._planner.plan(query, namespace_prefix=namespace_prefix)
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
        plan = self._plan(query, wide=wide, namespace_prefix=namespace_prefix)
        if plan is None:
            return []
        match = (plan.expression, plan.min_rowid, *scope_params(namespace_prefix))
        if exclude_session is None:
            rows = self._db.fetchall(_MATCH_ALL, (*match, limit))
        else:
            rows = self._db.fetchall(_MATCH_EXCLUDING, (*match, exclude_session, limit))
        return [MessageMatch(message=_message(row), score=-row["rank"]) for row in rows]

    def postings(
        self,
        query: str,
        *,
        wide: bool = False,
        max_terms: int = 0,
        namespace_prefix: str | None = None,
    ) -> Postings | None:
        """The words ``match`` would search ``query`` for (at most ``max_terms``, the rarest,
        when it is not 0), each with the ids of the messages containing it: in every namespace,
        or with ``namespace_prefix``, those of its namespace root (perhaps more namespaces than
        the prefix; callers still filter). ``None`` when no word occurs. Reads only the index."""
        plan = self._plan(query, wide=wide, max_terms=max_terms, namespace_prefix=namespace_prefix)
        return None if plan is None else self._planner.postings(plan)

    def messages_under(
        self, namespace_prefix: str, ids: Sequence[int], *, exclude_session: str | None = None
    ) -> list[StoredMessage]:
        """The messages with these ids under ``namespace_prefix`` (but ``exclude_session``'s
        turns still in its context), in no particular order."""
        if not ids:
            return []
        root = namespace_prefix.rstrip("/")
        if not root:
            raise ValueError("namespace prefix must not be empty")
        below = root + "/"
        return [
            message
            for message in self._rows.read(ids)
            if (message.namespace == root or message.namespace.startswith(below))
            and not still_in_prompt(message, exclude_session)
        ]

    def _plan(
        self,
        query: str,
        *,
        wide: bool,
        max_terms: int = 0,
        namespace_prefix: str | None = None,
    ) -> MatchPlan | None:
        """The interactive plan; with ``wide``, the wide one when the interactive budget could
        not hold every match of even the rarest word (the plan ranks only the newest): other
        words it leaves out are common ones, which weigh little under bm25 and would cost
        several times as much to rank."""
        plan = self._planner.plan(query, max_terms=max_terms, namespace_prefix=namespace_prefix)
        if wide and plan is not None and plan.is_windowed:
            return self._wide_planner.plan(
                query, max_terms=max_terms, namespace_prefix=namespace_prefix
            )
        return plan

    def around(
        self, namespace_prefix: str, message_ids: Sequence[int], *, radius: int
    ) -> list[Neighbour]:
        """For each id, up to ``radius`` messages of the same session just before and after it
        (looked for within a few ids, so a session interleaved with many others may show fewer),
        under ``namespace_prefix``. Unknown ids are ignored."""
        if radius <= 0 or not message_ids:
            return []
        root, below, after = scope_params(namespace_prefix)

        def in_scope(namespace: str) -> bool:
            return namespace == root or below <= namespace < after

        # A session's turns are mostly consecutive ids: read the nearest ids first (most are
        # cached), and search a window of ids only beside an anchor where another session's
        # turn (or a gap) sits among them.
        anchors = sorted(set(message_ids))
        nearest = [step * place for place in range(1, radius + 1) for step in (-1, 1)]
        known = {
            message.id: message
            for message in self._rows.read(
                [*anchors, *(anchor + offset for anchor in anchors for offset in nearest)]
            )
        }
        found: list[Neighbour] = []
        searched: list[tuple[StoredMessage, int]] = []  # (anchor, side: -1 before, 1 after)
        for anchor_id in anchors:
            anchor = known.get(anchor_id)
            if anchor is None:
                continue
            for step in (-1, 1):
                side = [known.get(anchor_id + step * place) for place in range(1, radius + 1)]
                if all(
                    near is not None and near.session == anchor.session and in_scope(near.namespace)
                    for near in side
                ):
                    found.extend(
                        Neighbour(anchor=anchor_id, offset=step * place, message=near)
                        for place, near in enumerate(side, start=1)
                        if near is not None
                    )
                else:
                    searched.append((anchor, step))
        if searched:
            found.extend(self._search_around(searched, radius, in_scope))
        return found

    def _search_around(
        self,
        sides: Sequence[tuple[StoredMessage, int]],
        radius: int,
        in_scope: Callable[[str], bool],
    ) -> list[Neighbour]:
        """Neighbours on the given sides (-1 before, 1 after) of anchors, placed from a window of
        ids read narrowly (session and namespace only); the chosen ones are then read whole."""
        window = radius + _AROUND_WINDOW
        anchors = {anchor.id: anchor for anchor, _ in sides}
        near = self._db.fetchall(_NEAR, (json.dumps(sorted(anchors)), window, window))
        by_side: dict[tuple[int, int], list[int]] = defaultdict(list)
        for anchor_id, near_id, session, namespace in near:
            if near_id == anchor_id or session != anchors[anchor_id].session:
                continue
            if in_scope(namespace):
                by_side[(anchor_id, 1 if near_id > anchor_id else -1)].append(near_id)
        placed: list[tuple[int, int, int]] = []  # (anchor, offset, id)
        for anchor, step in sides:
            ids = sorted(by_side.get((anchor.id, step), ()), reverse=step < 0)  # nearest first
            placed.extend(
                (anchor.id, step * place, near_id)
                for place, near_id in enumerate(ids[:radius], start=1)
            )
        messages = {message.id: message for message in self._rows.read([p[2] for p in placed])}
        return [
            Neighbour(anchor=anchor_id, offset=offset, message=messages[near_id])
            for anchor_id, offset, near_id in placed
            if near_id in messages
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
        return sorted(self._rows.read(ids), key=_message_id)

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


class _CachedRows:
    """Messages by id as last read, in any namespace; all dropped whenever a stored message may
    have changed (``Database.rewrites``: this connection updated or deleted one, or rolled back,
    or another connection committed). A new message changes none that was read before."""

    def __init__(self, db: Database, size: int) -> None:
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
        read = [_message(row) for row in self._db.fetchall(_BY_ID, (json.dumps(missing),))]
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


def _message_id(message: StoredMessage) -> int:
    return message.id


def _message(row: sqlite3.Row) -> StoredMessage:
    # By position (every query here starts with ``_COLUMNS``): recall decodes hundreds of rows
    # per turn, and that is measurably cheaper than by name.
    return StoredMessage(
        row[0], row[1], row[2], row[3], row[4], row[5], decode_time(row[6]), bool(row[7])
    )
