"""Facts: field/value and free-text observations that are superseded, never overwritten. The
logic once, on any SQL database (``SqlFacts``), and SQLite's statements and FTS5 index
(``SqliteFacts``).

The supersession chain (``supersedes`` links) keeps what flynn believed and when it changed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol, cast

from flynn.credentials import redact
from flynn.errors import StoreError
from flynn.memory.bm25 import TermMatches, read_best
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.fts import FtsQueryPlanner
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.sql import NamedRow, TransactionalSql, storable
from flynn.memory.store import Fact, FactKind, NewFact, Postings

FACT_COLUMNS = (
    "id, namespace, kind, field, value, confidence, source, status, supersedes, session, channel, "
    "created_at, updated_at, message_id"
)

_MAX_CACHED = 4096
"""Facts kept decoded after a search read them, until any fact changes."""
# A fact is superseded at most once (only active facts can be), so its chain is a line: walk back
# through ``supersedes`` and forward through the rows pointing at it. The CTE sits inside the
# DELETE because Python's sqlite3 reports no rowcount for a statement that starts with WITH.
_FORGET_CHAIN = """
DELETE FROM facts WHERE id IN (
    WITH RECURSIVE
        older(id, supersedes) AS (
            SELECT id, supersedes FROM facts WHERE id = {id}
            UNION SELECT f.id, f.supersedes FROM facts AS f JOIN older ON f.id = older.supersedes
        ),
        newer(id) AS (
            SELECT {id}
            UNION SELECT f.id FROM facts AS f JOIN newer ON f.supersedes = newer.id
        )
    SELECT id FROM older UNION SELECT id FROM newer
)
"""


@dataclass(frozen=True, slots=True)
class FactsDialect:
    """One backend's statements for ``SqlFacts`` (built by ``facts_dialect``), and how it
    writes times, passes a list of ids and reads a row."""

    insert: str
    set_status: str
    confirm: str
    get: str
    active: str
    and_kind: str
    and_field: str
    newest_first: str
    find: str
    history: str
    by_id: str
    forget: str
    forget_field: str
    forget_chain: str
    time: Callable[[datetime], object]
    """Raises ``ValueError`` for a naive time."""
    ids: Callable[[Sequence[int]], object]
    """The one parameter of ``by_id``."""
    fact: Callable[[NamedRow], Fact]
    """A fact from a row of ``FACT_COLUMNS``."""


def facts_dialect(
    parameters: Callable[[str], str],
    *,
    find_value: str,
    any_id: str,
    chain_id: str,
    time: Callable[[datetime], object],
    ids: Callable[[Sequence[int]], object],
    fact: Callable[[NamedRow], Fact],
) -> FactsDialect:
    """The statements, written once with ``?`` (``parameters`` turns them into the backend's),
    and the conditions the backends write differently: ``find_value`` (value equals a
    parameter, ASCII case ignored), ``any_id`` (id among the list ``ids`` makes) and
    ``chain_id`` (the named parameter ``id`` as the chain's id column takes it)."""
    select = f"SELECT {FACT_COLUMNS} FROM facts WHERE"
    scope = namespace_scope("namespace")
    return FactsDialect(
        insert=parameters(f"""
INSERT INTO facts (namespace, kind, field, value, confidence, source, status, supersedes,
                   session, channel, created_at, updated_at, message_id)
VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?)
RETURNING {FACT_COLUMNS}
"""),
        set_status=parameters(
            "UPDATE facts SET status = ?, updated_at = ? WHERE id = ? AND status = 'active'"
        ),
        confirm=parameters("UPDATE facts SET updated_at = ? WHERE id = ? AND status = 'active'"),
        get=parameters(f"{select} id = ?"),
        active=parameters(f"{select} namespace = ? AND status = 'active'"),
        and_kind=parameters(" AND kind = ?"),
        and_field=parameters(" AND field = ?"),
        newest_first=" ORDER BY created_at DESC, id DESC",
        find=parameters(f"{select} namespace = ? AND {find_value} AND status = 'active'"),
        # ``IS``: NULL (an observation's field) equals NULL.
        history=parameters(f"{select} namespace = ? AND field IS ? ORDER BY created_at, id"),
        by_id=parameters(f"{select} {any_id}"),
        forget=parameters(f"DELETE FROM facts WHERE {scope}"),
        forget_field=parameters(f"DELETE FROM facts WHERE {scope} AND field = ?"),
        forget_chain=parameters(_FORGET_CHAIN.format(id=chain_id)),
        time=time,
        ids=ids,
        fact=fact,
    )


class FactIndex(Protocol):
    """A backend's full-text index of facts (their field and value): which facts hold each
    word of a text, for ``SqlFacts.search`` to rank with bm25."""

    def postings(
        self, query: str, *, namespace_prefix: str, generation: Hashable
    ) -> Postings | None:
        """For each word of ``query`` worth searching, the ids of the facts holding it (of
        every namespace and status: candidates, filtered by the caller), no more than a search
        ranks; ``None`` when no word occurs. May keep what it read while ``generation`` (of
        ``SqlFacts.generation``) stays the same."""
        ...

    def forget_counts(self) -> None:
        """Drops what was learnt about common words; called after rows are deleted."""
        ...

    @property
    def writes(self) -> bool:
        """Whether ``added`` writes (then a fact is stored and indexed in one transaction)."""
        ...

    def added(self, fact: Fact) -> None:
        """Indexes a fact just stored (an index SQLite keeps by trigger has nothing to do)."""
        ...


class FactsGeneration(Protocol):
    """How a backend tells that facts changed (``Facts.generation``)."""

    def current(self) -> tuple[int, int]:
        """Differs after any change to any fact, by this store, by other SQL, or by another
        process."""
        ...

    def wrote(self) -> None:
        """Called when this store is about to write facts (an insert too: it changes what a
        search finds)."""
        ...

    def moved_alone(self, before: tuple[int, int], after: tuple[int, int]) -> bool:
        """Whether nothing but this store's own writes can have moved ``current`` from
        ``before`` to ``after`` (no other connection committed in between)."""
        ...


class SqlFacts:
    """``Facts`` on a ``facts`` table, searched through a ``FactIndex``."""

    def __init__(
        self,
        db: TransactionalSql,
        dialect: FactsDialect,
        index: FactIndex,
        generation: FactsGeneration,
    ) -> None:
        self._db = db
        self._sql = dialect
        self._index = index
        self._generation = generation
        self._cached: dict[int, Fact] = {}
        self._cached_generation: Hashable = None
        # What search keeps its counts, lists and decoded facts under (``_search_generation``),
        # and the ``generation`` they are known to be valid at.
        self._search_key: Hashable = None
        self._search_valid_at: tuple[int, int] | None = None

    def note_changed(self) -> None:
        """For writers that change facts with their own SQL (``forgetting``): readers that
        cache by ``generation`` must see it change."""
        self._generation.wrote()

    def generation(self) -> tuple[int, int]:
        """Differs after any change to any fact: by this store, by other SQL (a foreign key's
        ``SET NULL`` too), or by another process."""
        return self._generation.current()

    def add(self, fact: NewFact, *, now: datetime) -> Fact:
        return self._insert(fact, supersedes=None, now=now)

    def supersede(self, old_id: int, new: NewFact, *, now: datetime) -> Fact:
        """Marks ``old_id`` superseded and stores ``new`` linked to it, in one transaction.

        Raises ``StoreError`` (and changes nothing) if ``old_id`` is missing or not active.
        """
        self._generation.wrote()
        with self._db.transaction():
            changed = self._db.execute(
                self._sql.set_status, ("superseded", self._sql.time(now), old_id)
            )
            if changed != 1:
                raise StoreError(f"fact {old_id} is not active (or does not exist)")
            return self._insert(new, supersedes=old_id, now=now)

    def retract(self, old_id: int, retraction: NewFact, *, now: datetime) -> Fact:
        """Marks ``old_id`` superseded and stores ``retraction`` linked to it with status
        ``deleted`` (a retraction record, never shown as a belief), in one transaction.

        Raises ``StoreError`` (and changes nothing) if ``old_id`` is missing or not active.
        """
        with self._db.transaction():
            stored = self.supersede(old_id, retraction, now=now)
            self._db.execute(self._sql.set_status, ("deleted", self._sql.time(now), stored.id))
        return replace(stored, status="deleted")

    def retire(self, fact_id: int, *, now: datetime) -> None:
        """Marks an active fact ``deleted`` (kept for provenance; ``forget`` removes for real).

        Raises ``StoreError`` if the fact is missing or not active.
        """
        self._generation.wrote()
        if self._db.execute(self._sql.set_status, ("deleted", self._sql.time(now), fact_id)) != 1:
            raise StoreError(f"fact {fact_id} is not active (or does not exist)")

    def confirm(self, fact_id: int, *, now: datetime) -> bool:
        """Sets an active fact's ``updated_at`` to ``now`` (it was learnt again); False if the
        fact is not active.

        What search keeps stays valid: a confirmation changes no fact's words or status, only
        when the fact was last learnt, so only that fact is decoded again. (A person repeats
        what they told before every few turns; each used to empty the caches, and the next
        searches read the index again: half of recall's fact search.)"""
        before = self._generation.current()
        self._generation.wrote()
        confirmed = self._db.execute(self._sql.confirm, (self._sql.time(now), fact_id)) == 1
        if before == self._search_valid_at:
            after = self._generation.current()
            if self._generation.moved_alone(before, after):
                self._search_valid_at = after
                self._cached.pop(fact_id, None)
        return confirmed

    def get(self, fact_id: int) -> Fact | None:
        row = self._db.fetchone(self._sql.get, (fact_id,))
        return None if row is None else self._sql.fact(row)

    def active(
        self, namespace: str, *, kind: FactKind | None = None, field: str | None = None
    ) -> list[Fact]:
        """Active facts of exactly this namespace, newest first."""
        sql = self._sql.active
        params: list[object] = [namespace]
        if kind is not None:
            sql += self._sql.and_kind
            params.append(kind)
        if field is not None:
            sql += self._sql.and_field
            params.append(field)
        rows = self._db.fetchall(sql + self._sql.newest_first, params)
        return [self._sql.fact(row) for row in rows]

    def find(self, namespace: str, value: str) -> list[Fact]:
        """Active facts of exactly this namespace whose value equals ``value`` (ASCII case
        ignored), newest first; an index lookup, whatever the namespace's size."""
        rows = self._db.fetchall(self._sql.find + self._sql.newest_first, (namespace, value))
        return [self._sql.fact(row) for row in rows]

    def history(self, namespace: str, field: str | None) -> list[Fact]:
        """Every row ever stored for ``field`` in ``namespace`` (any status), oldest first;
        ``None`` for the observations, which have no field."""
        return [
            self._sql.fact(row) for row in self._db.fetchall(self._sql.history, (namespace, field))
        ]

    def search(self, namespace_prefix: str, query: str, *, limit: int) -> list[Fact]:
        """Active facts under ``namespace_prefix`` matching the words of ``query``, best first.

        ``query`` is plain text, never query syntax. Every fact matching a searched word is
        weighed from the index's posting lists (bm25, ``flynn.memory.bm25``) and only the best
        few are read. Counts, lists and decoded facts are kept until any fact changes
        (``generation``): facts change seldom, so most searches query no index at all.
        """
        if limit <= 0:
            return []
        generation = self._search_generation()
        postings = self._index.postings(
            query, namespace_prefix=namespace_prefix, generation=generation
        )
        if postings is None:
            return []
        matches = TermMatches(postings)
        root, below, after = scope_params(namespace_prefix)

        def read(ids: Sequence[int]) -> list[Fact]:
            return [
                fact
                for fact in self._read(ids, generation)
                if fact.status == "active"
                and (fact.namespace == root or below <= fact.namespace < after)
            ]

        return [fact for _, fact in read_best(matches, read, _fact_id, _fact_text, limit=limit)]

    def _search_generation(self) -> Hashable:
        """What search's caches are kept under: it moves with ``generation``, but for this
        store's own confirmations (``confirm``)."""
        current = self._generation.current()
        if current != self._search_valid_at:
            self._search_valid_at = current
            self._search_key = current
        return self._search_key

    def _read(self, ids: Sequence[int], generation: Hashable) -> list[Fact]:
        """The facts with these ids, kept decoded while ``generation`` stays the same."""
        if generation != self._cached_generation or len(self._cached) > _MAX_CACHED:
            self._cached = {}
            self._cached_generation = generation
        cached = self._cached
        found = [cached[key] for key in ids if key in cached]
        missing = [key for key in ids if key not in cached]
        if missing:
            for row in self._db.fetchall(self._sql.by_id, (self._sql.ids(missing),)):
                fact = self._sql.fact(row)
                cached[fact.id] = fact
                found.append(fact)
        return found

    def forget(self, namespace_prefix: str, *, field: str | None = None) -> int:
        """Deletes rows (and their index rows) for real; returns how many."""
        self._generation.wrote()
        self._index.forget_counts()
        if field is None:
            return self._db.execute(self._sql.forget, scope_params(namespace_prefix))
        return self._db.execute(self._sql.forget_field, (*scope_params(namespace_prefix), field))

    def forget_chain(self, fact_id: int) -> int:
        """Deletes ``fact_id`` and every fact it superseded or that superseded it, for real;
        returns how many rows went (0 if the fact does not exist)."""
        self._generation.wrote()
        self._index.forget_counts()
        return self._db.execute(self._sql.forget_chain, {"id": fact_id})

    def _insert(self, fact: NewFact, *, supersedes: int | None, now: datetime) -> Fact:
        self._generation.wrote()
        if not self._index.writes:
            return self._stored(fact, supersedes, now)
        with self._db.transaction():
            stored = self._stored(fact, supersedes, now)
            self._index.added(stored)
        return stored

    def _stored(self, fact: NewFact, supersedes: int | None, now: datetime) -> Fact:
        at = self._sql.time(now)
        row = self._db.fetchone(
            self._sql.insert,
            (
                fact.namespace,
                fact.kind,
                None if fact.field is None else storable(fact.field),
                # A credential is refused upstream (``is_secret``); never stored here.
                storable(redact(fact.value)[0]),
                fact.confidence,
                fact.source,
                supersedes,
                fact.session,
                fact.channel,
                at,
                at,
                fact.message_id,
            ),
        )
        if row is None:
            raise StoreError("fact insert returned no row")
        return self._sql.fact(row)


class PlannedFactIndex:
    """``FactIndex`` whose words are chosen by an ``FtsQueryPlanner``: on SQLite's
    ``facts_fts`` (``FtsFactIndex``), or on any ``TermIndex`` holding FTS5's terms."""

    def __init__(self, planner: FtsQueryPlanner, *, writes: bool = False) -> None:
        self._planner = planner
        self._writes = writes

    @property
    def writes(self) -> bool:
        return self._writes

    def postings(
        self, query: str, *, namespace_prefix: str, generation: Hashable
    ) -> Postings | None:
        plan = self._planner.plan(query, generation=generation, namespace_prefix=namespace_prefix)
        if plan is None:
            return None
        return self._planner.postings(plan, generation=generation)

    def forget_counts(self) -> None:
        self._planner.forget_counts()

    def added(self, fact: Fact) -> None:
        """Nothing to do here: ``facts_fts`` is kept by triggers."""


class FtsFactIndex(PlannedFactIndex):
    """``FactIndex`` on SQLite's ``facts_fts`` (FTS5, Porter stemming)."""

    def __init__(self, db: Database) -> None:
        super().__init__(FtsQueryPlanner(db, "facts_fts"))


def fact_from_row(row: sqlite3.Row) -> Fact:
    """A fact from a row of ``FACT_COLUMNS``."""
    # By position (every query here selects ``FACT_COLUMNS``): recall decodes facts on every turn.
    return Fact(
        id=row[0],
        namespace=row[1],
        kind=row[2],
        field=row[3],
        value=row[4],
        # RETURNING hands back a whole-number REAL as an int; the dataclass promises a float.
        confidence=float(row[5]),
        source=row[6],
        status=row[7],
        supersedes=row[8],
        session=row[9],
        channel=row[10],
        created_at=decode_time(row[11]),
        updated_at=decode_time(row[12]),
        message_id=row[13],
    )


def _json_ids(ids: Sequence[int]) -> str:
    return json.dumps(list(ids))


SQLITE_FACTS = facts_dialect(
    lambda statement: statement,
    find_value="value = ? COLLATE NOCASE",
    any_id="id IN (SELECT value FROM json_each(?))",
    chain_id=":id",
    time=encode_time,
    ids=_json_ids,
    # Read by position, as recall decodes many facts a turn (a ``sqlite3.Row`` allows both).
    fact=cast(Callable[[NamedRow], Fact], fact_from_row),
)


class RewrittenFacts:
    """``FactsGeneration`` on SQLite: the rows this connection rewrote (temporary triggers)
    and its ``data_version`` (another connection's commits)."""

    def __init__(self, db: Database) -> None:
        db.watch_rewrites("facts")
        self._db = db

    def current(self) -> tuple[int, int]:
        return self._db.rewrites("facts")

    def wrote(self) -> None:
        # Inserts count too (``note_write``): they change what a search finds.
        self._db.note_write("facts")

    def moved_alone(self, before: tuple[int, int], after: tuple[int, int]) -> bool:
        # The rewrites are this connection's own; ``data_version`` moves at another's commit.
        return before[1] == after[1]


class SqliteFacts(SqlFacts):
    """``Facts`` on SQLite's ``facts`` table, with ``facts_fts`` kept in sync by triggers."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, SQLITE_FACTS, FtsFactIndex(db), RewrittenFacts(db))


def _fact_id(fact: Fact) -> int:
    return fact.id


def _fact_text(fact: Fact) -> str:
    """What the index holds of a fact (both its columns)."""
    return f"{fact.field} {fact.value}" if fact.field else fact.value
