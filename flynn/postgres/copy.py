"""Moving house: an SQLite install's rows copied into PostgreSQL (``copy_install``), then counted
on both sides (``KindCount``).

Each table is copied in batches, each batch one transaction, with the ids it had (other rows
point at them: a fact's ``supersedes`` and ``message_id``, a relation's entities, a push's job),
every insert ``ON CONFLICT DO NOTHING``: a rerun over a complete copy adds nothing, and a run
after an interrupted one adds exactly what is missing. Messages get their search postings as
``PostgresHistory.append_many`` writes them (``FtsWords``, FTS5's own terms), so search ranks
the same messages the same way on both. Then each identity's sequence is moved past the
copied ids (and past SQLite's ``sqlite_sequence``: ids of deleted rows are not reused), so new
rows do not collide. Vectors are copied as the bytes they are, under their model's name.

Credentials an older install kept (stored before the stores redacted them) are redacted on the
way, as each store redacts what it writes (``_REDACTED``): a row is still one row, the postings
are cut from the redacted text, and a vector of a redacted message is left out (``KindCount``).

``copied_from`` names the install a database was filled from: a database holding rows that are
not a copy of this install is refused before anything is written, and so is one that went live
(``went_live``, PostgreSQL migration 14: anything but the copy wrote to it), where a rerun would
mix both sides' rows of the same ids or write over what people edited since.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from flynn.errors import CopyRefused
from flynn.memory.database import Database, decode_time
from flynn.memory.fts_words import FtsWords
from flynn.memory.namespaces import namespace_root
from flynn.memory.redaction import KINDS, Redaction, SqlRedaction
from flynn.memory.sql import storable
from flynn.memory.windows import turn_of
from flynn.postgres.database import PostgresDatabase, psycopg_statement

log = structlog.get_logger(__name__)

COPY_WRITER = "copy"
"""The copy's ``flynn.writer`` (``PostgresDatabase.open(writer=...)``): what it writes does not
mark the database live (``went_live``), so a rerun of an interrupted copy goes on."""

BATCH_ROWS = 2_000
"""Rows a batch (one transaction) copies: what an interrupted run loses at most per table."""


@dataclass(frozen=True, slots=True)
class KindCount:
    """One kind of row (a table, a person's files), counted on both sides after a copy."""

    kind: str
    source: int
    target: int
    copied: int
    """Written by this run (0 on a rerun over a complete copy)."""
    redacted: int = 0
    """Source rows (files) whose text held a credential, removed on the way: each is still one
    row. Counted over all of them on every run, so a rerun says the same."""
    left_out: int = 0
    """Source rows not copied on purpose: the vectors of messages whose text (or the text of
    the message before them, which a vector embeds too) the copy redacted, and of facts and
    team chunks it redacted; ``flynn memory embed`` and the daemon's catch-up embed those
    messages anew, a fact gets its vector when next compared, a document when added again."""

    @property
    def matches(self) -> bool:
        return self.source == self.target + self.left_out


class CopiedKind(Protocol):
    """Something copied beside the tables: a person's files (folders to documents), the files
    they sent."""

    @property
    def kind(self) -> str: ...

    def copy(self) -> int:
        """Copies what the target lacks; returns how many it wrote."""
        ...

    def counts(self) -> tuple[int, int]:
        """How many there are in the source and in the target."""
        ...

    @property
    def redacted(self) -> int:
        """How many of the source's had credentials removed on the way (by the last ``copy``,
        which looks at them all)."""
        ...


Progress = Callable[[str, int], None]
"""Told each batch committed: the kind and how many rows it wrote."""


@dataclass(frozen=True, slots=True)
class _Table:
    name: str
    order: str
    """SQLite's ``ORDER BY``: ids ascending, so a row's ids point back at rows already copied."""


# In an order foreign keys allow: sessions and messages before what points at messages, entities
# before relations and mentions, documents before chunks, pushes before their drops; the vectors
# after the messages, facts and chunks they embed.
TABLES = (
    _Table("documents", "namespace"),
    _Table("costs", "id"),
    _Table("sessions", "key"),
    _Table("messages", "id"),
    _Table("message_tools", "message_id"),
    _Table("facts", "id"),
    _Table("entities", "id"),
    _Table("relations", "id"),
    _Table("entity_mentions", "entity_id, message_id"),
    _Table("intake", "id"),
    _Table("person_tokens", "id"),
    _Table("pairing_requests", "code"),
    _Table("approved_accounts", "channel, external_id"),
    _Table("team_documents", "id"),
    _Table("team_chunks", "id"),
    _Table("team_document_entities", "document_id, entity_id"),
    # After every row a vector embeds: the vectors of those the copy redacted are left out.
    _Table("embeddings", "kind, ref_id, model"),
    _Table("telegram_updates", "bot_id, update_id"),
    _Table("jobs", "id"),
    _Table("pushes", "id"),
    # ``seq`` (PostgreSQL's order of a digest's entries) is numbered afresh in SQLite's order.
    _Table("push_drops", "rowid"),
    _Table("job_runs", "id"),
)

POSTINGS = "message_terms"
"""The kind that counts search postings: FTS5's term instances in ``messages_fts`` against the
sum of ``message_terms.occurs``."""

_TARGET_COLUMNS = """
SELECT column_name, udt_name, is_identity FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = %s AND is_generated = 'NEVER'
ORDER BY ordinal_position
"""
_ORIGIN = "SELECT install FROM copied_from WHERE id = 1"
_WENT_LIVE = "SELECT first, at FROM went_live WHERE id = 1"
_CLAIM = "INSERT INTO copied_from (id, install) VALUES (1, %s) ON CONFLICT (id) DO NOTHING"
_EXISTING_MESSAGES = "SELECT id FROM messages WHERE id = ANY(%s)"
_COPY_TERMS = "COPY message_terms (term, message_id, root, occurs) FROM STDIN"
_SOURCE_VOCABULARY = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.flynn_copy_terms "
    "USING fts5vocab(main, messages_fts, 'instance')"
)
_SOURCE_POSTINGS = "SELECT count(*) AS n FROM temp.flynn_copy_terms WHERE col = 'content'"
_TARGET_POSTINGS = "SELECT coalesce(sum(occurs), 0) AS n FROM message_terms"
_ADVANCE = """
SELECT setval(pg_get_serial_sequence(%(table)s, %(column)s), %(high)s)
WHERE %(high)s > coalesce(
    pg_sequence_last_value(pg_get_serial_sequence(%(table)s, %(column)s)::regclass), 0)
"""

