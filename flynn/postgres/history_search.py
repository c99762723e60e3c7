"""Finding past messages in PostgreSQL as ``flynn.memory.history_search`` finds them in SQLite:
the words planned by the same ``FtsQueryPlanner`` over postings tables (``PostgresTermIndex``),
ranked by FTS5's bm25 computed here from the same statistics FTS5 keeps, so a search returns the
same messages with the same scores; a message's neighbours and the messages of a time window.

Words are FTS5's (``flynn.memory.fts_words``): a word a person typed is searched as the terms
FTS5 cuts it into, a phrase when there are several (checked against the message's own terms).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from datetime import datetime

from flynn.memory.fts import FtsQueryPlanner, MatchPlan, fts5_expression
from flynn.memory.fts_words import FtsWords
from flynn.memory.history_search import (
    EXCERPT_TOKENS,
    WIDE_BUDGET,
    MessagePlanners,
    NearRow,
    messages_under,
    neighbours,
    window_rows,
)
from flynn.memory.namespaces import scope_params
from flynn.memory.store import (
    MessageMatch,
    Neighbour,
    Postings,
    SearchHit,
    StoredMessage,
    still_in_prompt,
)
from flynn.postgres.database import PostgresDatabase, Row, aware, utc
from flynn.postgres.postings import PostgresTermIndex, PostingsTable, fts5_bm25

MESSAGE_POSTINGS = PostingsTable("message_terms", "message_id", "messages", ("content",))

COLUMNS = "id, session, namespace, role, content, tokens, created_at, summarized, offline"
"""What every query read by ``decode_message`` selects, by name."""
_SCOPE = "(namespace = %s OR (namespace >= %s AND namespace < %s))"

_BY_ID = f"SELECT {COLUMNS} FROM messages WHERE id = ANY(%s)"
# What FTS5's bm25 reads of the whole index: rows and their terms (its ``ns`` column holds one
# term a row, the namespace root).
_TOTALS = "SELECT coalesce(sum(messages), 0) AS n, coalesce(sum(terms), 0) AS t FROM message_roots"
_CANDIDATES = f"""
SELECT {COLUMNS}, terms FROM messages
WHERE id = ANY(%s) AND {_SCOPE} AND NOT offline
"""
_NEAR = """
SELECT a.anchor, m.id, m.session, m.namespace
FROM unnest(%s::bigint[]) AS a (anchor)
JOIN messages AS m ON m.id BETWEEN a.anchor - %s AND a.anchor + %s
"""
_BETWEEN = """
(SELECT {columns} FROM messages
 WHERE namespace = %(root)s AND created_at >= %(start)s AND created_at < %(end)s {excluding}
 ORDER BY created_at DESC, id DESC LIMIT %(limit)s)
UNION ALL
(SELECT {columns} FROM messages
 WHERE namespace >= %(below)s AND namespace < %(after)s
    AND created_at >= %(start)s AND created_at < %(end)s {excluding}
 ORDER BY created_at DESC, id DESC LIMIT %(limit)s)
ORDER BY created_at DESC, id DESC LIMIT %(limit)s
"""
_BETWEEN_ALL = _BETWEEN.format(columns=COLUMNS, excluding="")
_BETWEEN_EXCLUDING = _BETWEEN.format(
    columns=COLUMNS, excluding="AND (session != %(exclude)s OR summarized)"
)


def decode_message(row: Row) -> StoredMessage:
    return StoredMessage(
        int(row["id"]),
        row["session"],
        row["namespace"],
        row["role"],
        row["content"],
        int(row["tokens"]),
        utc(row["created_at"]),
        bool(row["summarized"]),
        bool(row["offline"]),
    )


def read_messages(db: PostgresDatabase, ids: Iterable[int]) -> list[StoredMessage]:
    """The messages with these ids that exist, each once, in no particular order."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return []
    return [decode_message(row) for row in db.fetchall(_BY_ID, (wanted,))]


