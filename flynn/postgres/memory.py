"""The PostgreSQL memory as one object, as ``flynn.memory.stores.SqliteMemory`` is SQLite's: the
database plus every store built on it, and forgetting a person's rows of every store in one
transaction, the parts above memory (the schedule) included through the ``parts`` they hand in."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Protocol

from flynn.memory.forgetting import ForgettingDialect, SqlForgetting, forgetting_dialect
from flynn.memory.fts_words import FtsWords
from flynn.memory.namespaces import scope_params
from flynn.memory.sql import TransactionalSql
from flynn.memory.store import DerivedRelations, NoDerivedRelations
from flynn.postgres.costs import PostgresCosts
from flynn.postgres.database import PostgresDatabase, aware, psycopg_statement
from flynn.postgres.documents import PostgresDocuments
from flynn.postgres.facts import PostgresFacts
from flynn.postgres.graph import PostgresGraph
from flynn.postgres.history import PostgresHistory
from flynn.postgres.inbound import PostgresInboundLog
from flynn.postgres.team import PostgresTeam
from flynn.postgres.telegram_updates import PostgresTelegramUpdates
from flynn.postgres.uploads import PostgresUploads, forget_uploads

_FORGET_EMBEDDINGS = (
    "DELETE FROM embeddings WHERE (namespace = %s OR (namespace >= %s AND namespace < %s))"
)


class Forgetting(Protocol):
    """A store's share of forgetting a person."""

    def forget_namespace(self, prefix: str) -> dict[str, int]:
        """Deletes for real the rows under ``prefix``, inside the caller's transaction; returns
        how many per table."""
        ...


RelationsOf = Callable[[PostgresGraph], DerivedRelations]
"""Builds what forgetting retires besides facts (``flynn.learning.fact_relations``)."""
Part = Callable[[PostgresDatabase], Forgetting]
"""A part above memory with tables in the database (``flynn.schedule.postgres.PostgresSchedule``),
built on it to forget a person's rows with the rest; the composition root names them."""


class _Counted:
    """A store whose ``forget(prefix) -> int`` counts the rows of one table (``None``: rows
    forgotten but not reported, as SQLite's memory does not report them)."""

    def __init__(self, table: str | None, forget: Callable[[str], int]) -> None:
        self._table = table
        self._forget = forget

    def forget_namespace(self, prefix: str) -> dict[str, int]:
        count = self._forget(prefix)
        return {} if self._table is None else {self._table: count}


class _HistoryForgetting:
    """Messages (their terms, tool steps and vectors go with them, by cascade and trigger) and
    sessions, then what vectors are left under the prefix, as ``SqliteMemory`` counts them."""

    def __init__(self, db: PostgresDatabase, history: PostgresHistory) -> None:
        self._db = db
        self._history = history

    def forget_namespace(self, prefix: str) -> dict[str, int]:
        messages, sessions = self._history.forget_counted(prefix)
        embeddings = self._db.execute(_FORGET_EMBEDDINGS, scope_params(prefix))
        return {"messages": messages, "sessions": sessions, "embeddings": embeddings}


