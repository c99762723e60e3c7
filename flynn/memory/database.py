"""The SQLite connection: pragmas, numbered forward-only migrations, transactions, time encoding,
and the checks that say whether the file can be used at all (``verify`` at start, ``StorageHealth``
for ``/readyz``).

Every sqlite3 error is mapped to ``StoreError`` here, so nothing above sees the driver's exceptions.
The database and its ``-wal``/``-shm`` files are made 0600 whatever the umask.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType

from flynn.datadir import PRIVATE_DIR_MODE, make_private
from flynn.errors import StorageUnusable, StoreError

Params = Sequence[object] | Mapping[str, object]

_SCHEMA_V1 = """
CREATE TABLE documents (
    namespace  TEXT PRIMARY KEY,
    content    TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    expires_at TEXT
);

-- AUTOINCREMENT: fact ids are shown to people (``memory forget``) and linked by ``supersedes``,
-- so an id must never be handed out twice, even after the newest row is forgotten.
CREATE TABLE facts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    field      TEXT,
    value      TEXT NOT NULL,
    confidence REAL NOT NULL,
    source     TEXT NOT NULL,
    status     TEXT NOT NULL DEFAULT 'active'
               CHECK (status IN ('active', 'superseded', 'deleted')),
    supersedes INTEGER REFERENCES facts(id) ON DELETE SET NULL,
    session    TEXT,
    channel    TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX facts_namespace_status_field ON facts(namespace, status, field);
CREATE INDEX facts_namespace_field ON facts(namespace, field);
-- Walks supersession chains forward, and keeps ON DELETE SET NULL from scanning the table.
CREATE INDEX facts_supersedes ON facts(supersedes);

CREATE VIRTUAL TABLE facts_fts USING fts5(
    field, value, content='facts', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, field, value) VALUES (new.id, new.field, new.value);
END;
CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, field, value)
    VALUES ('delete', old.id, old.field, old.value);
END;
CREATE TRIGGER facts_fts_update AFTER UPDATE OF field, value ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, field, value)
    VALUES ('delete', old.id, old.field, old.value);
    INSERT INTO facts_fts(rowid, field, value) VALUES (new.id, new.field, new.value);
END;

CREATE TABLE sessions (
    key                TEXT PRIMARY KEY,
    namespace          TEXT NOT NULL,
    summary            TEXT,
    summarized_through INTEGER,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL
);
CREATE INDEX sessions_namespace ON sessions(namespace);

CREATE TABLE messages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session    TEXT NOT NULL,
    namespace  TEXT NOT NULL,
    role       TEXT NOT NULL,
    content    TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    summarized INTEGER NOT NULL DEFAULT 0 CHECK (summarized IN (0, 1))
);
CREATE INDEX messages_session ON messages(session, summarized, id);
CREATE INDEX messages_namespace ON messages(namespace, id);

CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, content='messages', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE TABLE costs (
    id            INTEGER PRIMARY KEY,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    task          TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost          REAL,
    created_at    TEXT NOT NULL
);
"""

# Inbound message ids already handled, so a channel's redelivery is answered once. Holds no message
# text; pruned by age.
_SCHEMA_V2 = """
CREATE TABLE inbound (
    channel      TEXT NOT NULL,
    message_id   TEXT NOT NULL,
    session      TEXT NOT NULL,
    received_at  TEXT NOT NULL,
    completed_at TEXT,
    PRIMARY KEY (channel, message_id)
) WITHOUT ROWID;
CREATE INDEX inbound_received_at ON inbound(received_at);
"""

# Exact-value lookups for reconciliation (is this observation already known?) without reading
# every active fact of the namespace.
_SCHEMA_V3 = """
CREATE INDEX facts_namespace_value
    ON facts(namespace, value COLLATE NOCASE) WHERE status = 'active';
