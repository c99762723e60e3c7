"""The schema, as numbered forward-only migrations: ``MIGRATIONS[n - 1]`` holds memory's statements
that take a database from version ``n - 1`` to ``n``. A package above memory with tables of its own
in the database (the schedule) adds its statements at the versions it needs (a ``SchemaPart``);
``Schema.of`` makes the one sequence ``Database.open`` applies (what is missing, each version in
one transaction). Append only; never edit a shipped entry.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from flynn.errors import StoreError

if TYPE_CHECKING:
    from flynn.memory.database import Database

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

# The knowledge graph: entities and typed relations per namespace, and which messages
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

# The tool calls and results of a turn, kept with the assistant message that ends it (so
# compaction can never separate a call from its result, and a restart reloads them). The
# schedule's jobs and pushes came at this version too (``flynn.schedule.migrations``).
_SCHEMA_V8 = """
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

# Team knowledge: documents added with ``flynn docs add``, cut into chunks
# on paragraph boundaries, indexed for full-text search; the entities each document put in the
# ``team`` graph, so removing a document takes what only it said.
_SCHEMA_V10 = """
CREATE TABLE team_documents (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    path        TEXT NOT NULL UNIQUE,
    title       TEXT NOT NULL,
    digest      TEXT NOT NULL,
    chars       INTEGER NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE TABLE team_chunks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id INTEGER NOT NULL REFERENCES team_documents(id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    heading     TEXT NOT NULL DEFAULT '',
    content     TEXT NOT NULL
);
CREATE INDEX team_chunks_document ON team_chunks(document_id, position);
CREATE VIRTUAL TABLE team_chunks_fts USING fts5(
    heading, content, content='team_chunks', content_rowid='id', tokenize='porter unicode61'
);
INSERT INTO team_chunks_fts(team_chunks_fts, rank) VALUES ('rank', 'bm25(0.5, 1.0)');
CREATE TRIGGER team_chunks_fts_insert AFTER INSERT ON team_chunks BEGIN
    INSERT INTO team_chunks_fts(rowid, heading, content) VALUES (new.id, new.heading, new.content);
END;
CREATE TRIGGER team_chunks_fts_delete AFTER DELETE ON team_chunks BEGIN
    INSERT INTO team_chunks_fts(team_chunks_fts, rowid, heading, content)
    VALUES ('delete', old.id, old.heading, old.content);
    DELETE FROM embeddings WHERE kind = 'chunk' AND ref_id = old.id;
END;
CREATE TABLE team_document_entities (
    document_id INTEGER NOT NULL REFERENCES team_documents(id) ON DELETE CASCADE,
    entity_id   INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    PRIMARY KEY (document_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX team_document_entities_entity ON team_document_entities(entity_id);
"""

# The schedule's alone: its reminders numbered per person (``flynn.schedule.migrations``).
_SCHEMA_V11 = ""

# Durable intake keys on (channel, chat_id, message_id), three columns, instead of a channel's own
# joined id: the gateway's "<client_id>:<frame_id>" made "alice-laptop" + "x:1" the same message
# as "alice-laptop:x" + "1". The gateway's rows lose that prefix (its frame id is the message id
# now).
_SCHEMA_V12 = """
CREATE TABLE intake_keyed (
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
    UNIQUE (channel, chat_id, message_id)
);
INSERT INTO intake_keyed (id, channel, message_id, session, namespace, chat_id, thread,
                          sender_id, sender_name, is_group, forwarded, text, state, reply,
                          reply_error, received_at, answered_at, completed_at)
SELECT id, channel,
       CASE WHEN channel = 'gateway' AND chat_id <> ''
                 AND substr(message_id, 1, length(chat_id) + 1) = chat_id || ':'
            THEN substr(message_id, length(chat_id) + 2)
            ELSE message_id END,
       session, namespace, chat_id, thread, sender_id, sender_name, is_group, forwarded, text,
       state, reply, reply_error, received_at, answered_at, completed_at
FROM intake;
DROP TABLE intake;
ALTER TABLE intake_keyed RENAME TO intake;
CREATE INDEX intake_open ON intake(state, id) WHERE state IN ('accepted', 'answered');
CREATE INDEX intake_received_at ON intake(received_at);
CREATE INDEX intake_namespace ON intake(namespace);
"""