_Converter = Callable[[Any], Any]


def _optional(convert: _Converter) -> _Converter:
    return lambda value: None if value is None else convert(value)


# How SQLite's values become PostgreSQL's, by the target column's type.
_CONVERTERS: dict[str, _Converter] = {
    "timestamptz": _optional(decode_time),
    "bool": _optional(bool),
    "float8": _optional(float),
    "int2": _optional(int),
    "int4": _optional(int),
    "int8": _optional(int),
    "bytea": _optional(bytes),
    # PostgreSQL's text holds no NUL: kept as every store now keeps it (``storable``), since an
    # older SQLite install may hold one.
    "text": _optional(lambda value: storable(str(value))),
}


_Row = dict[str, Any]

# What each store redacts on write (``flynn.credentials``), by table and column: the same
# redactions a re-redaction after an upgrade applies (``flynn.memory.redaction.KINDS``).
_REDACTED: dict[str, dict[str, Redaction]] = {kind.table: dict(kind.columns) for kind in KINDS}


_EMBEDDED_AS = {"facts": "fact", "team_chunks": "chunk"}
"""The kind of vector that embeds a row of these tables (messages: ``_copy_messages``)."""


@dataclass(slots=True)
class _Redactions:
    """What one run's scan of the source found: rows redacted per table, the messages whose
    vectors are stale, and how the redacted messages' postings differ from FTS5's."""

    rows: dict[str, int] = field(default_factory=dict)
    stale_vectors: set[tuple[str, int]] = field(default_factory=set)
    """``(kind, ref_id)`` of the vectors of what was redacted: each derived from a secret."""
    titled: set[int] = field(default_factory=set)
    """The team documents whose title was redacted: every chunk's vector embeds its title."""
    left_out: int = 0
    postings_delta: int = 0