"""

# The knowledge graph (seed 003): entities and typed relations per namespace, and which messages
# mention an entity, so recall can reach the turns behind a person, project or place.
_SCHEMA_V4 = """
CREATE TABLE entities (
    id          INTEGER PRIMARY KEY,
    namespace   TEXT NOT NULL,
    name        TEXT NOT NULL,
    name_key    TEXT NOT NULL,
    type        TEXT NOT NULL DEFAULT 'thing',
    description TEXT,
    confidence  REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0.0 AND 1.0),
    mentions    INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (namespace, name_key)
);
-- Finding the entities a message names looks up its word n-grams by key across a namespace
-- prefix; keyed on name_key first, each candidate is one seek however many entities there are.
CREATE INDEX entities_name_key ON entities(name_key, namespace);
CREATE TABLE relations (
    id          INTEGER PRIMARY KEY,
    namespace   TEXT NOT NULL,
    source_id   INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    target_id   INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    type        TEXT NOT NULL,
    confidence  REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0.0 AND 1.0),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (source_id, target_id, type),
    CHECK (source_id != target_id)
);
CREATE INDEX relations_target ON relations(target_id);
CREATE INDEX relations_namespace ON relations(namespace);
CREATE TABLE entity_mentions (
    entity_id   INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    PRIMARY KEY (entity_id, message_id)
) WITHOUT ROWID;
CREATE INDEX entity_mentions_message ON entity_mentions(message_id);
"""

# Optional local embeddings (``memory.embeddings``): one vector per message or fact and model.
_SCHEMA_V5 = """
CREATE TABLE embeddings (
    kind        TEXT NOT NULL,
    ref_id      INTEGER NOT NULL,
    namespace   TEXT NOT NULL,
    model       TEXT NOT NULL,
    vector      BLOB NOT NULL,
    PRIMARY KEY (kind, ref_id, model)
) WITHOUT ROWID;
CREATE INDEX embeddings_namespace ON embeddings(namespace, kind);
"""

# Turn-level provenance: the message a fact was extracted from, so recall can treat a fact and
# the turn behind it as near-duplicates and credit the right turn. Recall also reads a person's
# messages by time ("what did we talk about last week"), hence the second index.
_SCHEMA_V6 = """
ALTER TABLE facts ADD COLUMN message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL;
CREATE INDEX facts_message_id ON facts(message_id);
CREATE INDEX messages_namespace_created ON messages(namespace, created_at);
-- A vector says what its text said: it goes with the row, on every path that deletes one.
CREATE TRIGGER messages_embeddings_delete AFTER DELETE ON messages BEGIN
    DELETE FROM embeddings WHERE kind = 'message' AND ref_id = old.id;
END;
CREATE TRIGGER facts_embeddings_delete AFTER DELETE ON facts BEGIN
    DELETE FROM embeddings WHERE kind = 'fact' AND ref_id = old.id;
END;
"""

# The namespace root (``flynn.memory.namespaces.namespace_root``) of a row, as one full-text token
# (``namespace_token``), so a search for one person or session counts and lists only its own
# rows. A virtual column: FTS5 reads an external content table's columns by name.
_NS_TOKEN = """'n' || lower(hex(CASE
    WHEN substr(namespace, 1, 6) = 'users/' OR substr(namespace, 1, 9) = 'sessions/' THEN
        CASE WHEN instr(substr(namespace, instr(namespace, '/') + 1), '/') > 0
            THEN substr(
                namespace,
                1,
                instr(namespace, '/')
                    + instr(substr(namespace, instr(namespace, '/') + 1), '/') - 1
            )
            ELSE namespace END
    WHEN instr(namespace, '/') > 0 THEN substr(namespace, 1, instr(namespace, '/') - 1)
    ELSE namespace
END)) || 'x'"""

# Full-text candidates scoped by namespace root: each index gains the ``ns`` token column, rebuilt
# from the base tables; ``rank`` gives it no weight, so bm25 scores stay those of the text.
_SCHEMA_V7 = f"""
ALTER TABLE messages ADD COLUMN ns TEXT GENERATED ALWAYS AS ({_NS_TOKEN}) VIRTUAL;
ALTER TABLE facts ADD COLUMN ns TEXT GENERATED ALWAYS AS ({_NS_TOKEN}) VIRTUAL;
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, ns, content='messages', content_rowid='id', tokenize='porter unicode61'
);
INSERT INTO messages_fts(messages_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)');
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content, ns) VALUES (new.id, new.content, new.ns);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, ns)
    VALUES ('delete', old.id, old.content, old.ns);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, namespace ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, ns)
    VALUES ('delete', old.id, old.content, old.ns);
    INSERT INTO messages_fts(rowid, content, ns) VALUES (new.id, new.content, new.ns);