# The schedule's alone: bounded pushes (``flynn.schedule.migrations``).
_SCHEMA_V13 = ""

# Who may come in. ``person_tokens`` holds each person's gateway tokens as
# SHA-256 digests only: a token is shown once, when made, and never stored. ``pairing_requests``
# are the codes handed to strangers who wrote to a bot (one per account, until it expires);
# ``approved_accounts`` are the accounts ``flynn users approve`` let in, read by identity
# alongside the ``users:`` map.
_SCHEMA_V14 = """
CREATE TABLE person_tokens (
    id         INTEGER PRIMARY KEY,
    person     TEXT NOT NULL,
    digest     TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);
CREATE INDEX person_tokens_person ON person_tokens(person);
CREATE TABLE pairing_requests (
    code        TEXT PRIMARY KEY,
    channel     TEXT NOT NULL,
    external_id TEXT NOT NULL,
    sender_name TEXT,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    UNIQUE (channel, external_id)
);
CREATE TABLE approved_accounts (
    channel     TEXT NOT NULL,
    external_id TEXT NOT NULL,
    person      TEXT NOT NULL,
    approved_at TEXT NOT NULL,
    PRIMARY KEY (channel, external_id)
) WITHOUT ROWID;
"""

# A gateway client id listed under a person in ``users:`` used to be that person, so their
# gateway sessions, intake rows, reminders and pushes were keyed by the bare client id. Since
# per-person tokens the bare id is the channel token's client (the owner's): left there, the
# person's conversation (``history`` frames, the resumed session's prompt) and reminders would go
# to whoever holds the channel token and names that id, and never to the person. Rows of a
# person's namespace (``users/<name>``) move to the person's key, ``<name>@<client_id>``; a
# session or intake row the person's key already has wins, and the bare one is dropped (its
# messages move all the same). (The schedule's jobs and pushes: ``flynn.schedule.migrations``.)
PERSON_ROWS = (
    "substr({ns}, 1, 6) = 'users/' AND length({ns}) > 6 AND instr(substr({ns}, 7), '/') = 0"
)
_SCHEMA_V15 = f"""
UPDATE OR IGNORE sessions SET key = 'gateway:' || substr(namespace, 7) || '@' || substr(key, 9)
WHERE substr(key, 1, 8) = 'gateway:' AND instr(key, '@') = 0
  AND {PERSON_ROWS.format(ns="namespace")};
DELETE FROM sessions
WHERE substr(key, 1, 8) = 'gateway:' AND instr(key, '@') = 0
  AND {PERSON_ROWS.format(ns="namespace")};
UPDATE messages SET session = 'gateway:' || substr(namespace, 7) || '@' || substr(session, 9)
WHERE substr(session, 1, 8) = 'gateway:' AND instr(session, '@') = 0
  AND {PERSON_ROWS.format(ns="namespace")};
UPDATE OR IGNORE intake
SET chat_id = substr(namespace, 7) || '@' || chat_id,
    sender_id = substr(namespace, 7) || '@' || sender_id,
    session = 'gateway:' || substr(namespace, 7) || '@' || substr(session, 9)
WHERE channel = 'gateway' AND chat_id <> '' AND instr(chat_id, '@') = 0
  AND {PERSON_ROWS.format(ns="namespace")};
DELETE FROM intake
WHERE channel = 'gateway' AND chat_id <> '' AND instr(chat_id, '@') = 0
  AND {PERSON_ROWS.format(ns="namespace")};
"""

