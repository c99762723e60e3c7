"""Stored rows redacted again with today's credential gate (``RedactionPass``): what an older
version of the rules let through is found in every stored row once, after an upgrade
(``flynn.credentials.REDACTION_VERSION`` is newer than the database's ``redaction_stamp``).

Batch by batch, in key order, each batch one short transaction: a row whose text changes is
updated in place (its full-text index with it, by SQLite's triggers or ``SqlRedaction``'s
hooks), the vectors derived from its old text are deleted (the embedding catch-up embeds the
redacted text again), and nothing else changes. The cursor is written with the batch, so a
pass cut short redoes at most one batch; the stamp is written last. Logs count rows, never text.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from flynn.credentials import (
    REDACTED_SECRET,
    REDACTION_VERSION,
    is_secret_name,
    redact,
    redact_file,
    redact_json,
)
from flynn.memory.namespaces import namespace_root
from flynn.memory.sql import NamedRow, TransactionalSql

log = structlog.get_logger(__name__)

BATCH_ROWS = 500
"""Rows a batch reads, redacts and writes: the most a crash redoes, and how long the writer is
held at a time (only the batch's changed rows are written)."""

Redaction = Callable[[Any, NamedRow], Any]
"""A column's value as its store keeps it, given the value and its row."""

Progress = Callable[[str, int, int], None]
"""Told after each batch: its kind (a table), the rows it looked at and those it changed."""


def _text(value: Any, row: NamedRow) -> Any:
    return value if value is None else redact(str(value))[0]


def _json(value: Any, row: NamedRow) -> Any:
    return value if value is None else redact_json(str(value))[0]


def _document(value: Any, row: NamedRow) -> Any:
    # A person's file kept as a document (``users/ana/files/TASKS.json``): a JSON one is
    # redacted in its strings, so it stays JSON (``flynn.people.store.redacted``).
    return value if value is None else redact_file(str(row["namespace"]), str(value))[0]


def _fact_value(value: Any, row: NamedRow) -> Any:
    # A fact under a credential's name is never stored (``is_secret``); the row stays, blank.
    name = row["field"]
    if name and is_secret_name(str(name)) and value != REDACTED_SECRET:
        return REDACTED_SECRET
    return _text(value, row)


@dataclass(frozen=True, slots=True)
class StoredKind:
    """A table whose text the stores redact on write: its key, the columns redacted (each by
    the redaction its store applies) and the other columns a redaction or a vector needs."""

    table: str
    key: str
    columns: Mapping[str, Redaction]
    also: tuple[str, ...] = ()
    numbered: bool = True
    """An integer key (else text, compared as text)."""


# What each store redacts on write (``flynn.credentials``), by table and column.
KINDS = (
    StoredKind("messages", "id", {"content": _text}, ("session",)),
    StoredKind("message_tools", "message_id", {"steps": _json}),
    StoredKind("sessions", "key", {"summary": _text}, numbered=False),
    StoredKind("documents", "namespace", {"content": _document}, numbered=False),
    StoredKind("facts", "id", {"value": _fact_value}, ("field",)),
    StoredKind("entities", "id", {"description": _text}),
    StoredKind("intake", "id", {"text": _text, "reply": _text}),
    StoredKind("team_documents", "id", {"title": _text}),
    StoredKind("team_chunks", "id", {"heading": _text, "content": _text}, ("document_id",)),
    StoredKind("jobs", "id", {"text": _text}),
    StoredKind("pushes", "id", {"text": _text}),
    StoredKind("job_runs", "id", {"text": _text}),
)


@dataclass(frozen=True, slots=True)
class Change:
    """One row's redacted columns (only those that changed)."""

    key: Any
    values: Mapping[str, Any]
    row: NamedRow


@dataclass(frozen=True, slots=True)
class Batch:
    kind: StoredKind
    rows: Sequence[NamedRow]

    @property
    def last(self) -> str:
        return str(self.rows[-1][self.kind.key])


@dataclass(slots=True)
class RedactionCounts:
    """What a pass looked at and changed, per kind (a table, ``files``)."""

    seen: dict[str, int] = field(default_factory=dict)
    changed: dict[str, int] = field(default_factory=dict)
    vectors: int = 0
    """Vectors deleted: each embedded a text that held a credential."""

    def add(self, kind: str, seen: int, changed: int) -> None:
        self.seen[kind] = self.seen.get(kind, 0) + seen
        self.changed[kind] = self.changed.get(kind, 0) + changed


GIL_HOLD_SECONDS = 0.001
"""How long ``changes`` keeps the interpreter before it lets another thread have it."""


def changes(batch: Batch) -> list[Change]:
    """The rows of ``batch`` today's gate redacts more than was stored: pure CPU, for a worker
    thread. The thread lets go of the interpreter every millisecond: else the event loop's
    thread waits up to the switch interval (5 ms) at each step of a turn while a pass runs
    (its median pause was 7 ms instead of 1 on 30,000 messages of 2,000 characters,
    ``tools/redaction_figures.py --chars 2000``)."""
    found = []
    held = time.perf_counter()
    for row in batch.rows:
        if time.perf_counter() - held > GIL_HOLD_SECONDS:
            time.sleep(0)
            held = time.perf_counter()
        values = {}
        for name, redaction in batch.kind.columns.items():
            before = row[name]
            after = redaction(before, row)
            if after != before:
                values[name] = after
        if values:
            found.append(Change(row[batch.kind.key], values, row))
    return found


class FileRedaction(Protocol):
    """People's own files (USER.md, TASKS.json, ...) where they are kept outside the tables."""

    def redact_files(self, root: str, *, dry_run: bool) -> int:
        """Redacts each file of the person ``root`` with today's gate, written only if it
        changed (and nobody wrote it meanwhile); returns how many changed (would, dry)."""
        ...


class SqlRedaction:
    """The stamp, the cursor and the rows of one database, in statements both backends take
    (``statement`` turns SQLite's form into the backend's); a backend's search postings are
    kept by ``rewrite_message`` and ``rewritten``."""

    def __init__(self, db: TransactionalSql, *, statement: Callable[[str], str] = str) -> None:
        self._db = db
        self._sql = statement
        self._columns: dict[str, set[str]] = {}

    def stamp(self) -> tuple[int, int | None, str | None, str | None]:
        """``(done, running, kind, after)``: the version the rows were last redacted with, and
        the pass under way (its version, the kind and key it had got to)."""
        row = self._db.fetchone("SELECT done, running, kind, after FROM redaction_stamp")
        if row is None:
            return 0, None, None, None
        return int(row["done"]), row["running"], row["kind"], row["after"]

    def kinds(self) -> list[StoredKind]:
        """``KINDS`` this database has, each with the columns it has."""
        present = []
        for kind in KINDS:
            columns = self.columns(kind.table)
            if kind.key not in columns:
                continue
            kept = {name: r for name, r in kind.columns.items() if name in columns}
            present.append(StoredKind(kind.table, kind.key, kept, kind.also, kind.numbered))
        return present

    def columns(self, table: str) -> set[str]:
        raise NotImplementedError

    def batch(self, kind: StoredKind, after: str | None, limit: int) -> Batch:
        names = ", ".join([kind.key, *kind.columns, *kind.also])
        where = "" if after is None else f"WHERE {kind.key} > ?"
        params: list[object] = [] if after is None else [int(after) if kind.numbered else after]
        rows = self._db.fetchall(
            self._sql(f"SELECT {names} FROM {kind.table} {where} ORDER BY {kind.key} LIMIT ?"),
            [*params, limit],
        )
        return Batch(kind, rows)

    def begin(self, version: int) -> None:
        self._db.execute(
            self._sql(
                "UPDATE redaction_stamp SET running = ?, kind = NULL, after = NULL WHERE id = 1"
            ),
            (version,),
        )

    def write(self, batch: Batch, found: Sequence[Change]) -> tuple[int, int]:
        """Writes those of ``found`` whose row still holds what was read and moves the cursor
        past ``batch``, in one transaction; returns how many rows it wrote and how many
        vectors it deleted."""
        kind = batch.kind
        deleted = 0
        written = []
        with self._db.transaction():
            for change in found:
                if not self._unchanged(kind, change):
                    continue  # written since it was read, by a store redacting with today's gate
                written.append(change.key)
                if kind.table == "messages":
                    self.rewrite_message(int(change.key), str(change.values["content"]))
                else:
                    self._update(kind, change)
                deleted += self._drop_vectors(kind, change)
            if written:
                self.rewritten(kind.table, written)
            self._db.execute(
                self._sql("UPDATE redaction_stamp SET kind = ?, after = ? WHERE id = 1"),
                (kind.table, batch.last),
            )
        return len(written), deleted

    def stamp_current(self) -> None:
        """Stamps the rows as redacted with today's rules, no pass run: a store this open
        created (everything it will hold is written through today's gate), or one ``flynn
        storage copy`` filled (it redacts every row and file it copies)."""
        self.finish(REDACTION_VERSION)

    def finish(self, version: int) -> None:
        self._db.execute(
            self._sql(
                "UPDATE redaction_stamp SET done = ?, running = NULL, kind = NULL, after = NULL "
                "WHERE id = 1"
            ),
            (version,),
        )

    def roots(self) -> list[str]:
        """Every memory root with a session: whose files to look at."""
        rows = self._db.fetchall("SELECT DISTINCT namespace FROM sessions")
        return sorted({namespace_root(str(row["namespace"])) for row in rows})

    def rewrite_message(self, message_id: int, content: str) -> None:
        self._db.execute(
            self._sql("UPDATE messages SET content = ? WHERE id = ?"), (content, message_id)
        )

    def rewritten(self, table: str, keys: Sequence[Any]) -> None:
        """After rows of ``table`` changed, in their transaction: a backend's own index."""

    _LOCK = ""
    """What a backend adds to a read inside the batch's transaction to hold the row until it
    commits (SQLite's ``BEGIN IMMEDIATE`` already holds the whole database)."""

    def _unchanged(self, kind: StoredKind, change: Change) -> bool:
        """Whether the row still holds what was read: nothing wrote it meanwhile (a person's
        edit, a compaction's summary, a forget's rewrite), which the pass must not undo."""
        held = " AND ".join(f"{name} IS ?" for name in change.values)
        row = self._db.fetchone(
            self._sql(f"SELECT 1 AS n FROM {kind.table} WHERE {kind.key} = ? AND {held}")
            + self._LOCK,
            (change.key, *(change.row[name] for name in change.values)),
        )
        return row is not None

    def _update(self, kind: StoredKind, change: Change) -> None:
        sets = ", ".join(f"{name} = ?" for name in change.values)
        self._db.execute(
            self._sql(f"UPDATE {kind.table} SET {sets} WHERE {kind.key} = ?"),
            (*change.values.values(), change.key),
        )

    def _drop_vectors(self, kind: StoredKind, change: Change) -> int:
        drop = self._sql("DELETE FROM embeddings WHERE kind = ? AND ref_id = ?")
        if kind.table == "messages":
            # The next message of the session embeds this one as its context too.
            after = self._db.fetchone(
                self._sql(
                    "SELECT id FROM messages WHERE session = ? AND id > ? ORDER BY id LIMIT 1"
                ),
                (change.row["session"], change.key),
            )
            ids = [int(change.key), *([] if after is None else [int(after["id"])])]
            return sum(self._db.execute(drop, ("message", ref)) for ref in ids)
        if kind.table == "facts":
            return self._db.execute(drop, ("fact", int(change.key)))
        if kind.table == "team_chunks":
            return self._db.execute(drop, ("chunk", int(change.key)))
        if kind.table == "team_documents":
            # Every chunk's vector embeds its document's title.
            return self._db.execute(
                self._sql(
                    "DELETE FROM embeddings WHERE kind = 'chunk' AND ref_id IN "
                    "(SELECT id FROM team_chunks WHERE document_id = ?)"
                ),
                (int(change.key),),
            )
        return 0


class RedactionPass:
    """One pass over a database (and people's files) with today's gate. Drive it with
    ``steps``: each batch is read, redacted (``changes``, the caller may run it in a thread)
    and written (``write``)."""

    def __init__(
        self,
        store: SqlRedaction,
        files: FileRedaction | None = None,
        *,
        version: int = REDACTION_VERSION,
        batch_rows: int = BATCH_ROWS,
        dry_run: bool = False,
    ) -> None:
        self._store = store
        self._files = files
        self._version = version
        self._batch_rows = batch_rows
        self._dry_run = dry_run
        self.counts = RedactionCounts()

    @property
    def is_due(self) -> bool:
        """The rows were last redacted with older rules (or never stamped)."""
        return self._store.stamp()[0] < self._version

    def batches(self) -> Iterator[Batch]:
        """Each batch from where a pass under way for this version stopped (from the start
        otherwise, or when dry)."""
        _, running, at_kind, after = self._store.stamp()
        resuming = not self._dry_run and running == self._version and at_kind is not None
        if not self._dry_run and not resuming:
            self._store.begin(self._version)
        kinds = self._store.kinds()
        if resuming:
            names = [kind.table for kind in kinds]
            if at_kind in names:
                kinds = kinds[names.index(at_kind) :]
            else:
                after = None
        for number, kind in enumerate(kinds):
            cursor = after if resuming and number == 0 else None
            while True:
                batch = self._store.batch(kind, cursor, self._batch_rows)
                if not batch.rows:
                    break
                yield batch
                cursor = batch.last

    def write(self, batch: Batch, found: Sequence[Change]) -> None:
        """Writes what ``changes`` found in ``batch`` (counts it only, dry)."""
        changed = len(found)
        if not self._dry_run:
            changed, vectors = self._store.write(batch, found)
            self.counts.vectors += vectors
        self.counts.add(batch.kind.table, len(batch.rows), changed)

    def roots(self) -> list[str]:
        """The memory roots whose files ``redact_files`` looks at (on the database's thread)."""
        return [] if self._files is None else self._store.roots()

    def redact_files(self, roots: Sequence[str]) -> None:
        """People's files of ``roots``; blocking (file locks), for a thread."""
        if self._files is None:
            return
        changed = sum(self._files.redact_files(root, dry_run=self._dry_run) for root in roots)
        self.counts.add("files", len(roots), changed)

    def finish(self) -> None:
        """Writes the stamp (not when dry) and logs the counts, never a text."""
        if not self._dry_run:
            self._store.finish(self._version)
        log.info(
            "redaction.finished",
            version=self._version,
            dry_run=self._dry_run,
            changed={kind: n for kind, n in self.counts.changed.items() if n},
            rows=sum(self.counts.seen.values()),
            vectors_deleted=self.counts.vectors,
        )

    def run(self, progress: Progress | None = None) -> RedactionCounts:
        """The whole pass in the calling thread (a command's): ``progress`` is told each
        batch's kind, rows seen and rows changed."""
        for batch in self.batches():
            found = changes(batch)
            self.write(batch, found)
            if progress is not None:
                progress(batch.kind.table, len(batch.rows), len(found))
        self.redact_files(self.roots())
        self.finish()
        return self.counts

    async def run_behind(
        self, progress: Progress | None = None, *, only_if_due: bool = True
    ) -> RedactionCounts | None:
        """The whole pass beside the daemon's turns, if it is due (else ``None``; always, when
        not ``only_if_due``): each batch read and written on the event loop (one short
        transaction, only its changed rows), redacted in a worker thread, the loop let go
        between batches. Cancelled, it stops after the batch written last; the next run goes
        on from there. Raises ``StoreError``."""
        if only_if_due and not self.is_due:
            return None
        log.info("redaction.started", version=self._version, dry_run=self._dry_run)
        for batch in self.batches():
            found = await asyncio.to_thread(changes, batch)
            self.write(batch, found)
            if progress is not None:
                progress(batch.kind.table, len(batch.rows), len(found))
            await asyncio.sleep(0)
        await asyncio.to_thread(self.redact_files, self.roots())
        self.finish()
        return self.counts


class SqliteRedaction(SqlRedaction):
    """``SqlRedaction`` on SQLite: the triggers keep ``messages_fts`` and ``facts_fts``;
    ``team_chunks_fts`` (external content, no update trigger) is kept here."""

    def columns(self, table: str) -> set[str]:
        return {str(row["name"]) for row in self._db.fetchall(f"PRAGMA table_info({table})")}

    def _update(self, kind: StoredKind, change: Change) -> None:
        if kind.table != "team_chunks":
            super()._update(kind, change)
            return
        old = change.row
        new = {"heading": old["heading"], "content": old["content"], **change.values}
        self._db.execute(
            "INSERT INTO team_chunks_fts(team_chunks_fts, rowid, heading, content) "
            "VALUES ('delete', ?, ?, ?)",
            (change.key, old["heading"], old["content"]),
        )
        super()._update(kind, change)
        self._db.execute(
            "INSERT INTO team_chunks_fts(rowid, heading, content) VALUES (?, ?, ?)",
            (change.key, new["heading"], new["content"]),
        )