class PostgresMessageSearch:
    """The searching reads of ``History`` on ``messages`` and its postings tables."""

    def __init__(self, db: PostgresDatabase, words: FtsWords) -> None:
        self._db = db
        self._words = words
        self._index = index = PostgresTermIndex(db, words, MESSAGE_POSTINGS)
        self._planners = MessagePlanners(
            FtsQueryPlanner.on(index), FtsQueryPlanner.on(index, budget=WIDE_BUDGET)
        )

    def read(self, ids: Iterable[int]) -> list[StoredMessage]:
        return read_messages(self._db, ids)

    def forget_counts(self) -> None:
        self._planners.forget_counts()

    def search(
        self,
        namespace_prefix: str,
        query: str,
        *,
        limit: int,
        exclude_session: str | None = None,
    ) -> list[SearchHit]:
        """``SqliteMessageSearch.search``: the same messages, scores, order and excerpts (FTS5's
        own ``snippet``, run on the message alone)."""
        if limit <= 0:
            return []
        plan = self._planners.plan(query, wide=False, namespace_prefix=namespace_prefix)
        if plan is None:
            return []
        ranked = self._ranked(plan, namespace_prefix, exclude_session, limit)
        return [
            SearchHit(message=message, excerpt=self._excerpt(message.content, plan), score=score)
            for score, message in ranked
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
        """``SqliteMessageSearch.match``: the same messages, scores and order."""
        if limit <= 0:
            return []
        plan = self._planners.plan(query, wide=wide, namespace_prefix=namespace_prefix)
        if plan is None:
            return []
        ranked = self._ranked(plan, namespace_prefix, exclude_session, limit)
        return [MessageMatch(message=message, score=score) for score, message in ranked]

    def postings(
        self,
        query: str,
        *,
        wide: bool = False,
        max_terms: int = 0,
        namespace_prefix: str | None = None,
        search: Hashable = None,
    ) -> Postings | None:
        """``SqliteMessageSearch.postings``: the same lists and counts."""
        return self._planners.postings(
            query, wide=wide, max_terms=max_terms, namespace_prefix=namespace_prefix, search=search
        )

    def messages_under(
        self, namespace_prefix: str, ids: Sequence[int], *, exclude_session: str | None = None
    ) -> list[StoredMessage]:
        return messages_under(self.read, namespace_prefix, ids, exclude_session)

    def around(
        self, namespace_prefix: str, message_ids: Sequence[int], *, radius: int
    ) -> list[Neighbour]:
        return neighbours(self.read, self._near, namespace_prefix, message_ids, radius)

    def between(
        self,
        namespace_prefix: str,
        start: datetime,
        end: datetime,
        *,
        limit: int,
        exclude_session: str | None = None,
    ) -> list[StoredMessage]:
        rows = window_rows(
            self._db,
            (_BETWEEN_ALL, _BETWEEN_EXCLUDING),
            aware,
            namespace_prefix,
            start,
            end,
            limit,
            exclude_session,
        )
        return [decode_message(row) for row in rows]

    def _near(self, anchors: Sequence[int], window: int) -> list[NearRow]:
        rows = self._db.fetchall(_NEAR, (list(anchors), window, window))
        return [(row["anchor"], row["id"], row["session"], row["namespace"]) for row in rows]

    def _ranked(
        self, plan: MatchPlan, prefix: str, exclude: str | None, limit: int
    ) -> list[tuple[float, StoredMessage]]:
        """The best ``limit`` messages ``plan`` matches under ``prefix``, scored as FTS5's
        ``bm25()`` scores them, best first (the older first among equals, as FTS5 returns them)."""
        index = self._index
        matched = set().union(*index.rows_each(plan.terms, plan.root, plan.min_rowid).values())
        if not matched:
            return []
        candidates = [
            row
            for row in self._db.fetchall(_CANDIDATES, (sorted(matched), *scope_params(prefix)))
            if not still_in_prompt(decode_message(row), exclude)
        ]
        if not candidates:
            return []
        occurs = index.occurrences(plan.terms, [row["id"] for row in candidates])
        totals = self._db.fetchone(_TOTALS)
        rows = 0 if totals is None else int(totals["n"])
        # Each row also holds its namespace root's token in FTS5's ``ns`` column.
        tokens = 0 if totals is None else int(totals["t"]) + rows
        score = fts5_bm25(rows, tokens, index.holding(plan.terms), plan.terms)
        ranked = sorted(
            ((score(row["terms"] + 1, occurs.get(row["id"], {})), row) for row in candidates),
            key=lambda pair: (-pair[0], pair[1]["id"]),
        )
        return [(points, decode_message(row)) for points, row in ranked[:limit]]

    def _excerpt(self, content: str, plan: MatchPlan) -> str:
        return self._words.snippet(content, fts5_expression(plan.terms, ""), EXCERPT_TOKENS)