# One set of facts about a person, whoever learnt them: the extraction model's facts (kept in
# ``<root>/facts`` until now) join what rules and the ``remember`` tool learnt in ``<root>/profile``
# (fields and observations) and ``<root>/patterns`` (trigger -> action), with their source and
# confidence as they were. Where the move leaves two active rows for one thing (one field, or one
# observation word for word) the newest stays believed and the older is superseded as of the
# newer row's time, linked by ``supersedes`` where the newer row starts no chain of its own, so
# ``memory show --history`` keeps both. Vectors follow their facts' namespace.
_SCHEMA_V16 = """
UPDATE facts SET namespace = substr(namespace, 1, length(namespace) - 6)
    || CASE WHEN kind = 'action' THEN '/patterns' ELSE '/profile' END
WHERE substr(namespace, -6) = '/facts';
UPDATE embeddings
SET namespace = (SELECT f.namespace FROM facts AS f WHERE f.id = embeddings.ref_id)
WHERE kind = 'fact' AND substr(namespace, -6) = '/facts'
    AND EXISTS (SELECT 1 FROM facts AS f WHERE f.id = embeddings.ref_id);
CREATE TEMP TABLE fact_merges AS
SELECT id AS older, newer, newer_at FROM (
    SELECT id,
           lead(id) OVER same AS newer,
           lead(created_at) OVER same AS newer_at
    FROM facts WHERE status = 'active'
    WINDOW same AS (
        PARTITION BY namespace,
                     CASE WHEN field IS NULL THEN 'v:' || lower(value) ELSE 'f:' || field END
        ORDER BY created_at, id
    )
) WHERE newer IS NOT NULL;
UPDATE facts SET supersedes = (SELECT m.older FROM fact_merges AS m WHERE m.newer = facts.id)
WHERE supersedes IS NULL AND id IN (SELECT newer FROM fact_merges);
UPDATE facts SET status = 'superseded',
                 updated_at = (SELECT m.newer_at FROM fact_merges AS m WHERE m.older = facts.id)
WHERE id IN (SELECT older FROM fact_merges);
DROP TABLE fact_merges;
"""

# Durable intake keeps a message's pictures and files too: they are written to the person's
# files folder before the channel is told the message was taken, and the row names them (a JSON
# list: name, media type, kind, size, and whether it was kept or why it was refused), so a turn
# replayed after a restart gets them back from the folder. NULL: none (or off the record).
_SCHEMA_V17 = """
ALTER TABLE intake ADD COLUMN attachments TEXT;
"""

# Replies made by the offline provider (no language model configured) are kept in their
# conversation but are not the person's memory: search, distillation and embeddings skip them.
_SCHEMA_V18 = """
ALTER TABLE messages ADD COLUMN offline INTEGER NOT NULL DEFAULT 0 CHECK (offline IN (0, 1));
"""

# Telegram's webhook updates, claimed before they are handled so each is handled once however
# often Telegram posts it, and by whichever worker it lands on (``flynn.memory.telegram_updates``):
# ids only, never a message or a secret. A claim past its lease (a worker died holding it) may be
# taken over; a done one never.
_SCHEMA_V20 = """
CREATE TABLE telegram_updates (
    bot_id     INTEGER NOT NULL,
    update_id  INTEGER NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('claimed', 'done')),
    claimed_at TEXT NOT NULL,
    PRIMARY KEY (bot_id, update_id)
) WITHOUT ROWID;
CREATE INDEX telegram_updates_claimed_at ON telegram_updates(claimed_at);
"""

# Which rules of the credential gate (``flynn.credentials.REDACTION_VERSION``) the stored rows
# were last redacted with, and where a pass to today's stands (``flynn.memory.redaction``): one
# row, created on open; ``done`` 0 is a store written before the stamp existed.
_SCHEMA_V21 = """
CREATE TABLE redaction_stamp (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    done     INTEGER NOT NULL,
    running  INTEGER,
    kind     TEXT,
    after    TEXT
);
INSERT INTO redaction_stamp (id, done) VALUES (1, 0);
"""

