"""Turns what a person typed into a safe FTS5 query (quoted words joined with OR, never raw
syntax), choosing the words so that ranking stays cheap on a large table.

Shared by fact and message search, so both treat user text the same way.
"""

from __future__ import annotations

import bisect
import functools
import re
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Protocol

from flynn.memory.database import Database
from flynn.memory.namespaces import namespace_root, namespace_token
from flynn.memory.store import Postings

# Words too common to say anything about relevance; matching them only costs time, because every
# match of an OR term must be ranked.
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing don down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just let me more most my myself no nor not now of off on once only or other our ours ourselves
    out over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which while
    who whom why will with would you your yours yourself yourselves
    doesn didn isn aren wasn weren won ll ve re
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

MAX_TERMS = 24
"""Longer text (a pasted paragraph) keeps its first distinct terms; each term widens the search."""

_WORD = re.compile(r"\w+")


def search_terms(text: str) -> list[str]:
    """Distinct lower-case words of ``text`` worth searching for, in order of appearance."""
    # One turn asks for the same few texts' words several times (recall's searches of
    # messages, facts and team documents, and its packing): a short one is read once.
    return list(_remembered_terms(text) if len(text) <= _REMEMBERED_CHARS else _terms(text))


_REMEMBERED_CHARS = 2_000


@functools.lru_cache(maxsize=256)
def _remembered_terms(text: str) -> tuple[str, ...]:
    return _terms(text)


def _terms(text: str) -> tuple[str, ...]:
    terms: list[str] = []
    seen: set[str] = set()
    for match in _WORD.finditer(text.lower()):
        # unicode61 splits on underscores too; so do we, so a term never becomes a phrase.
        for word in match.group().split("_"):
            if len(word) < 2 or word in STOPWORDS or word in seen:
                continue
            seen.add(word)
            terms.append(word)
            if len(terms) == MAX_TERMS:
                return tuple(terms)
    return tuple(terms)


def _or_of(terms: list[str]) -> str:
    return " OR ".join(quoted(term) for term in terms)


def _scoped(scope: str, expression: str) -> str:
    """``expression`` among the rows ``scope`` (an FTS5 condition, or empty for all) allows."""
    return f"{scope} AND ({expression})" if scope else expression


def quoted(term: str) -> str:
    """``term`` as an FTS5 query matching that one word."""
    # Double quotes make a term a literal string: FTS5 operators (AND, NOT, NEAR, *, ^, :) inside
    # it are plain text. ``\w`` never contains '"', but escape it anyway.
    return '"' + term.replace('"', '""') + '"'


CANDIDATE_BUDGET = 300
"""Most rows a search ranks. bm25 costs about 1.5 µs per matching row, so this bounds a search
under a millisecond however large the history grows."""

_MAX_COMMON_WORDS = 20_000
_MAX_COUNTED_WORDS = 50_000
_COUNT_TTL_SECONDS = 300.0
"""Bound on the cache of words known to be common (a few hundred in practice)."""
_MAX_KEPT = 8192
"""Counts and posting lists kept for a table that changes seldom (``generation=...``)."""


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """What to run: an FTS5 ``MATCH`` expression (an OR of ``terms``, within the namespace root
    ``root`` when it is not empty), restricted to rowids ``>= min_rowid``."""

    expression: str
    min_rowid: int = 0
    terms: tuple[str, ...] = ()
    root: str = ""
    """The namespace root (``namespace_root``) whose rows alone are searched, or empty for every
    namespace."""
    documents: int = 0
    """The rows in ``root`` when the plan is the root's own (``plan(own_root=True)``): what a
    word's rarity is measured against. 0: the table's."""
    absent: tuple[str, ...] = ()
    """Words of the text counted in no row (of ``root``, or of the table): not searched because
    nothing holds them, unlike the words left out as too common for the budget."""

    @property
    def is_windowed(self) -> bool:
        """Whether only the newest matches are ranked (even the rarest word matched too many)."""
        return self.min_rowid > 0


