"""Finding past messages in SQLite: full-text search (FTS5, through ``FtsQueryPlanner``), the
index's postings for recall's own ranking, a message's neighbours in its session, and the
messages of a time window. ``SqliteHistory`` answers these reads of ``History`` through it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import datetime
from typing import Any

from flynn.memory.database import Database, encode_time
from flynn.memory.fts import Fts5Index, FtsQueryPlanner, GrowingLists, MatchPlan
from flynn.memory.message_rows import COLUMNS, M_COLUMNS, CachedMessages, decode_message
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.sql import Sql
from flynn.memory.store import (
    MessageMatch,
    Neighbour,
    Postings,
    SearchHit,
    StoredMessage,
    still_in_prompt,
)

EXCERPT_TOKENS = 16
"""Words around the best match in a search excerpt (FTS5 allows 1..64)."""
WIDE_BUDGET = 3000
"""Rows ranked by a recall search (``match(wide=True)``) whose rarest word is too common for the
interactive budget: at ~1.5 µs each, a few milliseconds."""
_AROUND_WINDOW = 8
"""How far (in message ids) to look for a neighbour of the same session."""

# CROSS JOIN keeps the FTS table as the outer loop (see facts.py); FTS5 sorts by ``rank`` (bm25)
# itself, so ``snippet`` is only computed for the rows that survive the filters and LIMIT.
_SEARCH = f"""
SELECT {M_COLUMNS},
       snippet(messages_fts, 0, '[', ']', '…', {EXCERPT_TOKENS}) AS excerpt,
       messages_fts.rank AS rank
FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid
WHERE messages_fts MATCH ? AND messages_fts.rowid >= ? AND {namespace_scope("m.namespace")}
    AND m.offline = 0
"""
_SEARCH_ALL = _SEARCH + " ORDER BY messages_fts.rank LIMIT ?"
# "Excluding" a session leaves out its turns still in its context: its compacted ones are past.
_SEARCH_EXCLUDING = (
    _SEARCH + " AND (m.session != ? OR m.summarized = 1) ORDER BY messages_fts.rank LIMIT ?"
)
_MATCH = f"""
SELECT {M_COLUMNS}, messages_fts.rank AS rank
FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid
WHERE messages_fts MATCH ? AND messages_fts.rowid >= ? AND {namespace_scope("m.namespace")}
    AND m.offline = 0
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
_BETWEEN_ALL = _BETWEEN.format(columns=COLUMNS, excluding="")
_BETWEEN_EXCLUDING = _BETWEEN.format(
    columns=COLUMNS, excluding="AND (session != :exclude OR summarized = 1)"
)