# The root of a namespace under a forum topic's or thread's per-person session: before this
# version ``sessions/telegram:-100:77/u1001`` was rooted at ``sessions/telegram:-100:77``, so two
# people of one topic (neither in ``users:``) had their rows counted together, each one's words
# crowding the other's out of a search's candidates and making them look common. Now a third
# segment ``u<digits>`` under ``sessions/`` (the sender, ``SessionKey``) is part of the root, as
# ``namespace_root`` says. ``_TAIL`` is what follows the session's key and its ``/``;
# ``_AFTER_SENDER`` what follows the digits of a sender there ('' or ``/...``).
_TAIL = "substr(namespace, 10 + instr(substr(namespace, 10), '/'))"
_AFTER_SENDER = f"ltrim(substr({_TAIL}, 2), '0123456789')"
_NS_TOKEN_V22 = f"""CASE
    WHEN substr(namespace, 1, 9) = 'sessions/' AND instr(substr(namespace, 10), '/') > 0
        AND {_TAIL} GLOB 'u[0-9]*' AND {_AFTER_SENDER} || '/' GLOB '/*'
    THEN 'n' || lower(hex(substr(namespace, 1, length(namespace) - length({_AFTER_SENDER})))) || 'x'
    ELSE {_NS_TOKEN}
END"""


def _fts_triggers(table: str, columns: tuple[str, ...]) -> str:
    """The triggers keeping ``<table>_fts`` (external content, with ``ns``) in step with
    ``table``, as version 7 wrote them for ``messages`` and ``facts``: a row's entry is
    replaced when its text or namespace changes."""
    fts = f"{table}_fts"
    names = ", ".join(columns)
    new = ", ".join(f"new.{column}" for column in columns)
    old = ", ".join(f"old.{column}" for column in columns)
    insert = f"INSERT INTO {fts}(rowid, {names}, ns) VALUES (new.id, {new}, new.ns);"
    delete = (
        f"INSERT INTO {fts}({fts}, rowid, {names}, ns)\n"
        f"    VALUES ('delete', old.id, {old}, old.ns);"
    )
    return f"""CREATE TRIGGER {fts}_insert AFTER INSERT ON {table} BEGIN
    {insert}
END;
CREATE TRIGGER {fts}_delete AFTER DELETE ON {table} BEGIN
    {delete}
END;
CREATE TRIGGER {fts}_update AFTER UPDATE OF {names}, namespace ON {table} BEGIN
    {delete}
    {insert}
END;"""


# Rows whose token changes are taken out of each full-text index under the old token, the
# column is made again (a virtual column: no row is rewritten) and those rows go back in under
# the new one; every other row's entry stays as it is. The triggers name ``ns``, so they are
# dropped and made again as version 7 made them (``_fts_triggers``: the text of version 22,
# never to be edited).
_REROOTED = f"""
    namespace >= 'sessions/' AND namespace < 'sessions0' AND ({_NS_TOKEN}) <> ({_NS_TOKEN_V22})
"""
_SCHEMA_V22 = f"""
CREATE TEMP TABLE rerooted_messages AS SELECT id FROM messages WHERE {_REROOTED};
CREATE TEMP TABLE rerooted_facts AS SELECT id FROM facts WHERE {_REROOTED};
INSERT INTO messages_fts(messages_fts, rowid, content, ns)
SELECT 'delete', id, content, ns FROM messages WHERE id IN (SELECT id FROM rerooted_messages);
INSERT INTO facts_fts(facts_fts, rowid, field, value, ns)
SELECT 'delete', id, field, value, ns FROM facts WHERE id IN (SELECT id FROM rerooted_facts);
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TRIGGER facts_fts_insert;
DROP TRIGGER facts_fts_delete;
DROP TRIGGER facts_fts_update;
ALTER TABLE messages DROP COLUMN ns;
ALTER TABLE facts DROP COLUMN ns;
ALTER TABLE messages ADD COLUMN ns TEXT GENERATED ALWAYS AS ({_NS_TOKEN_V22}) VIRTUAL;
ALTER TABLE facts ADD COLUMN ns TEXT GENERATED ALWAYS AS ({_NS_TOKEN_V22}) VIRTUAL;
INSERT INTO messages_fts(rowid, content, ns)
SELECT id, content, ns FROM messages WHERE id IN (SELECT id FROM rerooted_messages);
INSERT INTO facts_fts(rowid, field, value, ns)
SELECT id, field, value, ns FROM facts WHERE id IN (SELECT id FROM rerooted_facts);
DROP TABLE rerooted_messages;
DROP TABLE rerooted_facts;
{_fts_triggers("messages", ("content",))}
{_fts_triggers("facts", ("field", "value"))}
"""

