"""Facts in SQLite: field/value and free-text observations that are superseded, never overwritten.

The supersession chain (``supersedes`` links) keeps what flynn believed and when it changed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import datetime

from flynn.errors import StoreError
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.fts import FtsQueryPlanner
from flynn.memory.scope import namespace_scope, scope_params
from flynn.memory.store import Fact, FactKind, NewFact

_COLUMNS = (
    "id, namespace, kind, field, value, confidence, source, status, supersedes, session, channel, "
    "created_at, updated_at, message_id"
)
_F_COLUMNS = ", ".join(f"f.{column.strip()}" for column in _COLUMNS.split(","))

_INSERT = f"""
INSERT INTO facts (namespace, kind, field, value, confidence, source, status, supersedes,
                   session, channel, created_at, updated_at, message_id)
VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?)
RETURNING {_COLUMNS}
"""
_SET_STATUS = "UPDATE facts SET status = ?, updated_at = ? WHERE id = ? AND status = 'active'"
_GET = f"SELECT {_COLUMNS} FROM facts WHERE id = ?"
_ACTIVE = f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND status = 'active'"
_NEWEST_FIRST = " ORDER BY created_at DESC, id DESC"
_FIND = (
    f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND value = ? COLLATE NOCASE"
    " AND status = 'active'"
)
_HISTORY = f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND field = ? ORDER BY created_at, id"
# CROSS JOIN pins the FTS table as the outer loop: the planner would otherwise be free to walk
# every fact of the namespace and probe the index once per row. ``rank`` is bm25; FTS5 sorts by
# it internally, so LIMIT stops after the best rows.
_SEARCH = f"""
SELECT {_F_COLUMNS}
FROM facts_fts CROSS JOIN facts AS f ON f.id = facts_fts.rowid
WHERE facts_fts MATCH ? AND facts_fts.rowid >= ? AND f.status = 'active'
    AND {namespace_scope("f.namespace")}
ORDER BY facts_fts.rank
LIMIT ?
"""
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
        self._db = db
        self._planner = FtsQueryPlanner(db, "facts_fts")
        self._writes = 0

    def note_changed(self) -> None:
        """For writers that change facts with their own SQL (``forgetting``): readers that
        cache by ``generation`` must see it change."""
        self._writes += 1

    def generation(self) -> tuple[int, int]:
        """Differs after any change to any fact, by this store or by another process."""
        return self._writes, self._db.data_version()

    def add(self, fact: NewFact, *, now: datetime) -> Fact:
        return self._insert(fact, supersedes=None, now=now)

    def supersede(self, old_id: int, new: NewFact, *, now: datetime) -> Fact:
        """Marks ``old_id`` superseded and stores ``new`` linked to it, in one transaction.

        Raises ``StoreError`` (and changes nothing) if ``old_id`` is missing or not active.
        """
        self._writes += 1
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
        self._writes += 1
        if self._db.execute(_SET_STATUS, ("deleted", encode_time(now), fact_id)) != 1:
            raise StoreError(f"fact {fact_id} is not active (or does not exist)")

    def get(self, fact_id: int) -> Fact | None:
        row = self._db.fetchone(_GET, (fact_id,))
        return None if row is None else _fact(row)

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
        return [_fact(row) for row in self._db.fetchall(sql + _NEWEST_FIRST, params)]

    def find(self, namespace: str, value: str) -> list[Fact]:
        """Active facts of exactly this namespace whose value equals ``value`` (ASCII case
        ignored), newest first; an index lookup, whatever the namespace's size."""
        return [_fact(row) for row in self._db.fetchall(_FIND + _NEWEST_FIRST, (namespace, value))]

    def history(self, namespace: str, field: str) -> list[Fact]:
        """Every row ever stored for ``field`` in ``namespace`` (any status), oldest first."""
        return [_fact(row) for row in self._db.fetchall(_HISTORY, (namespace, field))]

    def search(self, namespace_prefix: str, query: str, *, limit: int) -> list[Fact]:
        """Active facts under ``namespace_prefix`` matching the words of ``query``, best first.

        ``query`` is plain text; FTS5 syntax in it is treated as words.
        """
        if limit <= 0:
            return []
        plan = self._planner.plan(query)
        if plan is None:
            return []
        params = (plan.expression, plan.min_rowid, *scope_params(namespace_prefix), limit)
        return [_fact(row) for row in self._db.fetchall(_SEARCH, params)]

    def forget(self, namespace_prefix: str, *, field: str | None = None) -> int:
        """Deletes rows (and their index rows) for real; returns how many."""
        self._writes += 1
        self._planner.forget_counts()
        if field is None:
            return self._db.execute(_FORGET, scope_params(namespace_prefix))
        return self._db.execute(_FORGET_FIELD, (*scope_params(namespace_prefix), field))

    def forget_chain(self, fact_id: int) -> int:
        """Deletes ``fact_id`` and every fact it superseded or that superseded it, for real;
        returns how many rows went (0 if the fact does not exist)."""
        self._writes += 1
        self._planner.forget_counts()
        return self._db.execute(_FORGET_CHAIN, {"id": fact_id})

    def _insert(self, fact: NewFact, *, supersedes: int | None, now: datetime) -> Fact:
        self._writes += 1
        at = encode_time(now)
        row = self._db.fetchone(
            _INSERT,
            (
                fact.namespace,
                fact.kind,
                fact.field,
                fact.value,
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
        return _fact(row)


def _fact(row: sqlite3.Row) -> Fact:
    return Fact(
        id=row["id"],
        namespace=row["namespace"],
        kind=row["kind"],
        field=row["field"],
        value=row["value"],
        # RETURNING hands back a whole-number REAL as an int; the dataclass promises a float.
        confidence=float(row["confidence"]),
        source=row["source"],
        status=row["status"],
        supersedes=row["supersedes"],
        session=row["session"],
        channel=row["channel"],
        created_at=decode_time(row["created_at"]),
        updated_at=decode_time(row["updated_at"]),
        message_id=row["message_id"],
    )