def _redacted(table: str, batch: Sequence[Any], found: _Redactions) -> list[_Row]:
    """The batch's rows as dicts, credentials redacted (counted in ``found``)."""
    columns = _REDACTED.get(table, {})
    rows = [dict(row) for row in batch]
    if not columns:
        return rows
    changed = 0
    embedded_as = _EMBEDDED_AS.get(table)
    for row in rows:
        before = [row.get(name) for name in columns]
        for name, redaction in columns.items():
            if name in row:
                row[name] = redaction(row[name], row)
        if before != [row.get(name) for name in columns]:
            changed += 1
            if embedded_as is not None:
                found.stale_vectors.add((embedded_as, int(row["id"])))
            if table == "team_documents":
                found.titled.add(int(row["id"]))
        elif table == "team_chunks" and int(row["document_id"]) in found.titled:
            # Clean itself, but its vector embeds the title (``flynn.learning.documents``).
            found.stale_vectors.add(("chunk", int(row["id"])))
    found.rows[table] = found.rows.get(table, 0) + changed
    return rows


def copy_install(
    source: Database,
    target: PostgresDatabase,
    install: str,
    *,
    also: Sequence[CopiedKind] = (),
    progress: Progress | None = None,
    batch_rows: int = BATCH_ROWS,
) -> list[KindCount]:
    """Copies every table of ``source`` into ``target`` (migrated), then ``also``, and counts
    each kind on both sides. ``install`` names the source install: a target already filled from
    another, or holding rows without saying where from, raises ``CopyRefused`` before anything
    is written. Raises ``StoreError`` when either database fails; what was committed before
    stays, and a rerun completes it."""
    claim(target, install)
    log.info("storage.copy.started", source=str(source.path), target=target.shown_url)
    copied: dict[str, int] = {}
    found = _Redactions()
    for table in TABLES:
        if table.name == "messages":
            copied["messages"], copied[POSTINGS] = _copy_messages(
                source, target, progress, batch_rows, found
            )
        else:
            copied[table.name] = _copy_table(source, target, table, progress, batch_rows, found)
        log.info("storage.copy.table", table=table.name, copied=copied[table.name])
    _advance_sequences(source, target)
    extra = {}
    for kind in also:
        extra[kind.kind] = kind.copy()
        log.info("storage.copy.table", table=kind.kind, copied=extra[kind.kind])
    counts = count_kinds(source, target, copied, found)
    for kind in also:
        source_count, held = kind.counts()
        counts.append(KindCount(kind.kind, source_count, held, extra[kind.kind], kind.redacted))
    if redacted_rows := sum(count.redacted for count in counts):
        log.info("storage.copy.redacted", rows=redacted_rows)
    # Every row and file went through today's gate: no re-redaction pass is due at the first
    # start (an interrupted copy leaves the stamp as it was, and is run again).
    SqlRedaction(target, statement=psycopg_statement).stamp_current()
    return counts


def claim(target: PostgresDatabase, install: str) -> None:
    """Marks ``target`` as filled from ``install``; ``CopyRefused`` when it was filled from
    another, holds rows and does not say where from, or went live: a worker or a command wrote
    to it (``went_live``, marked by the first row anything but a copy writes; a worker's start
    writes one). After that, both sides number new rows from the same ids and a person may have
    edited what the copy would write again: only a copy into a database nothing else has
    written is safe to repeat."""
    row = target.fetchone(_ORIGIN)
    if row is not None and row["install"] != install:
        raise CopyRefused(
            f"{target.shown_url} holds a copy of another flynn install, not of this one: "
            "copy into an empty database"
        )
    if row is None:
        occupied = [table.name for table in TABLES if _has_rows(target, table.name)]
        if occupied:
            raise CopyRefused(
                f"{target.shown_url} already holds data that is not a copy of this install "
                f"({', '.join(occupied)}): copy into an empty database"
            )
    live = target.fetchone(_WENT_LIVE)
    if live is not None:
        raise CopyRefused(
            f"{target.shown_url} has been in use since {live['at']:%Y-%m-%d %H:%M} UTC "
            f"(workers or commands wrote to it, first to {live['first']}), so copying again "
            "could overwrite or mix up their rows: keep it as it is, or copy into an empty database"
        )
    if row is None:
        target.execute(_CLAIM, (install,))


