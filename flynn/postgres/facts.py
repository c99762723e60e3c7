"""Facts in PostgreSQL: ``Facts`` on the ``facts`` table, superseded and never overwritten, as
``flynn.memory.facts`` keeps them in SQLite; searched through FTS5's own terms of each fact
(``fact_terms``, ``flynn.postgres.postings``) and ranked by the same bm25, so a search finds
what it finds on SQLite; ``generation`` read from a counter every worker's writes move
(``facts_generation``)."""

from __future__ import annotations

from collections.abc import Sequence

from flynn.memory.facts import PlannedFactIndex, SqlFacts, facts_dialect
from flynn.memory.fts import FtsQueryPlanner
from flynn.memory.fts_words import FtsWords, IndexedText
from flynn.memory.namespaces import namespace_root
from flynn.memory.sql import NamedRow
from flynn.memory.store import Fact
from flynn.postgres.database import PostgresDatabase, aware, psycopg_statement, utc
from flynn.postgres.postings import PostgresTermIndex, PostingsTable, TermRows, merged

# A fact stored: its terms, and its root (NULL until indexed: rows from before postings).
_ADDED = """
WITH indexed AS (
    INSERT INTO fact_terms (term, fact_id, root, occurs)
    SELECT t.term, %(id)s, %(root)s, t.occurs
    FROM unnest(%(terms)s::text[], %(occurs)s::integer[]) AS t (term, occurs)
    ON CONFLICT DO NOTHING
)
UPDATE facts SET root = %(root)s WHERE id = %(id)s
"""
_UNINDEXED = "SELECT id, namespace, field, value FROM facts WHERE root IS NULL ORDER BY id LIMIT %s"
_SET_ROOTS = """
UPDATE facts SET root = r.root FROM unnest(%s::bigint[], %s::text[]) AS r (id, root)
WHERE facts.id = r.id
"""
_BACKFILL_PAGE = 1000
FACT_POSTINGS = PostingsTable("fact_terms", "fact_id", "facts", ("field", "value"))
_GENERATION = "SELECT n FROM facts_generation"


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

    def moved_alone(self, before: tuple[int, int], after: tuple[int, int]) -> bool:
        """Never known: one counter moves at every worker's commit."""
        return False


class PostingsFactIndex(PlannedFactIndex):
    """``FactIndex`` on ``fact_terms``: FTS5's terms of each fact's field and value, planned
    by the same ``FtsQueryPlanner`` as SQLite's ``facts_fts``, so both backends rank the same
    candidates; a fact is indexed in the transaction that stores it."""

    def __init__(self, db: PostgresDatabase, words: FtsWords) -> None:
        self._db = db
        self._words = words
        self._terms = PostgresTermIndex(db, words, FACT_POSTINGS)
        super().__init__(FtsQueryPlanner.on(self._terms), writes=True)

    def added(self, fact: Fact) -> None:
        indexed = self._indexed(fact.field, fact.value)
        self._db.execute(
            _ADDED,
            {
                "id": fact.id,
                "root": namespace_root(fact.namespace),
                "terms": list(indexed.terms),
                "occurs": list(indexed.terms.values()),
            },
        )

    def index_missing(self) -> int:
        """Indexes the facts stored before ``fact_terms`` existed; returns how many. Safe to
        run by several workers at once (what one wrote, another's insert keeps)."""
        done = 0
        while rows := self._db.fetchall(_UNINDEXED, (_BACKFILL_PAGE,)):
            ids = [int(row["id"]) for row in rows]
            roots = [namespace_root(row["namespace"]) for row in rows]
            texts = [self._indexed(row["field"], row["value"]).terms for row in rows]
            with self._db.transaction():
                self._terms.insert(TermRows.of(zip(ids, roots, texts, strict=True)))
                self._db.execute(_SET_ROOTS, (ids, roots))
            done += len(ids)
        return done

    def _indexed(self, field: str | None, value: str) -> IndexedText:
        return merged(self._words.index([field or "", value]))


class PostgresFacts(SqlFacts):
    """``Facts`` on PostgreSQL's ``facts`` table."""

    def __init__(self, db: PostgresDatabase, *, words: FtsWords | None = None) -> None:
        self.index = PostingsFactIndex(db, FtsWords() if words is None else words)
        super().__init__(db, POSTGRES_FACTS, self.index, CountedFacts(db))