END;
DROP TRIGGER facts_fts_insert;
DROP TRIGGER facts_fts_delete;
DROP TRIGGER facts_fts_update;
DROP TABLE facts_fts;
CREATE VIRTUAL TABLE facts_fts USING fts5(
    field, value, ns, content='facts', content_rowid='id', tokenize='porter unicode61'
);
INSERT INTO facts_fts(facts_fts, rank) VALUES ('rank', 'bm25(1.0, 1.0, 0.0)');
INSERT INTO facts_fts(facts_fts) VALUES ('rebuild');
CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, field, value, ns) VALUES (new.id, new.field, new.value, new.ns);
END;
CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, field, value, ns)
    VALUES ('delete', old.id, old.field, old.value, old.ns);
END;
CREATE TRIGGER facts_fts_update AFTER UPDATE OF field, value, namespace ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, field, value, ns)
    VALUES ('delete', old.id, old.field, old.value, old.ns);
    INSERT INTO facts_fts(rowid, field, value, ns) VALUES (new.id, new.field, new.value, new.ns);
END;
"""

# The schedule (flynn.schedule): durable jobs, each due time claimed exactly once, and the outbox
# of unprompted messages their firings produce; plus the tool calls and results of a turn, kept
# with the assistant message that ends it (so compaction can never separate a call from its
# result, and a restart reloads them).
_SCHEMA_V8 = """
CREATE TABLE jobs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace     TEXT NOT NULL,
    kind          TEXT NOT NULL,
    text          TEXT NOT NULL,
    repeat        TEXT,
    timezone      TEXT NOT NULL,
    next_at       TEXT,
    channel       TEXT,
    chat_id       TEXT,
    thread        TEXT,
    recipient     TEXT,
    status        TEXT NOT NULL DEFAULT 'active'
                  CHECK (status IN ('active', 'done', 'cancelled')),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    last_fired_at TEXT,
    fired_count   INTEGER NOT NULL DEFAULT 0
);
-- next_due and fire_due read the head of this; a person's listing the second.
CREATE INDEX jobs_due ON jobs(next_at) WHERE status = 'active';
CREATE INDEX jobs_namespace ON jobs(namespace, status, next_at);

CREATE TABLE pushes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace    TEXT NOT NULL,
    kind         TEXT NOT NULL,
    text         TEXT NOT NULL,
    channel      TEXT NOT NULL,
    chat_id      TEXT NOT NULL,
    thread       TEXT,
    recipient    TEXT,
    job_id       INTEGER,
    due_at       TEXT,
    late         INTEGER NOT NULL DEFAULT 0 CHECK (late IN (0, 1)),
    created_at   TEXT NOT NULL,
    leased_until TEXT,
    delivered_at TEXT,
    failures     INTEGER NOT NULL DEFAULT 0
);
-- Delivered rows are history: only the undelivered ones are indexed for the outbox's reads.
CREATE INDEX pushes_pending ON pushes(id) WHERE delivered_at IS NULL;
CREATE INDEX pushes_pending_chat ON pushes(channel, chat_id) WHERE delivered_at IS NULL;
CREATE INDEX pushes_pending_recipient ON pushes(channel, recipient) WHERE delivered_at IS NULL;
-- A job's due time queues at most one push, whatever races the claim (belt and braces).
CREATE UNIQUE INDEX pushes_job_due ON pushes(job_id, due_at) WHERE job_id IS NOT NULL;