def count_kinds(
    source: Database,
    target: PostgresDatabase,
    copied: Mapping[str, int],
    found: _Redactions,
) -> list[KindCount]:
    """Each table's rows on both sides, and the search postings; ``copied`` says how many this
    run wrote, ``found`` what its scan redacted and left out. A target's documents count those
    the source has (the rest are person files, counted on their own). The source's postings
    are FTS5's, but for the redacted messages: theirs are counted from the redacted text, as
    they were written."""
    written = copied
    counts = []
    for table in TABLES:
        rows = _count(source.fetchone(f"SELECT count(*) AS n FROM {table.name}"))
        if table.name == "documents":
            names = [row["namespace"] for row in source.fetchall("SELECT namespace FROM documents")]
            held = _count(
                target.fetchone(
                    "SELECT count(*) AS n FROM documents WHERE namespace = ANY(%s)", (names,)
                )
            )
        else:
            held = _count(target.fetchone(f"SELECT count(*) AS n FROM {table.name}"))
        counts.append(
            KindCount(
                table.name,
                rows,
                held,
                written.get(table.name, 0),
                found.rows.get(table.name, 0),
                found.left_out if table.name == "embeddings" else 0,
            )
        )
    source.execute(_SOURCE_VOCABULARY)
    postings = _count(source.fetchone(_SOURCE_POSTINGS)) + found.postings_delta
    held = _count(target.fetchone(_TARGET_POSTINGS))
    counts.append(KindCount(POSTINGS, postings, held, written.get(POSTINGS, 0)))
    return counts


def _count(row: Any) -> int:
    return 0 if row is None or row["n"] is None else int(row["n"])


def _has_rows(target: PostgresDatabase, table: str) -> bool:
    return target.fetchone(f"SELECT 1 AS n FROM {table} LIMIT 1") is not None


@dataclass(frozen=True, slots=True)
class _Column:
    name: str
    udt: str
    identity: bool


def _target_columns(target: PostgresDatabase, table: str) -> list[_Column]:
    return [
        _Column(str(row["column_name"]), str(row["udt_name"]), row["is_identity"] == "YES")
        for row in target.fetchall(_TARGET_COLUMNS, (table,))
    ]


def _source_columns(source: Database, table: str) -> set[str]:
    # ``table_info`` leaves out generated columns (SQLite's ``ns``), which PostgreSQL has not.
    return {str(row["name"]) for row in source.fetchall(f"PRAGMA table_info({table})")}


def _insert(table: str, columns: Sequence[_Column], *, returning: str | None = None) -> str:
    names = ", ".join(f'"{column.name}"' for column in columns)
    arrays = ", ".join(f"%s::{column.udt}[]" for column in columns)
    overriding = " OVERRIDING SYSTEM VALUE" if any(c.identity for c in columns) else ""
    statement = (
        f"INSERT INTO {table} ({names}){overriding} SELECT * FROM unnest({arrays}) "
        "ON CONFLICT DO NOTHING"
    )
    return statement + (f" RETURNING {returning}" if returning else "")


def _arrays(columns: Sequence[_Column], rows: Sequence[Any]) -> list[list[Any]]:
    return [[_CONVERTERS[column.udt](row[column.name]) for row in rows] for column in columns]


def _copy_table(
    source: Database,
    target: PostgresDatabase,
    table: _Table,
    progress: Progress | None,
    batch_rows: int,
    found: _Redactions,
) -> int:
    columns = _columns(source, target, table.name)
    select = ", ".join(f'"{column.name}"' for column in columns)
    statement = _insert(table.name, columns)
    written = 0
    for batch in source.batches(
        f"SELECT {select} FROM {table.name} ORDER BY {table.order}", size=batch_rows
    ):
        rows = _redacted(table.name, batch, found)
        if table.name == "embeddings":
            kept = [row for row in rows if not _is_stale(row, found.stale_vectors)]
            found.left_out += len(rows) - len(kept)
            rows = kept
            if not rows:
                continue
        with target.transaction():
            stored = target.execute(statement, _arrays(columns, rows))
        written += stored
        if progress is not None:
            progress(table.name, stored)
    return written


