"""Finding past messages in PostgreSQL as ``flynn.memory.history_search`` finds them in SQLite:
the words planned by the same ``FtsQueryPlanner`` over postings tables (``PostgresTermIndex``),
ranked by FTS5's bm25 computed here from the same statistics FTS5 keeps, so a search returns the
same messages with the same scores; a message's neighbours and the messages of a time window.

Words are FTS5's (``flynn.memory.fts_words``): a word a person typed is searched as the terms
FTS5 cuts it into, a phrase when there are several (checked against the message's own terms).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import datetime

from flynn.memory.bm25 import K1, B
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

COLUMNS = "id, session, namespace, role, content, tokens, created_at, summarized, offline"
"""What every query read by ``decode_message`` selects, by name."""
_SCOPE = "(namespace = %s OR (namespace >= %s AND namespace < %s))"
_IDF_FLOOR = 1e-6
"""FTS5's idf for a word in most rows (``bm25()`` in ``fts5_aux.c``)."""

_BY_ID = f"SELECT {COLUMNS} FROM messages WHERE id = ANY(%s)"
_ROWS = "SELECT message_id FROM message_terms WHERE term = %s AND message_id >= %s"
_ROOT_ROWS = _ROWS + " AND root = %s"
_COUNT = """
SELECT count(*) AS n FROM (
    SELECT DISTINCT message_id FROM message_terms WHERE term = ANY(%s) LIMIT %s
) AS found
"""
_ROOT_COUNT = """
SELECT count(*) AS n FROM (
    SELECT DISTINCT message_id FROM message_terms WHERE term = ANY(%s) AND root = %s LIMIT %s
) AS found
"""
# Each term's rows counted up to the limit, all terms in one statement.
_COUNT_EACH = """
SELECT w.term, (
    SELECT count(*) FROM (SELECT 1 FROM message_terms AS t WHERE t.term = w.term LIMIT %s) AS c
) AS n
FROM unnest(%s::text[]) AS w (term)
"""
_ROOT_COUNT_EACH = """
SELECT w.term, (
    SELECT count(*) FROM (
        SELECT 1 FROM message_terms AS t WHERE t.root = %s AND t.term = w.term LIMIT %s
    ) AS c
) AS n
FROM unnest(%s::text[]) AS w (term)
"""
_ROWS_EACH = """
SELECT term, message_id FROM message_terms WHERE term = ANY(%s) AND message_id >= %s
ORDER BY term, message_id
"""
_ROOT_ROWS_EACH = """
SELECT term, message_id FROM message_terms
WHERE root = %s AND term = ANY(%s) AND message_id >= %s
ORDER BY term, message_id
"""
_ROOT_SIZE = "SELECT count(*) AS n FROM (SELECT 1 FROM messages WHERE root = %s LIMIT %s) AS r"
_WINDOW = """
SELECT min(message_id) AS low FROM (
    SELECT DISTINCT message_id FROM message_terms WHERE term = ANY(%s)
    ORDER BY message_id DESC LIMIT %s
) AS newest
"""
_ROOT_WINDOW = """
SELECT min(message_id) AS low FROM (
    SELECT DISTINCT message_id FROM message_terms WHERE term = ANY(%s) AND root = %s
    ORDER BY message_id DESC LIMIT %s
) AS newest
"""
_NEWEST = "SELECT coalesce(max(id), 0) AS newest FROM messages"
_CONTENTS = "SELECT id, content FROM messages WHERE id = ANY(%s)"
# What FTS5's bm25 reads of the whole index: rows, their terms (its ``ns`` column holds one
# term a row, the namespace root), and how many rows hold each searched term.
_TOTALS = "SELECT coalesce(sum(messages), 0) AS n, coalesce(sum(terms), 0) AS t FROM message_roots"
_HOLDING = "SELECT term, count(*) AS n FROM message_terms WHERE term = ANY(%s) GROUP BY term"
_CANDIDATES = f"""
SELECT {COLUMNS}, terms FROM messages
WHERE id = ANY(%s) AND {_SCOPE} AND NOT offline
"""
_OCCURS = """
SELECT message_id, term, occurs FROM message_terms WHERE term = ANY(%s) AND message_id = ANY(%s)
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


class PostgresTermIndex:
    """``TermIndex`` on ``message_terms``: a word matches the messages holding each of its
    FTS5 terms, in a row when there are several; a word with none matches nothing."""

    def __init__(self, db: PostgresDatabase, words: FtsWords) -> None:
        self._db = db
        self._words = words

    def count(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        if not terms:
            row = self._db.fetchone(_ROOT_SIZE, (root, limit))
            return 0 if row is None else int(row["n"])
        single = self._single_terms(terms)
        if single is None:
            return min(limit, len(self._matching(terms, root, 0)))
        if not single:
            return 0
        if root:
            row = self._db.fetchone(_ROOT_COUNT, (single, root, limit))
        else:
            row = self._db.fetchone(_COUNT, (single, limit))
        return 0 if row is None else int(row["n"])

    def window(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        single = self._single_terms(terms)
        if single is None:
            newest = sorted(self._matching(terms, root, 0), reverse=True)[:limit]
            return min(newest) if newest else 0
        if not single:
            return 0
        if root:
            row = self._db.fetchone(_ROOT_WINDOW, (single, root, limit))
        else:
            row = self._db.fetchone(_WINDOW, (single, limit))
        return 0 if row is None or row["low"] is None else int(row["low"])

    def rows(self, term: str, root: str, min_rowid: int) -> tuple[int, ...]:
        return tuple(sorted(self._matching((term,), root, min_rowid)))

    def count_each(self, terms: tuple[str, ...], root: str, limit: int) -> dict[str, int]:
        single = {word: self._words.phrase(word) for word in terms}
        counts = {word: 0 for word, phrase in single.items() if not phrase}
        wanted = sorted({phrase[0] for phrase in single.values() if len(phrase) == 1})
        if wanted:
            if root:
                rows = self._db.fetchall(_ROOT_COUNT_EACH, (root, limit, wanted))
            else:
                rows = self._db.fetchall(_COUNT_EACH, (limit, wanted))
            found = {row["term"]: int(row["n"]) for row in rows}
            counts.update(
                {word: found[phrase[0]] for word, phrase in single.items() if len(phrase) == 1}
            )
        for word, phrase in single.items():
            if len(phrase) > 1:
                counts[word] = self.count((word,), root, limit)
        return counts

    def rows_each(
        self, terms: tuple[str, ...], root: str, min_rowid: int
    ) -> dict[str, tuple[int, ...]]:
        single = {word: self._words.phrase(word) for word in terms}
        wanted = sorted({phrase[0] for phrase in single.values() if len(phrase) == 1})
        lists: dict[str, list[int]] = {term: [] for term in wanted}
        if wanted:
            if root:
                rows = self._db.fetchall(_ROOT_ROWS_EACH, (root, wanted, min_rowid))
            else:
                rows = self._db.fetchall(_ROWS_EACH, (wanted, min_rowid))
            for row in rows:
                lists[row["term"]].append(int(row["message_id"]))
        return {
            word: tuple(lists[phrase[0]]) if len(phrase) == 1 else self.rows(word, root, min_rowid)
            for word, phrase in single.items()
        }

    def documents(self) -> int:
        row = self._db.fetchone(_NEWEST)
        return 0 if row is None else int(row["newest"])

    def _single_terms(self, words: tuple[str, ...]) -> list[str] | None:
        """The one term of each word (words with none left out), or ``None`` when a word is a
        phrase of several."""
        single: list[str] = []
        for word in words:
            phrase = self._words.phrase(word)
            if len(phrase) > 1:
                return None
            single.extend(phrase)
        return single

    def _matching(self, words: tuple[str, ...], root: str, min_rowid: int) -> set[int]:
        found: set[int] = set()
        for word in words:
            phrase = self._words.phrase(word)
            if not phrase:
                continue
            lists = [set(self._term_rows(term, root, min_rowid)) for term in dict.fromkeys(phrase)]
            holding = set.intersection(*lists)
            if len(phrase) > 1:
                holding = self._with_phrase(holding, phrase)
            found |= holding
        return found

    def _term_rows(self, term: str, root: str, min_rowid: int) -> list[int]:
        if root:
            rows = self._db.fetchall(_ROOT_ROWS, (term, min_rowid, root))
        else:
            rows = self._db.fetchall(_ROWS, (term, min_rowid))
        return [int(row["message_id"]) for row in rows]

    def _with_phrase(self, ids: set[int], phrase: tuple[str, ...]) -> set[int]:
        """Of ``ids``, the messages whose terms hold ``phrase`` in a row."""
        if not ids:
            return ids
        rows = self._db.fetchall(_CONTENTS, (sorted(ids),))
        return {
            int(row["id"])
            for row in rows
            if phrase_count(self._words.tokens(row["content"]), phrase) > 0
        }


def phrase_count(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """How often ``phrase`` occurs in ``tokens``, as consecutive terms."""
    width = len(phrase)
    return sum(
        1
        for start in range(len(tokens) - width + 1)
        if tuple(tokens[start : start + width]) == phrase
    )


class PostgresMessageSearch:
    """The searching reads of ``History`` on ``messages`` and its postings tables."""

    def __init__(self, db: PostgresDatabase, words: FtsWords) -> None:
        self._db = db
        self._words = words
        self._index = index = PostgresTermIndex(db, words)
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
        phrases = {term: self._words.phrase(term) for term in plan.terms}
        occurs = self._occurrences([row["id"] for row in candidates], phrases)
        score = self._scorer(phrases, plan.terms)
        ranked = sorted(
            ((score(row["terms"], occurs.get(row["id"], {})), row) for row in candidates),
            key=lambda pair: (-pair[0], pair[1]["id"]),
        )
        return [(points, decode_message(row)) for points, row in ranked[:limit]]

    def _occurrences(
        self, ids: list[int], phrases: dict[str, tuple[str, ...]]
    ) -> dict[int, dict[str, int]]:
        """How often each searched word occurs in each message (a phrase: as a phrase)."""
        found: dict[int, dict[str, int]] = {}
        single = {term: phrase[0] for term, phrase in phrases.items() if len(phrase) == 1}
        if single:
            rows = self._db.fetchall(_OCCURS, (sorted(set(single.values())), ids))
            by_term: dict[tuple[int, str], int] = {
                (int(row["message_id"]), row["term"]): int(row["occurs"]) for row in rows
            }
            for message_id in ids:
                found[message_id] = {
                    word: by_term.get((message_id, term), 0) for word, term in single.items()
                }
        longer = {term: phrase for term, phrase in phrases.items() if len(phrase) > 1}
        if longer:
            for row in self._db.fetchall(_CONTENTS, (ids,)):
                tokens = self._words.tokens(row["content"])
                counts = found.setdefault(int(row["id"]), {})
                for word, phrase in longer.items():
                    counts[word] = phrase_count(tokens, phrase)
        return found

    def _scorer(
        self, phrases: dict[str, tuple[str, ...]], words: tuple[str, ...]
    ) -> Callable[[int, dict[str, int]], float]:
        """FTS5's bm25 (``fts5_aux.c``) for a row of so many terms and so many occurrences of
        each word, with the index's statistics, in FTS5's order of arithmetic: equal scores."""
        totals = self._db.fetchone(_TOTALS)
        rows = 0 if totals is None else int(totals["n"])
        # Each row also holds its namespace root's token in FTS5's ``ns`` column.
        average = (int(totals["t"]) + rows) / rows if totals is not None and rows else 1.0
        holding = self._holding(phrases)
        idf: dict[str, float] = {}
        for word in words:
            value = math.log((rows - holding[word] + 0.5) / (holding[word] + 0.5))
            idf[word] = value if value > 0.0 else _IDF_FLOOR

        def score(terms: int, occurs: dict[str, int]) -> float:
            length = terms + 1  # the ``ns`` token
            total = 0.0
            for word in words:
                freq = float(occurs.get(word, 0))
                total += idf[word] * (
                    (freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / average))
                )
            return total

        return score

    def _holding(self, phrases: dict[str, tuple[str, ...]]) -> dict[str, int]:
        """How many messages in the whole index hold each word (FTS5's ``nHit``)."""
        single = {term: phrase[0] for term, phrase in phrases.items() if len(phrase) == 1}
        counts: dict[str, int] = {}
        if single:
            rows = self._db.fetchall(_HOLDING, (sorted(set(single.values())),))
            counts = {row["term"]: int(row["n"]) for row in rows}
        index = self._index
        return {
            word: counts.get(phrase[0], 0)
            if len(phrase) == 1
            else (len(index.rows(word, "", 0)) if phrase else 0)
            for word, phrase in phrases.items()
        }

    def _excerpt(self, content: str, plan: MatchPlan) -> str:
        return self._words.snippet(content, fts5_expression(plan.terms, ""), EXCERPT_TOKENS)