CREATE TABLE message_tools (
    message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    steps      TEXT NOT NULL
);
"""

# Durable intake: an accepted message is stored (text and where it came from) before the channel
# confirms it, so a crash or a drain deadline loses nothing: at start, what was accepted but not
# answered is replayed; what was answered but not delivered is sent again. The text is cleared once
# answered; the reply is kept (until pruned) so a resend of the same id gets it again.
_SCHEMA_V9 = """
CREATE TABLE intake (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    channel      TEXT NOT NULL,
    message_id   TEXT NOT NULL,
    session      TEXT NOT NULL,
    namespace    TEXT,
    chat_id      TEXT NOT NULL DEFAULT '',
    thread       TEXT,
    sender_id    TEXT NOT NULL DEFAULT '',
    sender_name  TEXT,
    is_group     INTEGER NOT NULL DEFAULT 0,
    forwarded    INTEGER NOT NULL DEFAULT 0,
    text         TEXT,
    state        TEXT NOT NULL DEFAULT 'accepted'
                 CHECK (state IN ('accepted', 'answered', 'delivered', 'failed')),
    reply        TEXT,
    reply_error  TEXT,
    received_at  TEXT NOT NULL,
    answered_at  TEXT,
    completed_at TEXT,
    UNIQUE (channel, message_id)
);
INSERT INTO intake (channel, message_id, session, received_at, completed_at, state)
SELECT channel, message_id, session, received_at, completed_at,
       CASE WHEN completed_at IS NULL THEN 'failed' ELSE 'delivered' END
FROM inbound;
DROP TABLE inbound;
CREATE INDEX intake_open ON intake(state, id) WHERE state IN ('accepted', 'answered');
CREATE INDEX intake_received_at ON intake(received_at);
CREATE INDEX intake_namespace ON intake(namespace);
"""

MIGRATIONS: tuple[str, ...] = (
    _SCHEMA_V1,
    _SCHEMA_V2,
    _SCHEMA_V3,
    _SCHEMA_V4,
    _SCHEMA_V5,
    _SCHEMA_V6,
    _SCHEMA_V7,
    _SCHEMA_V8,
    _SCHEMA_V9,
)
"""Migration ``n`` (1-based) is ``MIGRATIONS[n - 1]``. Append only; never edit a shipped entry."""

LATEST_VERSION = len(MIGRATIONS)

_BUSY_TIMEOUT_PRAGMA = "PRAGMA busy_timeout = 5000"
_PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA foreign_keys = ON",
    _BUSY_TIMEOUT_PRAGMA,
    # NORMAL under WAL may lose the last commits on power loss, never consistency.
    "PRAGMA synchronous = NORMAL",
    # 32 MiB of page cache keeps the FTS indexes of a large history hot between turns.
    "PRAGMA cache_size = -32768",
    # A turn writes ~10 pages, so the default (1000) made every ~100th turn pay for a checkpoint
    # and its fsyncs. Fewer, larger ones keep that out of the 99th percentile; with a
    # ``WalCheckpointer`` running, this is only a safety net.
    "PRAGMA wal_autocheckpoint = 4000",
)


_ZERO = timedelta(0)


def encode_time(moment: datetime) -> str:
    """``moment`` as fixed-width ISO-8601 UTC text, so that text order is time order."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment!r}: pass a timezone-aware time")
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def decode_time(text: str) -> datetime:
    """Inverse of ``encode_time``: a timezone-aware UTC datetime."""
    moment = datetime.fromisoformat(text)
    # Stored times are always UTC ("+00:00"), which ``fromisoformat`` already gives as the ``UTC``
    # singleton: recall decodes hundreds of rows per turn, so the common case does nothing more.
    if moment.tzinfo is UTC:
        return moment
    return moment.replace(tzinfo=UTC) if moment.utcoffset() == _ZERO else moment.astimezone(UTC)


def decode_optional_time(text: str | None) -> datetime | None:
    return None if text is None else decode_time(text)


_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
_SIDE_FILES = ("-wal", "-shm")


@contextmanager
def _mapped_errors(action: str, error: type[StoreError] = StoreError) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise error(f"{action}: {exc}") from exc