# A long message's later windows have vectors of their own (kind ``passage``, ids ``message id *
# 64 + 1..63``: ``flynn.memory.windows``); they go with the message's vector, on every path that
# deletes one (a forget, through ``messages_embeddings_delete``; a redaction; a model dropped).
_SCHEMA_V23 = """
CREATE TRIGGER embeddings_passages_delete AFTER DELETE ON embeddings
WHEN old.kind = 'message' BEGIN
    DELETE FROM embeddings WHERE kind = 'passage'
    AND ref_id BETWEEN old.ref_id * 64 + 1 AND old.ref_id * 64 + 63 AND model = old.model;
END;
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
    _SCHEMA_V10,
    _SCHEMA_V11,
    _SCHEMA_V12,
    _SCHEMA_V13,
    _SCHEMA_V14,
    _SCHEMA_V15,
    _SCHEMA_V16,
    _SCHEMA_V17,
    _SCHEMA_V18,
    "",  # 19: the schedule's job runs (flynn.schedule.migrations)
    _SCHEMA_V20,
    _SCHEMA_V21,
    _SCHEMA_V22,
    _SCHEMA_V23,
)
"""Memory's statements of migration ``n`` (1-based) are ``MIGRATIONS[n - 1]``; an empty one is a
version only a part above memory changed. The ledger of versions for every part: append only;
never edit a shipped entry."""


class NamespaceForgetter(Protocol):
    """What forgets a part's rows of one person (``SqliteMemory.forget_namespace``)."""

    def forget_namespace(self, prefix: str) -> dict[str, int]:
        """Deletes for real the rows under ``prefix`` (``prefix`` or ``prefix/...``), inside the
        caller's transaction; returns how many per kind of row. Raises ``StoreError``."""
        ...


@dataclass(frozen=True, slots=True)
class SchemaPart:
    """Tables a package above memory keeps in the database: the statements it adds at each
    version (the database's numbering, shared with memory), run after memory's of that version,
    and what forgets a person's rows of them, built on the database forgetting writes to."""

    owner: str
    steps: Mapping[int, str]
    forgetting: Callable[[Database], NamespaceForgetter]


@dataclass(frozen=True, slots=True)
class Schema:
    """The one sequence of migrations: ``migrations[n - 1]`` takes a database from version
    ``n - 1`` to ``n``. Made by ``Schema.of``, the only way to a whole database's schema."""

    migrations: tuple[str, ...]
    parts: tuple[SchemaPart, ...]

    @classmethod
    def of(cls, *parts: SchemaPart) -> Schema:
        """Memory's migrations with ``parts``' statements among them, each version's memory's
        first. ``MIGRATIONS`` is the ledger of versions: a part's step at a version it does not
        list is a ``ValueError`` (a new version is taken by appending to it, if need be an empty
        entry, so two owners never take the same one unseen)."""
        for part in parts:
            outside = sorted(v for v in part.steps if not 1 <= v <= len(MIGRATIONS))
            if outside:
                raise ValueError(
                    f"{part.owner}: schema version {outside[0]} is not in memory's MIGRATIONS "
                    f"(1 to {len(MIGRATIONS)}); append an entry there to take a new one"
                )
        return cls(
            tuple(
                "".join([script, *(part.steps.get(version, "") for part in parts)])
                for version, script in enumerate(MIGRATIONS, start=1)
            ),
            parts,
        )

    @property
    def latest(self) -> int:
        """The version a database this schema opens is taken to."""
        return len(self.migrations)

    def up_to(self, version: int) -> Schema:
        """This schema as it stood at ``version``: what a test of a later migration opens first."""
        return Schema(self.migrations[:version], self.parts)


def statements(script: str) -> Iterator[str]:
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
