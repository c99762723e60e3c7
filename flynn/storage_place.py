"""Where Flynn keeps everything, decided here once for the daemon and the commands: SQLite in
``data_dir`` (without ``storage.url``, the default), or the PostgreSQL database ``storage.url``
names, which several workers share (``docs/postgresql.md``). ``open_storage`` hands back the
memory and what else the composition root builds from (schedule, tokens, health, recall's
threads), the same on both."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from flynn.attachments import FileShelf, FolderShelf
from flynn.coordination import Coordination, LocalCoordination
from flynn.errors import postgres_driver_missing
from flynn.gateway_token import KeptDigest
from flynn.learning.fact_relations import FactRelations
from flynn.memory.browse import MemoryBrowsing, SqliteMemoryBrowser
from flynn.memory.checkpointer import WalCheckpointer
from flynn.memory.costs import Prices, SqlCosts, SqliteCosts
from flynn.memory.database import Database
from flynn.memory.documents import SqlDocuments
from flynn.memory.embedding_progress import PersonProgress, embedding_progress
from flynn.memory.facts import SqlFacts, SqliteFacts
from flynn.memory.graph import SqlGraph, SqliteGraph
from flynn.memory.graph_store import Graph
from flynn.memory.health import Probed, StorageHealth
from flynn.memory.history import SqliteHistory
from flynn.memory.inbound import SqlInboundLog
from flynn.memory.pairing import SqlitePairing, SqlPairing
from flynn.memory.person_tokens import SqlitePersonTokens, SqlPersonTokens
from flynn.memory.redaction import SqliteRedaction, SqlRedaction
from flynn.memory.sql import TransactionalSql
from flynn.memory.store import Facts, History
from flynn.memory.stores import SqliteMemory
from flynn.memory.team import SqliteTeam, SqlTeam
from flynn.memory.telegram_updates import SqlTelegramUpdates
from flynn.memory.vector_index import VectorIndex, in_files
from flynn.memory.vectors import Embedder, SqliteVectors, SqlVectors
from flynn.people.store import PersonFiles
from flynn.people_place import person_files
from flynn.recall.recall import Recall
from flynn.recall.worker import RecallWorker
from flynn.schedule.jobs import PushLimits
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.runs import SqliteRuns, SqlRuns
from flynn.schedule.sqlite import SqlitePushes, SqliteSchedule
from flynn.schedule.store import SqlPushes
from flynn.settings import Settings

if TYPE_CHECKING:
    # Imported where used: psycopg and its pool are 14 MiB resident, which a daemon on SQLite
    # (the default) never needs.
    from flynn.postgres.history import PostgresHistory
    from flynn.postgres.memory import PostgresMemory
    from flynn.schedule.postgres import PostgresSchedule

DATABASE_FILE = "flynn.db"


class StorageDatabase(TransactionalSql, Probed, Protocol):
    """The database under the stores (SQLite's ``Database``, ``PostgresDatabase``)."""

    def verify(self) -> None:
        """Raises ``StorageUnusable`` when the database cannot serve (corrupt, unwritable,
        unreachable)."""
        ...

    def close(self) -> None: ...


class Memory(Protocol):
    """The database and every store on it (``SqliteMemory``, ``PostgresMemory``), and
    forgetting a person in every store at once."""

    @property
    def db(self) -> StorageDatabase: ...

    @property
    def documents(self) -> SqlDocuments: ...

    @property
    def facts(self) -> SqlFacts: ...

    @property
    def history(self) -> SqliteHistory | PostgresHistory: ...

    @property
    def costs(self) -> SqlCosts: ...

    @property
    def inbound(self) -> SqlInboundLog: ...

    @property
    def graph(self) -> SqlGraph: ...

    @property
    def team(self) -> SqlTeam: ...

    @property
    def telegram_updates(self) -> SqlTelegramUpdates: ...

    def forget_namespace(self, prefix: str) -> dict[str, int]: ...

    def close(self) -> None: ...


class Redacting(Protocol):
    """Forgetting less than a person, with what messages and summaries said of it redacted
    (``SqliteMemory``; ``flynn.memory.forgetting``)."""

    def forget_field(self, prefix: str, field: str) -> dict[str, int]: ...

    def forget_chain(self, prefix: str, fact_id: int) -> dict[str, int] | None: ...

    def forget_range(self, prefix: str, *, since: datetime, until: datetime) -> dict[str, int]: ...


@dataclass(frozen=True, slots=True)
class PageStores:
    """What the memory page reads (``memory``'s stores) and forgets one fact through (the
    backend's ``redacting``)."""

    memory: Memory
    redacting: Redacting

    @property
    def documents(self) -> SqlDocuments:
        return self.memory.documents

    @property
    def facts(self) -> SqlFacts:
        return self.memory.facts

    @property
    def graph(self) -> SqlGraph:
        return self.memory.graph

    def forget_chain(self, prefix: str, fact_id: int) -> dict[str, int] | None:
        return self.redacting.forget_chain(prefix, fact_id)


@dataclass(frozen=True, slots=True)
class ReadStores:
    """The stores one recall thread reads through (``Storage.recall_worker``)."""

    facts: Facts
    history: History
    graph: Graph
    team: SqlTeam
    vectors: SqlVectors | None


class Storage(Protocol):
    """An opened backend: the memory, and what else lives in its database."""

    memory: Memory
    schedule: SqliteSchedule | PostgresSchedule
    pushes: SqlPushes
    runs: SqlRuns
    pairing: SqlPairing
    person_tokens: SqlPersonTokens
    gateway_token: KeptDigest | None
    """Where a generated gateway token is kept as a digest; ``None``: in the data dir."""
    redacting: Redacting
    """``flynn memory forget --field/--fact/--since``, ``/forget FIELD`` and the memory page's
    forget: the memory itself, on either backend."""
    shared: bool
    """Several workers may share it: person files are kept in it, no data-dir lock."""
    where: str
    """The database as it may be shown (a path, or a URL without its password)."""

    def costs(self, *, clock: Callable[[], datetime], prices: Prices | None) -> SqlCosts: ...

    def vectors(
        self, embedder: Embedder, *, index: VectorIndex | None = None, data_dir: Path | None = None
    ) -> SqlVectors:
        """The stored vectors, searched through ``index`` (new when ``None``: with ``data_dir``,
        the daemon's, its listed rows in files there, ``flynn.memory.vector_index.in_files``)."""
        ...

    def embedding_progress(self, model: str) -> list[PersonProgress]: ...

    def browser(self) -> MemoryBrowsing: ...

    def redaction(self) -> SqlRedaction:
        """The stored rows as ``flynn.memory.redaction`` redacts them again."""
        ...

    def file_shelf(self, data_dir: Path) -> FileShelf:
        """Where the pictures and files people send are kept: their folder under ``data_dir``,
        or (PostgreSQL) rows every worker reads."""
        ...

    def page_stores(self) -> PageStores:
        """What the memory page reads, and forgets one fact through."""
        ...

    def checkpointer(self) -> WalCheckpointer | None:
        """What moves SQLite's write-ahead log into the file; ``None`` on PostgreSQL."""
        ...

    def health(self) -> StorageHealth:
        """What ``/readyz`` says of the database: probed on the event loop (SQLite: a file, well
        under a millisecond), or in a thread (PostgreSQL: a server that may be gone)."""
        ...

    def coordination(self, clock: Callable[[], datetime]) -> Coordination:
        """How this process shares the work with other workers on the database: nobody else on
        SQLite (one process); on PostgreSQL session locks, intake leases, LISTEN/NOTIFY and the
        elected poller (docs/postgresql.md, "Several workers")."""
        ...

    def recall_worker(
        self,
        build: Callable[[ReadStores], Recall],
        embedder: Embedder | None,
        index: VectorIndex | None,
    ) -> RecallWorker:
        """Recall in worker threads, each over ``build(stores)`` (``index``: the loop's
        vectors' memory, shared)."""
        ...

    def close(self) -> None:
        """Closes the database (the stores on it with it)."""
        ...


def database_path(settings: Settings) -> Path:
    """SQLite's file (without ``storage.url``)."""
    return settings.data_dir / DATABASE_FILE


def storage_url(settings: Settings) -> str | None:
    """``storage.url`` (a secret: never shown as it is), ``None`` for SQLite in ``data_dir``."""
    url = settings.storage.url
    return None if url is None else url.get_secret_value()


def open_storage(settings: Settings) -> Storage:
    """Opens (and migrates) the configured backend. Raises ``StorageUnusable`` (an unusable
    SQLite file, a server that cannot be reached or refuses the login: said without the
    password), ``StoreError`` otherwise."""
    url, limits = storage_url(settings), push_limits(settings)
    storage: _SqliteStorage | _PostgresStorage
    if url is None:
        memory = SqliteMemory.open(database_path(settings), SCHEMA, FactRelations)
        storage, created = _SqliteStorage(memory, limits), memory.db.created
    else:
        try:
            from flynn.postgres.memory import PostgresMemory
        except ModuleNotFoundError as exc:
            if (exc.name or "").partition(".")[0] != "psycopg":
                raise
            raise postgres_driver_missing("storage.url") from None
        from flynn.schedule.postgres import PostgresSchedule

        pg = PostgresMemory.open(url, [PostgresSchedule], FactRelations)
        storage, created = _PostgresStorage(pg, limits), pg.db.created
    if created:
        storage.redaction().stamp_current()
    return storage


def push_limits(settings: Settings) -> PushLimits:
    """The caps and expiry of waiting pushes (``schedule:``)."""
    section = settings.schedule
    return PushLimits(
        per_person=section.max_pending_per_person,
        total=section.max_pending_total,
        expire_after=timedelta(days=section.expire_after_days),
    )


def storage_files(
    storage: Storage, settings: Settings, clock: Callable[[], datetime]
) -> PersonFiles:
    """People's files where ``storage`` keeps them (``people_place.person_files``)."""
    return person_files(settings, storage.memory.documents, clock, shared_database=storage.shared)


@contextmanager
def opened_storage(settings: Settings) -> Iterator[Storage]:
    """``open_storage`` for a command: closed when the block ends."""
    storage = open_storage(settings)
    try:
        yield storage
    finally:
        storage.close()


class _Opened:
    """What both backends hold, as the ``Storage`` Protocol names it."""

    def __init__(
        self,
        memory: Memory,
        schedule: SqliteSchedule | PostgresSchedule,
        pushes: SqlPushes,
        runs: SqlRuns,
        access: tuple[SqlPairing, SqlPersonTokens, KeptDigest | None],
        redacting: Redacting,
        *,
        where: str,
    ) -> None:
        self.memory = memory
        self.schedule = schedule
        self.pushes = pushes
        self.runs = runs
        self.pairing, self.person_tokens, self.gateway_token = access
        self.redacting = redacting
        self.shared = self.gateway_token is not None
        self.where = where

    def close(self) -> None:
        self.memory.close()

    def page_stores(self) -> PageStores:
        return PageStores(self.memory, self.redacting)


class _SqliteStorage(_Opened):
    """One SQLite file; the generated gateway token stays in the data dir (no digest here)."""

    def __init__(self, memory: SqliteMemory, limits: PushLimits | None = None) -> None:
        db = self._db = memory.db
        access = (SqlitePairing(db), SqlitePersonTokens(db), None)
        schedule = SqliteSchedule(db, limits)
        pushes, runs = SqlitePushes(db, limits), SqliteRuns(db)
        super().__init__(memory, schedule, pushes, runs, access, memory, where=str(db.path))

    def costs(self, *, clock: Callable[[], datetime], prices: Prices | None) -> SqlCosts:
        return SqliteCosts(self._db, clock=clock, prices=prices)

    def vectors(
        self, embedder: Embedder, *, index: VectorIndex | None = None, data_dir: Path | None = None
    ) -> SqlVectors:
        return SqliteVectors(self._db, embedder, index=_index(index, data_dir))

    def embedding_progress(self, model: str) -> list[PersonProgress]:
        return embedding_progress(self._db, model)

    def browser(self) -> MemoryBrowsing:
        return SqliteMemoryBrowser(self._db)

    def redaction(self) -> SqlRedaction:
        return SqliteRedaction(self._db)

    def file_shelf(self, data_dir: Path) -> FileShelf:
        return FolderShelf()

    def coordination(self, clock: Callable[[], datetime]) -> Coordination:
        return LocalCoordination()

    def health(self) -> StorageHealth:
        return StorageHealth(self._db)

    def checkpointer(self) -> WalCheckpointer | None:
        return WalCheckpointer(self._db.path)

    def recall_worker(
        self,
        build: Callable[[ReadStores], Recall],
        embedder: Embedder | None,
        index: VectorIndex | None,
    ) -> RecallWorker:
        """A read connection per thread, as SQLite serves readers beside its one writer."""

        def reading(db: Database) -> Recall:
            vectors = None if embedder is None else SqliteVectors(db, embedder, index=index)
            return build(
                ReadStores(
                    SqliteFacts(db), SqliteHistory(db), SqliteGraph(db), SqliteTeam(db), vectors
                )
            )

        return RecallWorker(self._db, reading)


class _PostgresStorage(_Opened):
    """The database several workers share; the gateway token's digest is kept in it."""

    def __init__(self, memory: PostgresMemory, limits: PushLimits | None = None) -> None:
        from flynn.postgres.gateway_token import PostgresGatewayToken
        from flynn.postgres.pairing import PostgresPairing
        from flynn.postgres.person_tokens import PostgresPersonTokens
        from flynn.schedule.postgres import PostgresPushes, PostgresRuns, PostgresSchedule

        db = self._pg = memory.db
        self._uploads = memory.uploads
        access = (PostgresPairing(db), PostgresPersonTokens(db), PostgresGatewayToken(db))
        schedule = PostgresSchedule(db, limits)
        pushes, runs = PostgresPushes(db, limits), PostgresRuns(db)
        super().__init__(memory, schedule, pushes, runs, access, memory, where=db.shown_url)

    def costs(self, *, clock: Callable[[], datetime], prices: Prices | None) -> SqlCosts:
        from flynn.postgres.costs import PostgresCosts

        return PostgresCosts(self._pg, clock=clock, prices=prices)

    def vectors(
        self, embedder: Embedder, *, index: VectorIndex | None = None, data_dir: Path | None = None
    ) -> SqlVectors:
        from flynn.postgres.vectors import PostgresVectors

        # Each worker's own index, its files in its data dir (workers on one machine may share
        # it: the files have no names).
        return PostgresVectors(self._pg, embedder, index=_index(index, data_dir))

    def embedding_progress(self, model: str) -> list[PersonProgress]:
        from flynn.postgres import vectors

        return vectors.embedding_progress(self._pg, model)

    def browser(self) -> MemoryBrowsing:
        from flynn.postgres.browse import PostgresMemoryBrowser

        return PostgresMemoryBrowser(self._pg)

    def redaction(self) -> SqlRedaction:
        from flynn.postgres.redaction import PostgresRedaction

        return PostgresRedaction(self._pg)

    def file_shelf(self, data_dir: Path) -> FileShelf:
        return self._uploads(data_dir)

    def coordination(self, clock: Callable[[], datetime]) -> Coordination:
        from flynn.postgres.coordination import PostgresCoordination

        return PostgresCoordination(self._pg, clock=clock)

    def health(self) -> StorageHealth:
        # Probed often (a stopped server shows within seconds) and given time, since the
        # loop does not wait: a pool busy with recall for a moment is no outage.
        return StorageHealth(self._pg, in_thread=True, max_age_seconds=2.0, busy_timeout_ms=2000)

    def checkpointer(self) -> WalCheckpointer | None:
        return None

    def recall_worker(
        self,
        build: Callable[[ReadStores], Recall],
        embedder: Embedder | None,
        index: VectorIndex | None,
    ) -> RecallWorker:
        """Every thread on the one pooled database (thread-safe: a statement takes a pooled
        connection), each with stores of its own, so their caches are never shared."""
        from flynn.postgres.facts import PostgresFacts
        from flynn.postgres.graph import PostgresGraph
        from flynn.postgres.history import PostgresHistory
        from flynn.postgres.team import PostgresTeam
        from flynn.postgres.vectors import PostgresVectors

        db = self._pg

        def reading() -> Recall:
            vectors = None if embedder is None else PostgresVectors(db, embedder, index=index)
            return build(
                ReadStores(
                    PostgresFacts(db),
                    PostgresHistory(db),
                    PostgresGraph(db),
                    PostgresTeam(db),
                    vectors,
                )
            )

        return RecallWorker.sharing(reading)


def _index(index: VectorIndex | None, data_dir: Path | None) -> VectorIndex | None:
    return index if index is not None or data_dir is None else in_files(data_dir)