class TermIndex(Protocol):
    """What ``FtsQueryPlanner`` reads of a full-text index. ``terms`` are words as a person
    typed them (``search_terms``), matched as the index cuts and stems words; ``root`` is a
    namespace root whose rows alone are read, or empty for every row."""

    def count(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        """Rows holding any of ``terms`` (every row of ``root`` when there are none), counted
        up to ``limit``."""
        ...

    def window(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        """The lowest id among the newest ``limit`` rows holding any of ``terms``; 0 for none."""
        ...

    def rows(self, term: str, root: str, min_rowid: int) -> tuple[int, ...]:
        """The ids of the rows holding ``term`` from ``min_rowid`` on, ascending."""
        ...

    def count_each(self, terms: tuple[str, ...], root: str, limit: int) -> dict[str, int]:
        """``count`` of each term alone: an index behind a network asks once for them all."""
        ...

    def rows_each(
        self, terms: tuple[str, ...], root: str, min_rowid: int
    ) -> dict[str, tuple[int, ...]]:
        """``rows`` of each term, as ``count_each`` asks."""
        ...

    def documents(self) -> int:
        """The newest row's id, standing for the row count (deleted rows only make words look
        rarer)."""
        ...


def fts5_expression(terms: tuple[str, ...], root: str) -> str:
    """The FTS5 query for rows holding any of ``terms`` within ``root`` (``""``: anywhere)."""
    scope = "" if not root else f"ns:{quoted(root_token(root))}"
    if not terms:
        return scope
    return _scoped(scope, _or_of(list(terms)))


class Fts5Index:
    """``TermIndex`` on an FTS5 table with an ``ns`` column (the root's ``namespace_token``)."""

    def __init__(self, db: Database, table: str) -> None:
        if not table.isidentifier():
            raise ValueError(f"not a table name: {table!r}")
        self._db = db
        self._count_sql = (
            f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)"
        )
        self._window_sql = (
            f"SELECT min(rowid) FROM (SELECT rowid FROM {table} WHERE {table} MATCH ? "
            "ORDER BY rowid DESC LIMIT ?)"
        )
        self._postings_sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid >= ?"
        self._documents_sql = f"SELECT rowid FROM {table} ORDER BY rowid DESC LIMIT 1"

    def count(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        row = self._db.fetchone(self._count_sql, (fts5_expression(terms, root), limit))
        return 0 if row is None else int(row[0])

    def window(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        row = self._db.fetchone(self._window_sql, (fts5_expression(terms, root), limit))
        return int(row[0]) if row is not None and row[0] is not None else 0

    def rows(self, term: str, root: str, min_rowid: int) -> tuple[int, ...]:
        rows = self._db.fetchall(self._postings_sql, (fts5_expression((term,), root), min_rowid))
        return tuple(row[0] for row in rows)

    def count_each(self, terms: tuple[str, ...], root: str, limit: int) -> dict[str, int]:
        return {term: self.count((term,), root, limit) for term in terms}

    def rows_each(
        self, terms: tuple[str, ...], root: str, min_rowid: int
    ) -> dict[str, tuple[int, ...]]:
        return {term: self.rows(term, root, min_rowid) for term in terms}

    def documents(self) -> int:
        row = self._db.fetchone(self._documents_sql)
        return 0 if row is None else int(row[0])


_MAX_GROWN_ROWS = 500_000
"""Row ids ``GrowingLists`` keeps at most (4 MB or so), before it starts afresh."""


class GrowingLists:
    """A ``TermIndex`` that keeps each word's posting list between searches, for a table
    whose rows are only appended while ``stamp`` stays the same (``Database.rewrites``: it
    moves at an update or delete on this connection and at any other connection's commit).

    A list asked for again is the one read before and the rows stored since, read past the
    newest it holds: the words of this turn's message were mostly searched in the last
    turns, so a search reads what those turns stored rather than every list whole again.
    Row ids only grow while nothing is deleted, so what was read stays exactly what a new
    read would give."""

    def __init__(self, index: TermIndex, stamp: Callable[[], Hashable]) -> None:
        self._index = index
        self._stamp = stamp
        self._stamped: Hashable = None
        # (root, word) -> (the lowest row id the list was read from, its rows ascending)
        self._lists: dict[tuple[str, str], tuple[int, tuple[int, ...]]] = {}
        self._kept_rows = 0

    def count(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        return self._index.count(terms, root, limit)

    def window(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        return self._index.window(terms, root, limit)

    def count_each(self, terms: tuple[str, ...], root: str, limit: int) -> dict[str, int]:
        return self._index.count_each(terms, root, limit)

    def documents(self) -> int:
        return self._index.documents()

    def rows(self, term: str, root: str, min_rowid: int) -> tuple[int, ...]:
        return self.rows_each((term,), root, min_rowid)[term]

    def rows_each(
        self, terms: tuple[str, ...], root: str, min_rowid: int
    ) -> dict[str, tuple[int, ...]]:
        stamp = self._stamp()
        if stamp != self._stamped or self._kept_rows > _MAX_GROWN_ROWS:
            self._lists.clear()
            self._kept_rows = 0
            self._stamped = stamp
        found = {}
        for term in terms:
            key = (root, term)
            kept = self._lists.get(key)
            if kept is None or kept[0] > min_rowid:
                rows = self._index.rows(term, root, min_rowid)
                self._kept_rows += len(rows)
            else:
                start, rows = kept
                added = self._index.rows(term, root, rows[-1] + 1 if rows else start)
                self._kept_rows += len(added)
                rows += added
                if start < min_rowid:  # a window that moved on: the rows before it go
                    rows = rows[bisect.bisect_left(rows, min_rowid) :]
            self._lists[key] = (min_rowid, rows)
            found[term] = rows
        return found


class FtsQueryPlanner:
    """Chooses which words of a text to search for in one full-text index, keeping ranking
    cheap.

    FTS5 ranks every row that matches before it can return the best few, and an OR of common
    words matches much of the table. So the words are counted first (each count stops at the
    budget) and searched rarest first, adding words while their matches fit ``budget``. Rare words
    carry the most relevance under bm25 anyway. When even the rarest word matches more rows than
    the budget, only its most recent ``budget`` matches are ranked.

    Given a namespace prefix that lies within one namespace root (``scope.namespace_root``), words
    are counted, windowed and listed among that root's rows only (the table's ``ns`` column), so
    a small namespace is not crowded out by a large one and its searches cost what it holds.

    ``FtsQueryPlanner(db, table)`` plans on an FTS5 table; ``FtsQueryPlanner.on(index)`` on any
    ``TermIndex`` (PostgreSQL's postings), choosing the same words from the same counts.
    """

    def __init__(self, db: Database, table: str, *, budget: int = CANDIDATE_BUDGET) -> None:
        self._start(Fts5Index(db, table), budget)

    @classmethod
    def on(cls, index: TermIndex, *, budget: int = CANDIDATE_BUDGET) -> FtsQueryPlanner:
        """A planner reading ``index`` instead of an FTS5 table."""
        planner = cls.__new__(cls)
        planner._start(index, budget)
        return planner

    def _start(self, index: TermIndex, budget: int) -> None:
        self._index = index
        self._budget = budget
        self._common: set[tuple[str, str]] = set()
        # Counts of words that occur, reused for a while: a count that has grown since only makes
        # the search rank a few more rows. Absent words are never cached, so a word is searchable
        # the moment it is stored.
        self._counts: dict[tuple[str, str], tuple[int, float]] = {}
        # Rows of each namespace root (``None``: most of the table), reused for a while.
        self._roots: dict[str, tuple[int | None, float]] = {}
        self._kept = _Kept(None)

    def forget_counts(self) -> None:
        """Drops what was learnt about common words; call after deleting rows."""
        self._common.clear()
        self._counts.clear()
        self._roots.clear()
        self._kept = _Kept(None)

    def plan(
        self,
        text: str,
        *,
        generation: Hashable = None,
        max_terms: int = 0,
        namespace_prefix: str | None = None,
        own_root: bool = False,
    ) -> MatchPlan | None:
        """The search for ``text``, or ``None`` when no word of it occurs in the table; with
        ``max_terms``, for no more than that many of its words (the rarest).

        With ``own_root`` and a ``namespace_prefix`` whose root holds less than half the
        table's rows (one person among many), words are counted, chosen and listed among that
        root's rows from the start, and their rarity is measured there (``MatchPlan.documents``):
        in a store shared by many people, the words another person uses often do not crowd
        this person's out of the search's budget, nor make them look common.

        With a ``generation`` (anything that differs once the table's rows changed, such as
        ``Facts.generation()``), what was counted is kept for as long as it stays the same, and
        ``postings`` with the same generation keeps the lists: for a table that changes seldom,
        most searches then read nothing from the index.

        With ``namespace_prefix``, when the plan for every namespace would rank only the newest
        matches (which may all be other namespaces'), words are counted and windowed among the
        rows of the prefix's namespace root instead; the caller still filters rows by namespace.
        Otherwise every match is ranked anyway, and scoping would only cost a merge with the
        root's (possibly huge) list of rows."""
        kept = self._keep(generation)
        if own_root and namespace_prefix is not None:
            root = _single_root(namespace_prefix)
            rows = self._minority_rows(root) if root else None
            if rows is not None:
                own = self._plan(text, kept, max_terms, root)
                return None if own is None else replace(own, documents=rows)
        plan = self._plan(text, kept, max_terms, "")
        if plan is None or not plan.is_windowed or namespace_prefix is None:
            return plan
        root = _single_root(namespace_prefix)
        if not root:
            return plan
        return self._plan(text, kept, max_terms, root)

    def _plan(self, text: str, kept: _Kept | None, max_terms: int, root: str) -> MatchPlan | None:
        counted = []
        absent: list[str] = []
        words = search_terms(text)
        fetched = self._fetch_counts(words, root, kept)

        def count_of(key: tuple[str, str]) -> int:
            known = fetched.get(key)
            return self._count(key) if known is None else known

        for position, term in enumerate(words):
            key = (root, term)
            count = count_of(key) if kept is None else kept.count(key, count_of)
            if count:
                counted.append((count, position, term))
            else:
                absent.append(term)
        if not counted:
            return None
        counted.sort()
        chosen: list[str] = []
        total = 0
        for count, _, term in counted:
            if chosen and (total + count > self._budget or len(chosen) == max_terms):
                break
            chosen.append(term)
            total += count
        terms = tuple(chosen)
        expression = fts5_expression(terms, root)
        if total <= self._budget:
            return MatchPlan(expression, terms=terms, root=root, absent=tuple(absent))
        if kept is None:
            min_rowid = self._index.window(terms, root, self._budget)
        else:
            min_rowid = kept.windows.get((root, terms), -1)
            if min_rowid < 0:
                min_rowid = kept.windows[(root, terms)] = self._index.window(
                    terms, root, self._budget
                )
        return MatchPlan(expression, min_rowid, terms, root, absent=tuple(absent))

    def postings(self, plan: MatchPlan, *, generation: Hashable = None) -> Postings:
        """The rows matching each word of ``plan`` (no more than it ranks): reading the index
        only, about a third of what ranking the same rows with bm25 costs. With a
        ``generation``, kept as ``plan`` describes."""
        kept = self._keep(generation)
        index = self._index
        if kept is None:
            read = index.rows_each(plan.terms, plan.root, plan.min_rowid)
            return Postings(
                documents=plan.documents or index.documents(),
                terms={term: read[term] for term in plan.terms},
                absent=frozenset(plan.absent),
            )
        missing = tuple(
            term for term in plan.terms if (plan.root, term, plan.min_rowid) not in kept.lists
        )
        if missing:
            read = index.rows_each(missing, plan.root, plan.min_rowid)
            for term in missing:
                kept.lists[(plan.root, term, plan.min_rowid)] = read[term]
        terms = {term: kept.lists[(plan.root, term, plan.min_rowid)] for term in plan.terms}
        if kept.documents < 0:
            kept.documents = index.documents()
        return Postings(
            documents=plan.documents or kept.documents, terms=terms, absent=frozenset(plan.absent)
        )

    def _minority_rows(self, root: str) -> int | None:
        """The rows ``root`` (a namespace root) holds, or ``None`` when it is at least half
        the table (its counts are then about the table's); counted up to that half, and
        reused for a while."""
        now = time.monotonic()
        cached = self._roots.get(root)
        if cached is not None and now - cached[1] < _COUNT_TTL_SECONDS:
            return cached[0]
        half = self._index.documents() // 2
        count = self._index.count((), root, half + 1)
        rows = count if 0 < count <= half else None
        if len(self._roots) >= _MAX_COUNTED_WORDS:
            self._roots.clear()
        self._roots[root] = (rows, now)
        return rows

    def _keep(self, generation: Hashable) -> _Kept | None:
        """What is kept for ``generation`` (started afresh when it changed); ``None`` for none."""
        if generation is None:
            return None
        kept = self._kept
        if kept.generation != generation or kept.size() > _MAX_KEPT:
            kept = self._kept = _Kept(generation)
        return kept

    def _count(self, key: tuple[str, str]) -> int:
        """Rows matching one word (``key``: its root, or empty, and the word), counted up to
        ``budget + 1`` (enough to know it is too many)."""
        if key in self._common:
            return self._budget + 1
        now = time.monotonic()
        cached = self._counts.get(key)
        if cached is not None and now - cached[1] < _COUNT_TTL_SECONDS:
            return cached[0]
        root, term = key
        count = self._index.count((term,), root, self._budget + 1)
        self._remember(key, count, now)
        return count

    def _fetch_counts(
        self, words: list[str], root: str, kept: _Kept | None
    ) -> dict[tuple[str, str], int]:
        """Counts of the words ``_count`` would read from the index (known to neither ``kept``
        nor the caches), read at once and remembered as it would."""
        now = time.monotonic()
        unknown = []
        for word in words:
            key = (root, word)
            if (kept is not None and key in kept.counts) or key in self._common:
                continue
            cached = self._counts.get(key)
            if cached is None or now - cached[1] >= _COUNT_TTL_SECONDS:
                unknown.append(word)
        if not unknown:
            return {}
        counts = self._index.count_each(tuple(unknown), root, self._budget + 1)
        fetched = {}
        for word in unknown:
            key = (root, word)
            fetched[key] = counts[word]
            self._remember(key, counts[word], now)
        return fetched

    def _remember(self, key: tuple[str, str], count: int, now: float) -> None:
        if count > self._budget:
            if len(self._common) >= _MAX_COMMON_WORDS:
                self._common.clear()
            self._common.add(key)
        elif count:
            if len(self._counts) >= _MAX_COUNTED_WORDS:
                self._counts.clear()
            self._counts[key] = (count, now)


def _single_root(namespace_prefix: str) -> str:
    """The one namespace root every namespace under the prefix shares, or empty when they span
    several (``users``, ``sessions``)."""
    prefix = namespace_prefix.rstrip("/")
    return "" if namespace_token(prefix) is None else namespace_root(prefix)


def root_token(root: str) -> str:
    """A namespace root as FTS5's ``ns`` column holds it (``namespace_token``)."""
    return "n" + root.encode().hex() + "x"


@dataclass(slots=True)
class _Kept:
    """What a planner learnt of its table while the table's ``generation`` stays the same:
    word counts (absent words too), search windows, posting lists and the row count (-1 until
    read)."""

    generation: Hashable
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    windows: dict[tuple[str, tuple[str, ...]], int] = field(default_factory=dict)
    lists: dict[tuple[str, str, int], tuple[int, ...]] = field(default_factory=dict)
    documents: int = -1

    def count(self, key: tuple[str, str], count: Callable[[tuple[str, str]], int]) -> int:
        known = self.counts.get(key)
        if known is None:
            known = self.counts[key] = count(key)
        return known

    def size(self) -> int:
        return len(self.counts) + len(self.windows) + len(self.lists)
