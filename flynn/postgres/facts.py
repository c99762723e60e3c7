"""Facts in PostgreSQL: ``Facts`` on the ``facts`` table, superseded and never overwritten, as
``flynn.memory.facts`` keeps them in SQLite; searched through the ``words`` column (a GIN
index) and ranked by the same bm25; ``generation`` read from a counter every worker's writes
move (``facts_generation``)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from flynn.memory.facts import SqlFacts, facts_dialect
from flynn.memory.fts import CANDIDATE_BUDGET, search_terms
from flynn.memory.namespaces import namespace_root, namespace_token, scope_params
from flynn.memory.sql import NamedRow
from flynn.memory.store import Fact, Postings
from flynn.postgres.database import PostgresDatabase, aware, psycopg_statement, utc

# Each searched word's newest matches, one more than a search ranks (so "too many" shows),
# among every namespace or only under one root. The words are cut and stemmed as ``words`` was.
_POSTINGS = """
SELECT t.term, m.id FROM unnest(%(terms)s::text[]) AS t(term)
CROSS JOIN LATERAL (
    SELECT id FROM facts
    WHERE words @@ plainto_tsquery('english', t.term)
        AND (%(root)s::text IS NULL
             OR namespace = %(root)s OR (namespace >= %(below)s AND namespace < %(after)s))
    ORDER BY id DESC LIMIT %(cap)s
) AS m
"""
# The newest id stands for the row count, as on SQLite: deleted rows only make words look rarer.
_DOCUMENTS = "SELECT coalesce(max(id), 0) AS documents FROM facts"
_GENERATION = "SELECT n FROM facts_generation"
_MAX_KEPT = 4096


def _fact(row: NamedRow) -> Fact:
    return Fact(
        id=row["id"],
        namespace=row["namespace"],
        kind=row["kind"],
        field=row["field"],
        value=row["value"],
        confidence=row["confidence"],
        source=row["source"],
        status=row["status"],
        supersedes=row["supersedes"],
        session=row["session"],
        channel=row["channel"],
        created_at=utc(row["created_at"]),
        updated_at=utc(row["updated_at"]),
        message_id=row["message_id"],
    )


def _id_list(ids: Sequence[int]) -> list[int]:
    return list(ids)


POSTGRES_FACTS = facts_dialect(
    psycopg_statement,
    find_value='lower(value COLLATE "C") = lower(?::text COLLATE "C")',
    any_id="id = ANY(?)",
    # A bigint, as the recursive walk's id column is (psycopg sends a small int as int2).
    chain_id=":id::bigint",
    time=aware,
    ids=_id_list,
    fact=_fact,
)


class CountedFacts:
    """``FactsGeneration`` on PostgreSQL: ``facts_generation``, which a trigger moves at the
    commit of every change to facts, whoever makes it (another worker, a cascade): a one-row
    read."""

    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    def current(self) -> tuple[int, int]:
        row = self._db.fetchone(_GENERATION)
        if row is None:
            raise RuntimeError("facts_generation has no row")
        return int(row["n"]), 0

    def wrote(self) -> None:
        """Nothing to do: the trigger counts every write."""


@dataclass(slots=True)
class _Kept:
    generation: Hashable
    postings: dict[tuple[str, str | None], Postings | None] = field(default_factory=dict)
    documents: int = -1


class TsvectorFactIndex:
    """``FactIndex`` on the ``words`` column: the words of a text chosen as SQLite's
    ``FtsQueryPlanner`` chooses them (rarest first while their matches fit the budget; when
    even the rarest matches more, its newest matches only, counted under the prefix's namespace
    root when there is one), so both backends rank the same candidates."""

    def __init__(self, db: PostgresDatabase, *, budget: int = CANDIDATE_BUDGET) -> None:
        self._db = db
        self._budget = budget
        self._kept = _Kept(None)

    def postings(
        self, query: str, *, namespace_prefix: str, generation: Hashable
    ) -> Postings | None:
        if self._kept.generation != generation or len(self._kept.postings) > _MAX_KEPT:
            self._kept = _Kept(generation)
        kept = self._kept
        key = (query, namespace_prefix)
        if key not in kept.postings:
            kept.postings[key] = self._postings(query, namespace_prefix, kept)
        return kept.postings[key]

    def forget_counts(self) -> None:
        self._kept = _Kept(None)

    def _postings(self, query: str, namespace_prefix: str, kept: _Kept) -> Postings | None:
        terms = search_terms(query)
        if not terms:
            return None
        chosen = self._choose(terms, self._lists(terms, None))
        if chosen is None:
            return None
        if len(chosen[0][1]) > self._budget and namespace_token(namespace_prefix) is not None:
            # Even the rarest word is too common among everyone's facts: count among this
            # root's, so other people's newest facts do not fill the window.
            scoped = self._choose(terms, self._lists(terms, namespace_root(namespace_prefix)))
            if scoped is None:
                return None
            chosen = scoped
        if kept.documents < 0:
            row = self._db.fetchone(_DOCUMENTS)
            kept.documents = 0 if row is None else int(row["documents"])
        return Postings(
            documents=kept.documents,
            terms={term: tuple(sorted(ids[: self._budget])) for term, ids in chosen},
        )

    def _choose(
        self, terms: list[str], lists: dict[str, list[int]]
    ) -> list[tuple[str, list[int]]] | None:
        """The words to search, rarest first, while their matches fit the budget (the rarest
        always); ``None`` when none occurs."""
        counted = sorted(
            (len(lists[term]), position, term)
            for position, term in enumerate(terms)
            if lists.get(term)
        )
        chosen: list[tuple[str, list[int]]] = []
        total = 0
        for count, _, term in counted:
            if chosen and total + count > self._budget:
                break
            chosen.append((term, lists[term]))
            total += count
        return chosen or None

    def _lists(self, terms: list[str], root: str | None) -> dict[str, list[int]]:
        """Each word's newest matching ids, newest first, up to one more than the budget;
        with ``root``, among that namespace root's facts only."""
        below = after = None
        if root is not None:
            root, below, after = scope_params(root)
        rows = self._db.fetchall(
            _POSTINGS,
            {
                "terms": terms,
                "root": root,
                "below": below,
                "after": after,
                "cap": self._budget + 1,
            },
        )
        lists: dict[str, list[int]] = {}
        for row in rows:
            lists.setdefault(row["term"], []).append(int(row["id"]))
        return lists


class PostgresFacts(SqlFacts):
    """``Facts`` on PostgreSQL's ``facts`` table."""

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__(db, POSTGRES_FACTS, TsvectorFactIndex(db), CountedFacts(db))
