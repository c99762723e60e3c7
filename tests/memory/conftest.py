"""Real databases for the memory tests: SQLite in tmp_path, and for the stores that have both
backends, the same contract tests on PostgreSQL too (a real server: ``tests/postgres_server.py``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from person_files_place import PERSON_FILES_CLOCK, PersonFilesPlace

from flynn.learning.fact_relations import FactRelations
from flynn.memory.costs import Costs, Prices, SqliteCosts
from flynn.memory.embedding_progress import PersonProgress, embedding_progress
from flynn.memory.facts import SqlFacts
from flynn.memory.fts_words import FtsWords
from flynn.memory.graph import SqlGraph
from flynn.memory.inbound import SqlInboundLog
from flynn.memory.pairing import SqlitePairing, SqlPairing
from flynn.memory.person_tokens import SqlitePersonTokens, SqlPersonTokens
from flynn.memory.sql import NamedRow, TransactionalSql
from flynn.memory.store import Documents, History
from flynn.memory.stores import SqliteMemory
from flynn.memory.team import SqlTeam
from flynn.memory.vectors import Embedder, SqliteVectors, SqlVectors
from flynn.people.documents import DocumentsPersonFiles
from flynn.people.files import DirectoryPersonFiles
from flynn.people.store import PersonFiles
from flynn.postgres.costs import PostgresCosts
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.documents import PostgresDocuments
from flynn.postgres.history import PostgresHistory
from flynn.postgres.memory import PostgresMemory
from flynn.postgres.pairing import PostgresPairing
from flynn.postgres.person_tokens import PostgresPersonTokens
from flynn.postgres.vectors import PostgresVectors
from flynn.postgres.vectors import embedding_progress as postgres_embedding_progress
from flynn.schedule.migrations import SCHEMA


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "flynn.db"


@pytest.fixture
def memory(db_path: Path) -> Iterator[SqliteMemory]:
    # As the daemon composes it: forgetting a fact retires the graph relations it stated.
    with SqliteMemory.open(db_path, SCHEMA, FactRelations) as opened:
        yield opened


CostsWith = Callable[[Callable[[], datetime], Prices | None], Costs]
"""Builds another ``Costs`` on the same database, with its own clock and prices."""


@dataclass(frozen=True, slots=True)
class Backend:
    """The stores that exist on both backends, on one of them."""

    name: str
    documents: Documents
    costs: Costs
    costs_with: CostsWith


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Backend]:
    """Each contract test runs once per backend; the PostgreSQL run gets a schema of its own."""
    if request.param == "sqlite":
        with SqliteMemory.open(db_path, SCHEMA) as memory:
            db = memory.db
            yield Backend(
                "sqlite",
                memory.documents,
                memory.costs,
                lambda clock, prices: SqliteCosts(db, clock=clock, prices=prices),
            )
        return
    url: str = request.getfixturevalue("postgres_url")
    with PostgresDatabase.open(url) as pg:
        yield Backend(
            "postgresql",
            PostgresDocuments(pg),
            PostgresCosts(pg),
            lambda clock, prices: PostgresCosts(pg, clock=clock, prices=prices),
        )


@pytest.fixture
def documents(backend: Backend) -> Documents:
    return backend.documents


@pytest.fixture
def costs(backend: Backend) -> Costs:
    return backend.costs


# --- History and vectors on both backends (issue 26: messages, their search, vectors) ---------


@dataclass(frozen=True, slots=True)
class HistoryBackend:
    """``History`` on one backend, with plain SQL on its database (``?`` placeholders)."""

    name: str
    history: History
    count: Callable[[str], int]
    """The rows a query returns."""
    indexed: Callable[[str], int]
    """The messages the full-text index holds a word in."""
    execute: Callable[[str, tuple[object, ...]], int]


@pytest.fixture(params=["sqlite", "postgresql"])
def history_backend(request: pytest.FixtureRequest, db_path: Path) -> Iterator[HistoryBackend]:
    """Each history contract test runs once per backend."""
    if request.param == "sqlite":
        with SqliteMemory.open(db_path, SCHEMA) as memory:
            db = memory.db
            yield HistoryBackend(
                "sqlite",
                memory.history,
                _counter(db.fetchone),
                lambda word: _counter(db.fetchone)(
                    f"SELECT 1 FROM messages_fts WHERE messages_fts MATCH '\"{word}\"'"
                ),
                db.execute,
            )
        return
    url: str = request.getfixturevalue("postgres_url")
    words = FtsWords()
    with PostgresDatabase.open(url) as pg:
        yield HistoryBackend(
            "postgresql",
            PostgresHistory(pg, words=words),
            _counter(pg.fetchone),
            lambda word: _counter(pg.fetchone)(
                f"SELECT 1 FROM message_terms WHERE term = '{words.phrase(word)[0]}'"
            ),
            lambda sql, params: pg.execute(sql.replace("?", "%s"), params),
        )


def _counter(fetchone: Callable[[str], NamedRow | None]) -> Callable[[str], int]:
    def count(sql: str) -> int:
        row = fetchone(f"SELECT count(*) AS n FROM ({sql}) AS counted")
        assert row is not None
        return int(row["n"])

    return count


@dataclass(frozen=True, slots=True)
class VectorsBackend:
    """Message vectors on one backend, beside its ``History``."""

    name: str
    history: History
    vectors: Callable[[Embedder], SqlVectors]
    """A ``VectorSearch`` with its own cache, on the backend's database."""
    count: Callable[[str], int]
    forget: Callable[[str], object]
    """Forgets a namespace the way the backend's forgetting does."""
    progress: Callable[[str], list[PersonProgress]]
    """``embedding_progress`` for a model."""


