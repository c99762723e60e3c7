"""The stores ``flynn bench recall`` writes through and ranks: the app's own (SQLite), or every
store (facts, history, the graph, vectors, team documents) on PostgreSQL, composed as the app
composes its own, for ``--storage-url``.

Until ``storage.url`` opens the app itself on PostgreSQL, the app is opened on SQLite in a
temporary directory (settings, the embedding model, the offline providers) and the PostgreSQL
stores are built beside it (``on_postgresql``); the run gets a schema of its own, dropped
afterwards (``own_schema``), so the database is left as it was. Once it does, the app is opened
with ``storage.url`` set to ``own_schema``'s string and used as it is (``BenchApp.of``).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal, Protocol

from psycopg.conninfo import make_conninfo

from flynn.app import App
from flynn.dates import parse_timezone
from flynn.learning.fact_relations import FactRelations
from flynn.learning.graph_extraction import RuleGraphExtractor
from flynn.learning.graph_ingest import GraphIngestor
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.facts import SqlFacts
from flynn.memory.graph import SqlGraph
from flynn.memory.sql import TransactionalSql
from flynn.memory.store import History
from flynn.memory.team import SqlTeam
from flynn.memory.vectors import SqlVectors
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.memory import PostgresMemory
from flynn.postgres.vectors import PostgresVectors
from flynn.recall.recall import Recall
from flynn.recall.team import TeamRecall
from flynn.sessions.services import SessionServices
from flynn.settings import Settings

StorageName = Literal["sqlite", "postgresql"]


class BenchStores(Protocol):
    """What the benchmark reads and writes of a memory (``SqliteMemory``, ``PostgresMemory``)."""

    @property
    def db(self) -> TransactionalSql: ...

    @property
    def history(self) -> History: ...

    @property
    def facts(self) -> SqlFacts: ...

    @property
    def graph(self) -> SqlGraph: ...

    @property
    def team(self) -> SqlTeam: ...


@dataclass(frozen=True, slots=True)
class BenchApp:
    """The app as the benchmark uses it: its settings and services (recall, the writer) over
    ``memory``, with the ``vectors`` both share (``None`` with embeddings off)."""

    settings: Settings
    memory: BenchStores
    services: SessionServices
    vectors: SqlVectors | None
    storage: StorageName

    @classmethod
    def of(cls, app: App) -> BenchApp:
        """The app's own stores."""
        vectors = app.services.recall.vectors
        assert vectors is None or isinstance(vectors, SqlVectors)
        return cls(app.settings, app.memory, app.services, vectors, "sqlite")


@contextmanager
def on_postgresql(app: App, url: str) -> Iterator[BenchApp]:
    """``app``'s services over PostgreSQL stores in a new schema of the database at ``url``
    (dropped on exit): the writer (history, rule extraction into facts, the graph, vectors)
    and recall (facts, history, the graph, vectors, team documents), as ``flynn.app`` composes
    them on SQLite. Raises ``StoreError`` when the database cannot be reached."""
    with own_schema(url) as scoped, PostgresMemory.open(scoped, relations=FactRelations) as memory:
        yield _composed(app, memory)


@contextmanager
def own_schema(url: str) -> Iterator[str]:
    """A connection string for the database at ``url`` whose connections see only a new,
    empty schema of the run's own (``search_path``), dropped with everything in it on exit."""
    schema = f"flynn_bench_{secrets.token_hex(4)}"
    with PostgresDatabase.open(url) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        try:
            yield make_conninfo(url, options=f"-c search_path={schema}")
        finally:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def _composed(app: App, memory: PostgresMemory) -> BenchApp:
    settings = app.settings.memory
    embeddings = app.embeddings
    vectors = PostgresVectors(memory.db, embeddings) if embeddings is not None else None
    zone = app.settings.persona.timezone
    reconciler = RuleReconciler(
        memory.facts,
        timezone=parse_timezone(zone) if zone else datetime.now().astimezone().tzinfo,
        relations=FactRelations(memory.graph),
    )
    writer = MemoryWriter(
        memory.history,
        RuleExtractor(),
        reconciler,
        graph=GraphIngestor(memory.graph, RuleGraphExtractor()),
        vectors=vectors,
    )
    recall = Recall(
        memory.facts,
        memory.history,
        threshold=settings.retrieval_threshold,
        depth=settings.recall_depth,
        graph=memory.graph,
        vectors=vectors,
        team=TeamRecall(memory.team, vectors=vectors),
    )
    services = replace(
        app.services,
        recall=recall,
        learning=replace(app.services.learning, writer=writer),
        recall_worker=None,
    )
    return BenchApp(app.settings, memory, services, vectors, "postgresql")