def _is_busy(exc: sqlite3.Error) -> bool:
    """Another connection holds the lock: a sign of work, not of a broken file."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _BUSY_CODES


class Database:
    """One ``sqlite3.Connection`` in autocommit mode; multi-statement writes use ``transaction``.

    Not thread-safe: use it from the thread that opened it (the event loop's).
    """

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        """Use ``Database.open``; this takes an already configured connection."""
        self._connection = connection
        self._path = path
        self._depth = 0
        self._closed = False
        # Rows of watched tables this connection updated or deleted (see ``watch_rewrites``).
        self._rewrites: dict[str, int] = {}

    @classmethod
    def open(cls, path: Path) -> Database:
        """Opens (creating if needed, mode 0600) the database at ``path`` and migrates it to the
        latest schema. Its file and ``-wal``/``-shm`` are tightened to 0600 when looser.

        Raises ``StorageUnusable`` if the file is empty (0 bytes: SQLite would take it for a new
        database, and the memory it held would silently start over), cannot be opened or is not
        a database; ``StoreError`` if a migration fails or the schema is newer than this code.
        """
        _refuse_empty(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        except OSError as exc:
            raise StorageUnusable(
                f"cannot create directory for database {path}: {exc.strerror or exc}"
            ) from exc
        with _mapped_errors(f"cannot open database {path}", StorageUnusable):
            connection = sqlite3.connect(path, isolation_level=None, cached_statements=256)
        database = cls(connection, path)
        try:
            # Before the first write: SQLite gives -wal and -shm the mode of the database file.
            _make_files_private(path)
            connection.row_factory = sqlite3.Row
            with _mapped_errors(f"cannot configure database {path}", StorageUnusable):
                for pragma in _PRAGMAS:
                    connection.execute(pragma).close()
            _make_files_private(path)
            database._migrate()
        except BaseException:
            database.close()
            raise
        return database

    @property
    def path(self) -> Path:
        return self._path

    @property
    def version(self) -> int:
        """The schema version recorded in ``PRAGMA user_version``."""
        row = self.fetchone("PRAGMA user_version")
        assert row is not None
        return int(row[0])

    def data_version(self) -> int:
        """Changes whenever another connection (another process, e.g. ``flynn memory forget``)
        commits to the database; commits of this connection do not change it."""
        row = self.fetchone("PRAGMA data_version")
        assert row is not None
        return int(row[0])

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def watch_rewrites(self, table: str) -> None:
        """Starts counting the rows of ``table`` this connection updates or deletes, whatever
        SQL does it (a store's own, ``forgetting``'s, a cascade): temporary triggers call back
        into Python, so the count costs no query to read. Idempotent.

        Inserts are not counted: they never change a row that was read before. (Neither is a
        row a ``REPLACE`` conflict deletes; nothing writes that way.) Raises ``StoreError``."""
        if not table.isidentifier():
            raise ValueError(f"not a table name: {table!r}")
        if table in self._rewrites:
            return
        self._rewrites[table] = 0
        function = f"flynn_rewrote_{table}"

        def rewrote() -> None:
            self._rewrites[table] += 1

        with _mapped_errors(f"cannot watch {table}"):
            self._connection.create_function(function, 0, rewrote)
            for event in ("UPDATE", "DELETE"):
                self._connection.execute(
                    f"CREATE TEMP TRIGGER IF NOT EXISTS flynn_{table}_{event.lower()}_watch "
                    f"AFTER {event} ON main.{table} BEGIN SELECT {function}(); END"
                ).close()

    def rewrites(self, table: str) -> tuple[int, int]:
        """Differs after this connection updated or deleted a row of ``table`` (or rolled a
        transaction back), or another connection committed: what a cache of rows read from
        ``table`` is valid for. ``table`` must be watched (``watch_rewrites``)."""
        return self._rewrites[table], self.data_version()

    def integrity_check(self) -> list[str]:
        """Problems found in the file and the full-text indexes; empty when healthy."""
        problems = [
            str(row[0]) for row in self.fetchall("PRAGMA integrity_check") if str(row[0]) != "ok"
        ]
        for index in ("facts_fts", "messages_fts"):
            try:
                self.execute(f"INSERT INTO {index}({index}) VALUES ('integrity-check')")
            except StoreError as exc:
                problems.append(f"{index}: {exc}")
        return problems

    def verify(self) -> None:
        """Checks, once at start, that the database can be used at all: ``PRAGMA quick_check``
        (reads every page, so it costs about a second per GB) and a write that reaches the file.

        Raises ``StorageUnusable`` naming the first problem (corrupt pages, a read-only file or
        directory, a full disk), ``StoreError`` when another connection kept the write lock for
        longer than ``busy_timeout``."""
        with _mapped_errors(f"database {self._path} cannot be read", StorageUnusable):
            rows = self._connection.execute("PRAGMA quick_check").fetchall()
        problems = [" ".join(str(row[0]).split()) for row in rows if str(row[0]) != "ok"]
        if problems:
            raise StorageUnusable(
                f"database {self._path} is corrupt ({problems[0]}); restore it from a backup "
                "(or move it away to start with an empty memory)"
            )
        self.probe_write()

    def probe_write(self, *, busy_timeout_ms: int | None = None) -> None:
        """Commits a transaction that rewrites the schema version with its own value: the
        cheapest write that reaches the file (one WAL frame), so a read-only file, a full disk or
        an I/O error shows here rather than in a person's turn. Changes nothing another reader
        could see but ``data_version``.

        ``busy_timeout_ms`` bounds the wait for the write lock (default: the connection's).
        Raises ``StorageUnusable`` when the write fails, ``StoreError`` when the lock stayed busy
        or this connection is inside a transaction."""
        if self._depth:
            raise StoreError("cannot probe the database inside a transaction")
        connection = self._connection
        try:
            if busy_timeout_ms is not None:
                connection.execute(f"PRAGMA busy_timeout = {busy_timeout_ms:d}").close()
            try:
                connection.execute("BEGIN IMMEDIATE").close()
                row = connection.execute("PRAGMA user_version").fetchone()
                connection.execute(f"PRAGMA user_version = {int(row[0]):d}").close()
                connection.execute("COMMIT").close()
            except sqlite3.Error:
                if connection.in_transaction:
                    connection.execute("ROLLBACK").close()
                raise
            finally:
                if busy_timeout_ms is not None:
                    connection.execute(_BUSY_TIMEOUT_PRAGMA).close()
        except sqlite3.Error as exc:
            if _is_busy(exc):
                raise StoreError(f"database {self._path} is busy: {exc}") from exc
            raise StorageUnusable(f"database {self._path} cannot be written: {exc}") from exc

    def execute(self, sql: str, params: Params = ()) -> int:
        """Runs one statement to completion; returns the number of rows it changed."""
        with _mapped_errors("database statement failed"):
            cursor = self._connection.execute(sql, params)
            try:
                return cursor.rowcount
            finally:
                cursor.close()

    def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """Runs one statement for each of ``rows``; returns the number of rows changed."""
        with _mapped_errors("database statement failed"):
            cursor = self._connection.executemany(sql, rows)
            try:
                return cursor.rowcount
            finally:
                cursor.close()

    def fetchone(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """The first row of ``sql`` (which may be ``INSERT ... RETURNING``), or ``None``."""
        with _mapped_errors("database query failed"):
            cursor = self._connection.execute(sql, params)
            try:
                row: sqlite3.Row | None = cursor.fetchone()
                return row
            finally:
                # Resets the statement: a half-stepped ``RETURNING`` statement would otherwise
                # keep its implicit write transaction open.
                cursor.close()

    def fetchall(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        with _mapped_errors("database query failed"):
            cursor = self._connection.execute(sql, params)
            try:
                rows: list[sqlite3.Row] = cursor.fetchall()
                return rows
            finally:
                cursor.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Runs the block as one write transaction: everything lands, or nothing does.

        The outermost use takes the write lock up front (``BEGIN IMMEDIATE``), so a concurrent
        writer waits out ``busy_timeout`` instead of failing mid-way. Nested uses are savepoints:
        an exception rolls back only the inner block if it is caught inside the outer one.
        Any exception, including cancellation, rolls back and propagates.
        """
        savepoint = f"flynn_{self._depth}"
        outermost = self._depth == 0
        with _mapped_errors("cannot begin transaction"):
            self._connection.execute("BEGIN IMMEDIATE" if outermost else f"SAVEPOINT {savepoint}")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth -= 1
            self._rollback(outermost, savepoint)
            raise
        self._depth -= 1
        try:
            with _mapped_errors("cannot commit transaction"):
                self._connection.execute("COMMIT" if outermost else f"RELEASE {savepoint}")
        except StoreError:
            self._rollback(outermost, savepoint)
            raise

    def _rollback(self, outermost: bool, savepoint: str) -> None:
        # Rows read inside the transaction may be gone, and their ids handed out again.
        for table in self._rewrites:
            self._rewrites[table] += 1
        with _mapped_errors("cannot roll back transaction"):
            if outermost:
                if self._connection.in_transaction:
                    self._connection.execute("ROLLBACK")
            else:
                self._connection.execute(f"ROLLBACK TO {savepoint}")
                self._connection.execute(f"RELEASE {savepoint}")

    def close(self) -> None:
        """Closes the connection; safe to call twice. An open transaction is rolled back."""
        if self._closed:
            return
        self._closed = True
        with _mapped_errors(f"cannot close database {self._path}"):
            self._connection.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _migrate(self) -> None:
        current = self.version
        if current > LATEST_VERSION:
            raise StoreError(
                f"database {self._path} has schema version {current}, but this flynn only knows "
                f"versions up to {LATEST_VERSION}; upgrade flynn (or restore an older backup)"
            )
        for version in range(current + 1, LATEST_VERSION + 1):
            with self.transaction():
                # Another process may have migrated while we waited for the write lock.
                if self.version >= version:
                    continue
                with _mapped_errors(f"migration {version} of {self._path} failed"):
                    for statement in _statements(MIGRATIONS[version - 1]):
                        self._connection.execute(statement).close()
                    # PRAGMA takes no bound parameters; ``version`` is our own int.
                    self._connection.execute(f"PRAGMA user_version = {version:d}").close()


def _refuse_empty(path: Path) -> None:
    try:
        size = path.stat().st_size
    except OSError:
        return  # missing (created next) or unreadable (opening says why)
    if size == 0 and path.is_file():
        raise StorageUnusable(
            f"database {path} is an empty file (0 bytes), so whatever it held is gone; restore "
            "it from a backup, or delete it to start with an empty memory"
        )


def _make_files_private(path: Path) -> None:
    for file in (path, *(path.with_name(path.name + side) for side in _SIDE_FILES)):
        try:
            make_private(file)
        except OSError:
            # A read-only file system: reading still works, and a daemon's ``verify`` refuses
            # to start on it with the reason.
            continue


@dataclass(frozen=True, slots=True)
class StorageStatus:
    """Whether the database took a write when last probed; ``detail`` says why not."""

    ok: bool
    detail: str

    def as_json(self) -> dict[str, object]:
        return {"ok": self.ok, "detail": self.detail}


class StorageHealth:
    """The database's health for ``/readyz``: a write probe (``Database.probe_write``) at most
    every ``max_age_seconds``, the answer cached in between so a busy probe endpoint costs
    nothing. Use from the thread that owns ``db`` (the event loop's): a probe takes well under a
    millisecond, and waits at most ``busy_timeout_ms`` for another process's write lock.
    """

    def __init__(
        self,
        db: Database,
        *,
        max_age_seconds: float = 10.0,
        busy_timeout_ms: int = 50,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self._max_age = max_age_seconds
        self._busy_timeout_ms = busy_timeout_ms
        self._clock = clock
        self._status = StorageStatus(True, "not probed yet")
        self._probed_at: float | None = None

    def check(self) -> StorageStatus:
        """The cached status, probing first when it is older than ``max_age_seconds``. Never
        raises. A probe that cannot run now (the write lock busy: another writer is working; a
        transaction open on this connection) keeps the previous status and retries next call."""
        now = self._clock()
        if self._probed_at is not None and now - self._probed_at < self._max_age:
            return self._status
        try:
            self._db.probe_write(busy_timeout_ms=self._busy_timeout_ms)
        except StorageUnusable as exc:
            self._status = StorageStatus(False, str(exc))
        except StoreError:
            return self._status
        else:
            self._status = StorageStatus(True, "writable")
        self._probed_at = now
        return self._status


def _statements(script: str) -> Iterator[str]:
    """Splits a script into statements; ``executescript`` would commit our open transaction."""
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        # complete_statement knows about strings, comments and trigger bodies.
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n\t;"):
                yield pending
            pending = ""
    if pending.strip(" \n\t;"):
        raise StoreError(f"incomplete statement in migration: {pending.strip()[:80]!r}")
