"""Facts in SQLite: field/value and free-text observations that are superseded, never overwritten.

The supersession chain (``supersedes`` links) keeps what flynn believed and when it changed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from flynn.credentials import redact
from flynn.errors import StoreError
from flynn.memory.bm25 import TermMatches, read_best
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.fts import FtsQueryPlanner
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.store import Fact, FactKind, NewFact

FACT_COLUMNS = (
    "id, namespace, kind, field, value, confidence, source, status, supersedes, session, channel, "
    "created_at, updated_at, message_id"
)

_INSERT = f"""
INSERT INTO facts (namespace, kind, field, value, confidence, source, status, supersedes,
                   session, channel, created_at, updated_at, message_id)
VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?)
RETURNING {FACT_COLUMNS}
"""
_SET_STATUS = "UPDATE facts SET status = ?, updated_at = ? WHERE id = ? AND status = 'active'"
_CONFIRM = "UPDATE facts SET updated_at = ? WHERE id = ? AND status = 'active'"
_GET = f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ?"
_ACTIVE = f"SELECT {FACT_COLUMNS} FROM facts WHERE namespace = ? AND status = 'active'"
_NEWEST_FIRST = " ORDER BY created_at DESC, id DESC"
_FIND = (
    f"SELECT {FACT_COLUMNS} FROM facts WHERE namespace = ? AND value = ? COLLATE NOCASE"
    " AND status = 'active'"
)
_HISTORY = (
    f"SELECT {FACT_COLUMNS} FROM facts WHERE namespace = ? AND field IS ? ORDER BY created_at, id"
)
_BY_ID = f"SELECT {FACT_COLUMNS} FROM facts WHERE id IN (SELECT value FROM json_each(?))"
_MAX_CACHED = 4096
"""Facts kept decoded after a search read them, until any fact changes."""
# A fact is superseded at most once (only active facts can be), so its chain is a line: walk back
# through ``supersedes`` and forward through the rows pointing at it. The CTE sits inside the
# DELETE because Python's sqlite3 reports no rowcount for a statement that starts with WITH.
_FORGET_CHAIN = """
DELETE FROM facts WHERE id IN (
    WITH RECURSIVE
        older(id, supersedes) AS (
            SELECT id, supersedes FROM facts WHERE id = :id
            UNION SELECT f.id, f.supersedes FROM facts AS f JOIN older ON f.id = older.supersedes
        ),
        newer(id) AS (
            SELECT :id
            UNION SELECT f.id FROM facts AS f JOIN newer ON f.supersedes = newer.id
        )
    SELECT id FROM older UNION SELECT id FROM newer
)
"""
_FORGET = f"DELETE FROM facts WHERE {namespace_scope('namespace')}"
_FORGET_FIELD = f"DELETE FROM facts WHERE {namespace_scope('namespace')} AND field = ?"


class SqliteFacts:
    """``Facts`` on the ``facts`` table, with ``facts_fts`` kept in sync by triggers."""

    def __init__(self, db: Database) -> None:
        db.watch_rewrites("facts")
        self._db = db
        self._planner = FtsQueryPlanner(db, "facts_fts")
        self._cached: dict[int, Fact] = {}
        self._cached_generation: tuple[int, int] | None = None

    def note_changed(self) -> None:
        """For writers that change facts with their own SQL (``forgetting``): readers that
        cache by ``generation`` must see it change."""
        self._db.note_write("facts")

    def generation(self) -> tuple[int, int]:
        """Differs after any change to any fact: by this store, by other SQL on this connection
        (a foreign key's ``SET NULL`` too), or by another process."""
        # This store's inserts count too (``note_write``): they change what a search finds.
        return self._db.rewrites("facts")

    def add(self, fact: NewFact, *, now: datetime) -> Fact:
        return self._insert(fact, supersedes=None, now=now)

    def supersede(self, old_id: int, new: NewFact, *, now: datetime) -> Fact:
        """Marks ``old_id`` superseded and stores ``new`` linked to it, in one transaction.

        Raises ``StoreError`` (and changes nothing) if ``old_id`` is missing or not active.
        """
        self._db.note_write("facts")
        with self._db.transaction():
            if self._db.execute(_SET_STATUS, ("superseded", encode_time(now), old_id)) != 1:
                raise StoreError(f"fact {old_id} is not active (or does not exist)")
            return self._insert(new, supersedes=old_id, now=now)

    def retract(self, old_id: int, retraction: NewFact, *, now: datetime) -> Fact:
        """Marks ``old_id`` superseded and stores ``retraction`` linked to it with status
        ``deleted`` (a retraction record, never shown as a belief), in one transaction.

        Raises ``StoreError`` (and changes nothing) if ``old_id`` is missing or not active.
        """
        with self._db.transaction():
            stored = self.supersede(old_id, retraction, now=now)
            self._db.execute(_SET_STATUS, ("deleted", encode_time(now), stored.id))
        return replace(stored, status="deleted")

    def retire(self, fact_id: int, *, now: datetime) -> None:
        """Marks an active fact ``deleted`` (kept for provenance; ``forget`` removes for real).

        Raises ``StoreError`` if the fact is missing or not active.
        """
        self._db.note_write("facts")
        if self._db.execute(_SET_STATUS, ("deleted", encode_time(now), fact_id)) != 1:
            raise StoreError(f"fact {fact_id} is not active (or does not exist)")

    def confirm(self, fact_id: int, *, now: datetime) -> bool:
        """Sets an active fact's ``updated_at`` to ``now`` (it was learnt again); False if the
        fact is not active."""
        self._db.note_write("facts")
        return self._db.execute(_CONFIRM, (encode_time(now), fact_id)) == 1

    def get(self, fact_id: int) -> Fact | None:
        row = self._db.fetchone(_GET, (fact_id,))
        return None if row is None else fact_from_row(row)

    def active(
        self, namespace: str, *, kind: FactKind | None = None, field: str | None = None
    ) -> list[Fact]:
        """Active facts of exactly this namespace, newest first."""
        sql = _ACTIVE
        params: list[object] = [namespace]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        if field is not None:
            sql += " AND field = ?"
            params.append(field)
        return [fact_from_row(row) for row in self._db.fetchall(sql + _NEWEST_FIRST, params)]

    def find(self, namespace: str, value: str) -> list[Fact]:
        """Active facts of exactly this namespace whose value equals ``value`` (ASCII case
        ignored), newest first; an index lookup, whatever the namespace's size."""
        return [
            fact_from_row(row)
            for row in self._db.fetchall(_FIND + _NEWEST_FIRST, (namespace, value))
        ]

    def history(self, namespace: str, field: str | None) -> list[Fact]:
        """Every row ever stored for ``field`` in ``namespace`` (any status), oldest first;
        ``None`` for the observations, which have no field."""
        return [fact_from_row(row) for row in self._db.fetchall(_HISTORY, (namespace, field))]

    def search(self, namespace_prefix: str, query: str, *, limit: int) -> list[Fact]:
        """Active facts under ``namespace_prefix`` matching the words of ``query``, best first.

        ``query`` is plain text; FTS5 syntax in it is treated as words. Every fact matching a
        searched word is weighed from the index's posting lists (bm25, ``flynn.memory.bm25``)
        and only the best few are read. Counts, lists and decoded facts are kept until any fact
        changes (``generation``): facts change seldom, so most searches query no index at all.
        """
        if limit <= 0:
            return []
        generation = self.generation()
        plan = self._planner.plan(query, generation=generation, namespace_prefix=namespace_prefix)
        if plan is None:
            return []
        matches = TermMatches(self._planner.postings(plan, generation=generation))
        root, below, after = scope_params(namespace_prefix)

        def read(ids: Sequence[int]) -> list[Fact]:
            return [
                fact
                for fact in self._read(ids, generation)
                if fact.status == "active"
                and (fact.namespace == root or below <= fact.namespace < after)
            ]

        return [fact for _, fact in read_best(matches, read, _fact_id, _fact_text, limit=limit)]

    def _read(self, ids: Sequence[int], generation: tuple[int, int]) -> list[Fact]:
        """The facts with these ids, kept decoded while ``generation`` stays the same."""
        if generation != self._cached_generation or len(self._cached) > _MAX_CACHED:
            self._cached = {}
            self._cached_generation = generation
        cached = self._cached
        found = [cached[key] for key in ids if key in cached]
        missing = [key for key in ids if key not in cached]
        if missing:
            for row in self._db.fetchall(_BY_ID, (json.dumps(missing),)):
                fact = cached[row[0]] = fact_from_row(row)
                found.append(fact)
        return found

    def forget(self, namespace_prefix: str, *, field: str | None = None) -> int:
        """Deletes rows (and their index rows) for real; returns how many."""
        self._db.note_write("facts")
        self._planner.forget_counts()
        if field is None:
            return self._db.execute(_FORGET, scope_params(namespace_prefix))
        return self._db.execute(_FORGET_FIELD, (*scope_params(namespace_prefix), field))

    def forget_chain(self, fact_id: int) -> int:
        """Deletes ``fact_id`` and every fact it superseded or that superseded it, for real;
        returns how many rows went (0 if the fact does not exist)."""
        self._db.note_write("facts")
        self._planner.forget_counts()
        return self._db.execute(_FORGET_CHAIN, {"id": fact_id})

    def _insert(self, fact: NewFact, *, supersedes: int | None, now: datetime) -> Fact:
        self._db.note_write("facts")
        at = encode_time(now)
        row = self._db.fetchone(
            _INSERT,
            (
                fact.namespace,
                fact.kind,
                fact.field,
                redact(fact.value)[0],  # refused upstream (``is_secret``); never stored here
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
        return fact_from_row(row)


def _fact_id(fact: Fact) -> int:
    return fact.id


def _fact_text(fact: Fact) -> str:
    """What the index holds of a fact (both its columns)."""
    return f"{fact.field} {fact.value}" if fact.field else fact.value


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