@pytest.fixture(params=["sqlite", "postgresql"])
def vectors_backend(request: pytest.FixtureRequest, db_path: Path) -> Iterator[VectorsBackend]:
    """Each vectors contract test runs once per backend."""
    if request.param == "sqlite":
        with SqliteMemory.open(db_path, SCHEMA) as memory:
            db = memory.db
            yield VectorsBackend(
                "sqlite",
                memory.history,
                lambda embedder: SqliteVectors(db, embedder),
                _counter(db.fetchone),
                memory.forget_namespace,
                lambda model: embedding_progress(db, model),
            )
        return
    url: str = request.getfixturevalue("postgres_url")
    with PostgresDatabase.open(url) as pg:
        history = PostgresHistory(pg)
        yield VectorsBackend(
            "postgresql",
            history,
            lambda embedder: PostgresVectors(pg, embedder),
            _counter(pg.fetchone),
            history.forget,
            lambda model: postgres_embedding_progress(pg, model),
        )


# --- A person's files (``flynn.people``): the ``PersonFiles`` contract in a folder, and as
# documents on SQLite and on PostgreSQL. Each place also says how a person is forgotten there
# (``flynn memory forget --all``: the database's rows of the person, then their files) and how
# a second worker on the same storage reaches the same files.


@pytest.fixture(params=["directory", "sqlite", "postgresql"])
def person_files_place(
    request: pytest.FixtureRequest, tmp_path: Path, db_path: Path
) -> Iterator[PersonFilesPlace]:
    """Each person-files contract test runs in a folder (today's default) and as documents on
    both backends."""
    clock = lambda: PERSON_FILES_CLOCK  # noqa: E731
    if request.param == "postgresql":
        url: str = request.getfixturevalue("postgres_url")
        with contextlib.ExitStack() as stack:
            pg_memory = stack.enter_context(PostgresMemory.open(url))
            files = DocumentsPersonFiles(pg_memory.documents, clock)

            def forget_in_postgres(namespace: str) -> None:
                pg_memory.forget_namespace(namespace)
                files.forget(namespace)

            def postgres_worker() -> PersonFiles:
                other = stack.enter_context(PostgresDatabase.open(url))
                return DocumentsPersonFiles(PostgresDocuments(other), clock)

            yield PersonFilesPlace("postgresql", files, forget_in_postgres, postgres_worker)
        return
    with contextlib.ExitStack() as stack:
        memory = stack.enter_context(SqliteMemory.open(db_path, SCHEMA))
        data_dir = tmp_path / "data"
        if request.param == "directory":
            files = DirectoryPersonFiles(data_dir)

            def directory_worker() -> PersonFiles:
                return DirectoryPersonFiles(data_dir)

            worker = directory_worker
        else:
            files = DocumentsPersonFiles(memory.documents, clock)

            def sqlite_worker() -> PersonFiles:
                other = stack.enter_context(SqliteMemory.open(db_path, SCHEMA))
                return DocumentsPersonFiles(other.documents, clock)

            worker = sqlite_worker

        def forget_in_sqlite(namespace: str) -> None:
            memory.forget_namespace(namespace)
            files.forget(namespace)

        yield PersonFilesPlace(request.param, files, forget_in_sqlite, worker)