class SqliteMessageSearch:
    """The searching reads of ``History`` on ``messages`` and ``messages_fts``, sharing the
    history's decoded rows (``rows``)."""

    def __init__(self, db: Database, rows: CachedMessages) -> None:
        self._db = db
        # Messages are appended turn after turn; an edit or a deletion moves ``rewrites``.
        db.watch_rewrites("messages")
        index = GrowingLists(Fts5Index(db, "messages_fts"), lambda: db.rewrites("messages"))
        self._planners = MessagePlanners(
            FtsQueryPlanner.on(index), FtsQueryPlanner.on(index, budget=WIDE_BUDGET)
        )
        self._rows = rows

    def forget_counts(self) -> None:
        """Drops what the planners learnt about common words; call when messages are deleted."""
        self._planners.forget_counts()

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
        plan = self._planners.plan(query, wide=False, namespace_prefix=namespace_prefix)
        if plan is None:
            return []
        match = (plan.expression, plan.min_rowid, *scope_params(namespace_prefix))
        if exclude_session is None:
            rows = self._db.fetchall(_SEARCH_ALL, (*match, limit))
        else:
            rows = self._db.fetchall(_SEARCH_EXCLUDING, (*match, exclude_session, limit))
        return [
            SearchHit(message=decode_message(row), excerpt=row["excerpt"], score=-row["rank"])
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
        plan = self._planners.plan(query, wide=wide, namespace_prefix=namespace_prefix)
        if plan is None:
            return []
        match = (plan.expression, plan.min_rowid, *scope_params(namespace_prefix))
        if exclude_session is None:
            rows = self._db.fetchall(_MATCH_ALL, (*match, limit))
        else:
            rows = self._db.fetchall(_MATCH_EXCLUDING, (*match, exclude_session, limit))
        return [MessageMatch(message=decode_message(row), score=-row["rank"]) for row in rows]

    def postings(
        self,
        query: str,
        *,
        wide: bool = False,
        max_terms: int = 0,
        namespace_prefix: str | None = None,
        search: Hashable = None,
    ) -> Postings | None:
        """The words ``match`` would search ``query`` for (at most ``max_terms``, the rarest,
        when it is not 0), each with the ids of the messages containing it: in every namespace,
        or with ``namespace_prefix``, those of its namespace root (perhaps more namespaces than
        the prefix; callers still filter). ``None`` when no word occurs. Reads only the index.

        Calls with the same ``search`` (any object standing for one question's searches: the
        whole question and its parts, ``flynn.recall.comparison``) keep what they counted and
        read, words found in no row included, for as long as the next ``search`` does not
        start; without one, nothing is kept but the planner's own counts."""
        return self._planners.postings(
            query,
            wide=wide,
            max_terms=max_terms,
            namespace_prefix=namespace_prefix,
            search=search,
        )

    def messages_under(
        self, namespace_prefix: str, ids: Sequence[int], *, exclude_session: str | None = None
    ) -> list[StoredMessage]:
        """The messages with these ids under ``namespace_prefix`` (but ``exclude_session``'s
        turns still in its context), in no particular order."""
        return messages_under(self._rows.read, namespace_prefix, ids, exclude_session)

    def around(
        self, namespace_prefix: str, message_ids: Sequence[int], *, radius: int
    ) -> list[Neighbour]:
        """For each id, up to ``radius`` messages of the same session just before and after it
        (looked for within a few ids, so a session interleaved with many others may show fewer),
        under ``namespace_prefix``. Unknown ids are ignored."""
        return neighbours(self._rows.read, self._near, namespace_prefix, message_ids, radius)

    def _near(self, anchors: Sequence[int], window: int) -> Iterable[NearRow]:
        return self._db.fetchall(_NEAR, (json.dumps(list(anchors)), window, window))

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
        rows = window_rows(
            self._db,
            (_BETWEEN_ALL, _BETWEEN_EXCLUDING),
            encode_time,
            namespace_prefix,
            start,
            end,
            limit,
            exclude_session,
        )
        return [decode_message(row) for row in rows]


Read = Callable[[Iterable[int]], list[StoredMessage]]
"""The messages with these ids that exist, each once, in no particular order."""
NearRow = Sequence[Any]
"""``(anchor id, id, session, namespace)`` of a message within a window of ids of an anchor."""
Near = Callable[[Sequence[int], int], Iterable[NearRow]]
"""Every message within ``window`` ids of each of the anchors (ascending), placed narrowly."""


def messages_under(
    read: Read, namespace_prefix: str, ids: Sequence[int], exclude_session: str | None
) -> list[StoredMessage]:
    """``History.messages_under`` on any store's ``read``."""
    if not ids:
        return []
    root = namespace_prefix.rstrip("/")
    if not root:
        raise ValueError("namespace prefix must not be empty")
    below = root + "/"
    return [
        message
        for message in read(ids)
        if (message.namespace == root or message.namespace.startswith(below))
        and not still_in_prompt(message, exclude_session)
    ]


def neighbours(
    read: Read, near: Near, namespace_prefix: str, message_ids: Sequence[int], radius: int
) -> list[Neighbour]:
    """``History.around`` on any store's ``read`` and ``near``."""
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
        for message in read(
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
        found.extend(_search_around(read, near, searched, radius, in_scope))
    return found


def _search_around(
    read: Read,
    near: Near,
    sides: Sequence[tuple[StoredMessage, int]],
    radius: int,
    in_scope: Callable[[str], bool],
) -> list[Neighbour]:
    """Neighbours on the given sides (-1 before, 1 after) of anchors, placed from a window of
    ids read narrowly (session and namespace only); the chosen ones are then read whole."""
    window = radius + _AROUND_WINDOW
    anchors = {anchor.id: anchor for anchor, _ in sides}
    by_side: dict[tuple[int, int], list[int]] = defaultdict(list)
    for anchor_id, near_id, session, namespace in near(sorted(anchors), window):
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
    messages = {message.id: message for message in read([p[2] for p in placed])}
    return [
        Neighbour(anchor=anchor_id, offset=offset, message=messages[near_id])
        for anchor_id, offset, near_id in placed
        if near_id in messages
    ]


class MessagePlanners:
    """The words a search of messages looks for, on any ``TermIndex``: an interactive
    planner (``CANDIDATE_BUDGET``) and a wide one for recall (``WIDE_BUDGET``) over the same
    index."""

    def __init__(self, interactive: FtsQueryPlanner, wide: FtsQueryPlanner) -> None:
        self._planner = interactive
        self._wide_planner = wide

    def forget_counts(self) -> None:
        """Drops what the planners learnt about common words; call when messages are deleted."""
        self._planner.forget_counts()
        self._wide_planner.forget_counts()

    def plan(
        self,
        query: str,
        *,
        wide: bool,
        max_terms: int = 0,
        namespace_prefix: str | None = None,
        search: Hashable = None,
    ) -> MatchPlan | None:
        """The interactive plan; with ``wide``, the wide one when the interactive budget could
        not hold every match of even the rarest word (the plan ranks only the newest): other
        words it leaves out are common ones, which weigh little under bm25 and would cost
        several times as much to rank. ``wide`` (recall's reads) also plans a namespace root
        holding a minority of the table on its own rows (``FtsQueryPlanner.plan(own_root)``)."""
        plan = self._planner.plan(
            query,
            generation=search,
            max_terms=max_terms,
            namespace_prefix=namespace_prefix,
            own_root=wide,
        )
        if wide and plan is not None and plan.is_windowed:
            return self._wide_planner.plan(
                query,
                generation=search,
                max_terms=max_terms,
                namespace_prefix=namespace_prefix,
                own_root=True,
            )
        return plan

    def postings(
        self,
        query: str,
        *,
        wide: bool = False,
        max_terms: int = 0,
        namespace_prefix: str | None = None,
        search: Hashable = None,
    ) -> Postings | None:
        """``History.postings``."""
        plan = self.plan(
            query,
            wide=wide,
            max_terms=max_terms,
            namespace_prefix=namespace_prefix,
            search=search,
        )
        return None if plan is None else self._planner.postings(plan, generation=search)


def window_rows(
    db: Sql,
    statements: tuple[str, str],
    time: Callable[[datetime], object],
    namespace_prefix: str,
    start: datetime,
    end: datetime,
    limit: int,
    exclude_session: str | None,
) -> Sequence[Any]:
    """``History.between``'s rows on any backend: ``statements`` for every session and for
    all but ``exclude_session``'s turns still in its context (parameters ``root``, ``below``,
    ``after``, ``start``, ``end``, ``limit`` and ``exclude``), times written by ``time``."""
    if limit <= 0 or end <= start:
        return []
    root, below, after = scope_params(namespace_prefix)
    params = {
        "root": root,
        "below": below,
        "after": after,
        "start": time(start),
        "end": time(end),
        "limit": limit,
    }
    if exclude_session is None:
        return db.fetchall(statements[0], params)
    return db.fetchall(statements[1], {**params, "exclude": exclude_session})