def _is_stale(row: _Row, stale: set[tuple[str, int]]) -> bool:
    kind, ref_id = str(row["kind"]), int(row["ref_id"])
    if kind == "passage":  # a long message's later window goes with its message's vector
        kind, ref_id = "message", turn_of(ref_id)
    return (kind, ref_id) in stale


def _columns(source: Database, target: PostgresDatabase, table: str) -> list[_Column]:
    """The target's columns the source has too (PostgreSQL's own, such as ``root``, are
    derived; SQLite's generated ``ns`` is left out)."""
    present = _source_columns(source, table)
    return [column for column in _target_columns(target, table) if column.name in present]


def _copy_messages(
    source: Database,
    target: PostgresDatabase,
    progress: Progress | None,
    batch_rows: int,
    found: _Redactions,
) -> tuple[int, int]:
    """Messages with their search postings, each batch with its postings in one transaction;
    those already copied are left alone (not cut into words again). Credentials are redacted
    first (every batch, copied or not, so ``found`` is whole on a rerun too): the postings are
    the redacted text's, and the vectors of a redacted message and of the next one in its
    session (which embeds it too) are marked stale. Returns the messages and the term
    instances (postings weighed by their counts) written."""
    columns = _columns(source, target, "messages")
    words = FtsWords()
    derived = [_Column("root", "text", False), _Column("terms", "int4", False)]
    statement = _insert("messages", [*columns, *derived], returning="id")
    select = ", ".join(f'"{column.name}"' for column in columns)
    written = instances = 0
    redacted_last: dict[str, bool] = {}  # each session's last message so far: was it redacted?
    for batch in source.batches(f"SELECT {select} FROM messages ORDER BY id", size=batch_rows):
        redacted = _redacted("messages", batch, found)
        changed = []
        for before, row in zip(batch, redacted, strict=True):
            message_id, session = int(row["id"]), str(row["session"])
            is_changed = row["content"] != before["content"]
            if is_changed or redacted_last.get(session, False):
                found.stale_vectors.add(("message", message_id))
            redacted_last[session] = is_changed
            if is_changed:
                changed.append((str(before["content"]), str(row["content"])))
        if changed:
            was = words.index([old for old, _ in changed])
            now = words.index([new for _, new in changed])
            found.postings_delta += sum(t.length for t in now) - sum(t.length for t in was)
        ids = [int(row["id"]) for row in redacted]
        there = {int(row["id"]) for row in target.fetchall(_EXISTING_MESSAGES, (ids,))}
        rows = [row for row in redacted if int(row["id"]) not in there]
        if not rows:
            continue
        indexed = words.index([str(row["content"]) for row in rows])
        roots = [namespace_root(str(row["namespace"])) for row in rows]
        arrays = [*_arrays(columns, rows), roots, [text.length for text in indexed]]
        with target.transaction():
            stored = {int(row["id"]) for row in target.fetchall(statement, arrays)}
            # The postings of the messages this statement stored: none can be there yet.
            target.copy_in(
                _COPY_TERMS,
                (
                    (term, int(row["id"]), root, count)
                    for row, root, text in zip(rows, roots, indexed, strict=True)
                    if int(row["id"]) in stored
                    for term, count in text.terms.items()
                ),
            )
        written += len(stored)
        instances += sum(
            text.length for row, text in zip(rows, indexed, strict=True) if int(row["id"]) in stored
        )
        if progress is not None:
            progress("messages", len(stored))
    return written, instances


def _advance_sequences(source: Database, target: PostgresDatabase) -> None:
    """Each identity's sequence past the highest id copied and past SQLite's own counter."""
    counters = {
        str(row["name"]): int(row["seq"])
        for row in source.fetchall("SELECT name, seq FROM sqlite_sequence")
    }
    for table in TABLES:
        for column in _target_columns(target, table.name):
            if not column.identity:
                continue
            row = target.fetchone(f'SELECT max("{column.name}") AS n FROM {table.name}')
            high = max(_count(row), counters.get(table.name, 0) if column.name == "id" else 0)
            if high > 0:
                target.execute(_ADVANCE, {"table": table.name, "column": column.name, "high": high})
