"""The SQLite memory as one object: the database plus every store built on it, and forgetting
(a person's rows of every part of the database, the schedule's too, through its ``SchemaPart``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import TracebackType

from flynn.memory.costs import SqliteCosts
from flynn.memory.database import Database
from flynn.memory.documents import SqliteDocuments
from flynn.memory.facts import SqliteFacts
from flynn.memory.forgetting import SqliteForgetting
from flynn.memory.graph import SqliteGraph
from flynn.memory.history import SqliteHistory
from flynn.memory.inbound import SqliteInboundLog
from flynn.memory.migrations import Schema
from flynn.memory.store import DerivedRelations, NoDerivedRelations
from flynn.memory.team import SqliteTeam
from flynn.memory.telegram_updates import SqliteTelegramUpdates

RelationsOf = Callable[[SqliteGraph], DerivedRelations]
"""Builds what forgetting retires besides facts (``flynn.learning.fact_relations``)."""


class SqliteMemory:
    """Documents, facts, history, the knowledge graph, costs and the inbound log sharing one
    ``Database``; closing it closes them all."""

    def __init__(self, db: Database, relations: RelationsOf | None = None) -> None:
        self.db = db
        self.documents = SqliteDocuments(db)
        self.facts = SqliteFacts(db)
        self.history = SqliteHistory(db)
        self.costs = SqliteCosts(db)
        self.inbound = SqliteInboundLog(db)
        self.graph = SqliteGraph(db)
        self.team = SqliteTeam(db)
        self.telegram_updates = SqliteTelegramUpdates(db)
        # What else a fact stated (the graph relations learning derives from it): forgetting
        # the fact retires them too. Without it, only the facts and their mentions go.
        derived = relations(self.graph) if relations is not None else NoDerivedRelations()
        self._forgetting = SqliteForgetting(db, derived)
        # The parts above memory with tables here forget a person's rows of them with the rest.
        self._also_forgetting = [part.forgetting(db) for part in db.schema.parts]

    @classmethod
    def open(cls, path: Path, schema: Schema, relations: RelationsOf | None = None) -> SqliteMemory:
        """Opens and migrates the database at ``path`` to ``schema`` (``Database.open``); raises
        ``StoreError`` if it cannot."""
        return cls(Database.open(path, schema), relations)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SqliteMemory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def forget_namespace(self, prefix: str) -> dict[str, int]:
        """Deletes for real everything stored under ``prefix`` (``prefix`` or ``prefix/...``):
        documents, facts, messages with their index rows and tool steps, sessions, graph entities
        with their relations and mentions, and each part's rows above memory (the schedule's jobs
        with their pushes), in one transaction.

        Returns the rows deleted per table. Costs carry no namespace and are kept.
        Raises ``ValueError`` for an empty prefix, ``StoreError`` if the delete fails (then
        nothing was deleted).
        """
        with self.db.transaction():
            counts = {
                "documents": self.documents.forget(prefix),
                "facts": self.facts.forget(prefix),
            }
            counts["messages"], counts["sessions"] = self.history.forget_counted(prefix)
            counts["entities"] = self.graph.forget(prefix)
            counts["embeddings"] = self._forgetting.forget_embeddings(prefix)
            for forgetting in self._also_forgetting:
                counts.update(forgetting.forget_namespace(prefix))
            self.inbound.forget(prefix)
        return counts

    def forget_field(self, prefix: str, field: str) -> dict[str, int]:
        """Every row of ``field`` under ``prefix``, with its values redacted wherever messages,
        summaries and documents there mention them (``flynn.memory.forgetting``)."""
        self.facts.note_changed()
        return self._forgetting.forget_field(prefix, field)

    def forget_chain(self, prefix: str, fact_id: int) -> dict[str, int] | None:
        """The fact's whole chain, redacted like ``forget_field``; ``None`` if the fact is not
        under ``prefix``."""
        self.facts.note_changed()
        return self._forgetting.forget_chain(prefix, fact_id)

    def forget_range(self, prefix: str, *, since: datetime, until: datetime) -> dict[str, int]:
        """Everything under ``prefix`` written in ``[since, until)``, and the summaries and
        working memory that may repeat it (``flynn.memory.forgetting``)."""
        self.facts.note_changed()
        return self._forgetting.forget_range(prefix, since=since, until=until)