@pytest.fixture
def person_files(person_files_place: PersonFilesPlace) -> PersonFiles:
    return person_files_place.files


# --- Facts, the knowledge graph, intake, team documents, person tokens and pairing on both
# backends (issue 26). The stores of this block, on one backend: the contract tests of
# each take ``stores`` (or a fixture made of it) and run once per backend.


@dataclass(frozen=True, slots=True)
class Stores:
    """The stores on one backend; ``name`` is ``sqlite`` or ``postgresql``, ``sql`` the
    database itself (for a test's own statements, written for both), and ``reopened`` opens
    the same database again (another process, or this one after a restart)."""

    name: str
    sql: TransactionalSql
    facts: SqlFacts
    graph: SqlGraph
    inbound: SqlInboundLog
    tokens: SqlPersonTokens
    pairing: Callable[..., SqlPairing]
    """Pairing with its ``ttl`` and ``max_pending`` (keywords, defaults as the store's)."""
    team: SqlTeam
    history: History
    forget_namespace: Callable[[str], dict[str, int]]
    """The memory's forgetting of a person, every store at once."""
    reopened: Callable[[], AbstractContextManager[Stores]]


@contextmanager
def _sqlite_stores(db_path: Path) -> Iterator[Stores]:
    with SqliteMemory.open(db_path, SCHEMA, FactRelations) as memory:
        yield Stores(
            "sqlite",
            memory.db,
            memory.facts,
            memory.graph,
            memory.inbound,
            SqlitePersonTokens(memory.db),
            functools.partial(SqlitePairing, memory.db),
            memory.team,
            memory.history,
            memory.forget_namespace,
            lambda: _sqlite_stores(db_path),
        )


@contextmanager
def _postgres_stores(url: str) -> Iterator[Stores]:
    with PostgresMemory.open(url) as memory:
        pg = memory.db
        yield Stores(
            "postgresql",
            pg,
            memory.facts,
            memory.graph,
            memory.inbound,
            PostgresPersonTokens(pg),
            functools.partial(PostgresPairing, pg),
            memory.team,
            memory.history,
            memory.forget_namespace,
            lambda: _postgres_stores(url),
        )


@pytest.fixture(params=["sqlite", "postgresql"])
def stores(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Stores]:
    """Each contract test runs once per backend; the PostgreSQL run gets a schema of its own."""
    if request.param == "sqlite":
        with _sqlite_stores(db_path) as opened:
            yield opened
        return
    with _postgres_stores(request.getfixturevalue("postgres_url")) as opened:
        yield opened


@pytest.fixture
def facts(stores: Stores) -> SqlFacts:
    return stores.facts


@pytest.fixture
def graph(stores: Stores) -> SqlGraph:
    return stores.graph


@pytest.fixture
def inbound(stores: Stores) -> SqlInboundLog:
    return stores.inbound