class PostgresMemory:
    """Documents (and working memory, a document), facts, the knowledge graph, costs, history,
    the inbound log, team documents and Telegram's webhook updates sharing one
    ``PostgresDatabase``; closing it closes them all."""

    def __init__(
        self,
        db: PostgresDatabase,
        parts: Iterable[Part] = (),
        relations: RelationsOf | None = None,
    ) -> None:
        self.db = db
        # FTS5's tokenizer, one for the stores searching by its words.
        words = FtsWords()
        self.documents = PostgresDocuments(db)
        self.facts = PostgresFacts(db, words=words)
        self.costs = PostgresCosts(db)
        self.history = PostgresHistory(db, words=words)
        self.inbound = PostgresInboundLog(db)
        self.graph = PostgresGraph(db)
        self.team = PostgresTeam(db, words=words)
        # Rows stored before their search had postings (a database of an earlier version).
        self.facts.index.index_missing()
        self.team.index.index_missing()
        self.telegram_updates = PostgresTelegramUpdates(db)
        # Each store's forgetting, in SQLite's order. Costs carry no namespace; team documents
        # are no person's, and tokens and pairing are keyed by person name (as on SQLite).
        self._forgetting: list[Forgetting] = [
            _Counted("documents", self.documents.forget),
            _Counted("facts", self.facts.forget),
            _HistoryForgetting(db, self.history),
            _Counted("entities", self.graph.forget),
        ]
        # The files a person sent, not counted (as on SQLite, where their folder's files are
        # counted by ``PersonFiles.forget``).
        self._forgetting.append(_Counted(None, lambda prefix: forget_uploads(db, prefix)))
        self._forgetting += [part(db) for part in parts]
        self._forgetting.append(_Counted(None, self.inbound.forget))
        # What else a fact stated (the graph relations learning derives from it): forgetting
        # the fact retires them too, as on SQLite.
        derived = relations(self.graph) if relations is not None else NoDerivedRelations()
        history = self.history

        def rewrite(_: TransactionalSql, message_id: int, content: str) -> bool:
            return history.rewrite(message_id, content)

        self._redacting = SqlForgetting(db, derived, postgres_forgetting(rewrite))

    @classmethod
    def open(
        cls,
        url: str,
        parts: Iterable[Part] = (),
        relations: RelationsOf | None = None,
        *,
        writer: str | None = None,
    ) -> PostgresMemory:
        """Connects to and migrates the database at ``url`` (``PostgresDatabase.open``, which
        says what ``writer`` is); raises ``StorageUnusable`` or ``StoreError`` (without the
        password) if it cannot."""
        return cls(PostgresDatabase.open(url, writer=writer), parts, relations)

    def uploads(self, data_dir: Path) -> PostgresUploads:
        """The pictures and files people send (``FileStore``'s shelf), for a worker whose
        people's folders are under ``data_dir``."""
        return PostgresUploads(self.db, data_dir)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> PostgresMemory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def forget_namespace(self, prefix: str) -> dict[str, int]:
        """Deletes for real everything stored under ``prefix`` (``prefix`` or ``prefix/...``) in
        every store and part, in one transaction: all of it goes, or (``StoreError``) nothing
        does. Returns the rows deleted per table. Raises ``ValueError`` for an empty prefix."""
        counts: dict[str, int] = {}
        with self.db.transaction():
            for forgetting in self._forgetting:
                counts.update(forgetting.forget_namespace(prefix))
        return counts

    def forget_field(self, prefix: str, field: str) -> dict[str, int]:
        """``SqliteMemory.forget_field``: every row of ``field`` under ``prefix``, its values
        redacted where messages, summaries and documents there mention them, in one
        transaction, counted alike."""
        return self._forgot(self._redacting.forget_field(prefix, field))

    def forget_chain(self, prefix: str, fact_id: int) -> dict[str, int] | None:
        """``SqliteMemory.forget_chain``: the fact's whole chain, redacted like
        ``forget_field``; ``None`` if the fact is not under ``prefix``."""
        forgot = self._redacting.forget_chain(prefix, fact_id)
        return None if forgot is None else self._forgot(forgot)

    def forget_range(self, prefix: str, *, since: datetime, until: datetime) -> dict[str, int]:
        """``SqliteMemory.forget_range``: everything under ``prefix`` written in
        ``[since, until)``, and the summaries and working memory that may repeat it."""
        return self._forgot(self._redacting.forget_range(prefix, since=since, until=until))

    def _forgot(self, counts: dict[str, int]) -> dict[str, int]:
        # Rows went: what the planners learnt of common words may no longer hold.
        self.history.forget_counts()
        self.facts.index.forget_counts()
        return counts


def postgres_forgetting(
    rewrite: Callable[[TransactionalSql, int, str], object],
) -> ForgettingDialect:
    """``flynn.memory.forgetting``'s statements on PostgreSQL; a message is rewritten by
    ``rewrite`` (its terms with it: ``PostgresHistory.rewrite``)."""
    return forgetting_dialect(
        psycopg_statement,
        true="true",
        false="false",
        least="least",
        chain_id=":id::bigint",
        time=aware,
        rewrite=rewrite,
    )
