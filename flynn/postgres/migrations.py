"""The PostgreSQL schema, as numbered forward-only migrations: ``MIGRATIONS[n - 1]`` takes a
database from version ``n - 1`` to ``n``; ``flynn_migrations`` records each one applied
(``PostgresDatabase.open`` applies what is missing). Append only; never edit a shipped entry.

Namespaces and names that lists are sorted by are compared bytewise (``COLLATE "C"``), as
SQLite compares text: the prefix ranges of ``flynn.memory.namespaces`` depend on it, and a
server's default collation (``en_US``) would sort ``User/x`` and ``user%`` among ``user/...``.
Times are ``timestamptz``, to the microsecond.
"""

from __future__ import annotations

_SCHEMA_V1 = """
CREATE TABLE documents (
    namespace  text COLLATE "C" PRIMARY KEY,
    content    text NOT NULL,
    updated_at timestamptz NOT NULL,
    expires_at timestamptz
);

CREATE TABLE costs (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    provider      text COLLATE "C" NOT NULL,
    model         text COLLATE "C" NOT NULL,
    task          text COLLATE "C" NOT NULL,
    input_tokens  bigint NOT NULL,
    output_tokens bigint NOT NULL,
    -- US dollars; NULL when the model had no known price.
    cost          double precision,
    created_at    timestamptz NOT NULL
);
CREATE INDEX costs_created_at ON costs (created_at);
"""

# The schedule (``flynn.schedule.postgres``): SQLite's tables as its migrations left them
# (``flynn.schedule.migrations``: 8, 11, 13, 19), in one step. Flags stay integers 0/1 as there,
# so the schedule's statements are the same on both backends. ``push_drops.seq`` orders a
# digest's entries as SQLite's ``rowid`` does. ``jobs_generation`` is ``Schedule.generation``
# across workers: bumped by a trigger at the commit of any change to ``jobs`` (deferred, so a
# worker holds that row only while it commits, and a reader never sees the count move before
# the change it counts).
_SCHEMA_SCHEDULE = """
CREATE TABLE jobs (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace     text COLLATE "C" NOT NULL,
    kind          text NOT NULL,
    number        integer,
    text          text NOT NULL,
    repeat        text,
    timezone      text NOT NULL,
    next_at       timestamptz,
    channel       text,
    chat_id       text,
    thread        text,
    recipient     text,
    status        text NOT NULL DEFAULT 'active'
                  CHECK (status IN ('active', 'done', 'cancelled')),
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    last_fired_at timestamptz,
    fired_count   integer NOT NULL DEFAULT 0
);
CREATE INDEX jobs_due ON jobs (next_at) WHERE status = 'active';
CREATE INDEX jobs_namespace ON jobs (namespace, status, next_at);
CREATE UNIQUE INDEX jobs_reminder_number ON jobs (namespace, number) WHERE kind = 'reminder';

CREATE TABLE pushes (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    namespace    text COLLATE "C" NOT NULL,
    kind         text NOT NULL,
    text         text NOT NULL,
    channel      text NOT NULL,
    chat_id      text NOT NULL,
    thread       text,
    recipient    text,
    job_id       bigint,
    due_at       timestamptz,
    late         integer NOT NULL DEFAULT 0 CHECK (late IN (0, 1)),
    created_at   timestamptz NOT NULL,
    leased_until timestamptz,
    delivered_at timestamptz,
    failures     integer NOT NULL DEFAULT 0,
    occurrences  integer NOT NULL DEFAULT 1,
    first_due_at timestamptz,
    digest       integer NOT NULL DEFAULT 0 CHECK (digest IN (0, 1))
);
CREATE INDEX pushes_pending ON pushes (id) WHERE delivered_at IS NULL;
CREATE INDEX pushes_pending_chat ON pushes (channel, chat_id) WHERE delivered_at IS NULL;
CREATE INDEX pushes_pending_recipient ON pushes (channel, recipient) WHERE delivered_at IS NULL;
CREATE INDEX pushes_pending_job ON pushes (job_id) WHERE delivered_at IS NULL;
CREATE INDEX pushes_counted ON pushes (namespace) WHERE delivered_at IS NULL AND digest = 0;
CREATE INDEX pushes_namespace ON pushes (namespace);
-- A job's due time queues at most one push, whatever races the claim.
CREATE UNIQUE INDEX pushes_job_due ON pushes (job_id, due_at) WHERE job_id IS NOT NULL;

CREATE TABLE push_drops (
    seq          bigint GENERATED ALWAYS AS IDENTITY,
    digest_id    bigint NOT NULL REFERENCES pushes (id) ON DELETE CASCADE,
    reason       text NOT NULL CHECK (reason IN ('expired', 'held')),
    key          text NOT NULL,
    kind         text NOT NULL,
    text         text NOT NULL,
    timezone     text NOT NULL,
    occurrences  integer NOT NULL,
    first_due_at timestamptz,
    last_due_at  timestamptz,
    PRIMARY KEY (digest_id, reason, key)
);

CREATE TABLE job_runs (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id       bigint,
    namespace    text COLLATE "C" NOT NULL,
    kind         text NOT NULL,
    text         text NOT NULL,
    due_at       timestamptz NOT NULL,
    late         integer NOT NULL DEFAULT 0 CHECK (late IN (0, 1)),
    created_at   timestamptz NOT NULL,
    leased_until timestamptz,
    failures     integer NOT NULL DEFAULT 0,
    finished_at  timestamptz,
    outcome      text CHECK (outcome IN ('done', 'given_up'))
);
CREATE INDEX job_runs_pending ON job_runs (id) WHERE finished_at IS NULL;
CREATE INDEX job_runs_namespace ON job_runs (namespace);
CREATE UNIQUE INDEX job_runs_job_due ON job_runs (job_id, due_at) WHERE job_id IS NOT NULL;

CREATE TABLE jobs_generation (n bigint NOT NULL);
INSERT INTO jobs_generation (n) VALUES (0);
CREATE FUNCTION jobs_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE jobs_generation SET n = n + 1;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER jobs_changed AFTER INSERT OR UPDATE OR DELETE ON jobs
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION jobs_changed();
"""

# Telegram's webhook updates claimed once across workers (``flynn.memory.telegram_updates``,
# SQLite's version 20): ids only.
_SCHEMA_TELEGRAM_UPDATES = """
CREATE TABLE telegram_updates (
    bot_id     bigint NOT NULL,
    update_id  bigint NOT NULL,
    state      text NOT NULL CHECK (state IN ('claimed', 'done')),
    claimed_at timestamptz NOT NULL,
    PRIMARY KEY (bot_id, update_id)
);
CREATE INDEX telegram_updates_claimed_at ON telegram_updates (claimed_at);
"""

# Conversation history (``flynn.postgres.history``) and its search, and message vectors
# (``flynn.postgres.vectors``). FTS5 is SQLite's: here Flynn cuts words with FTS5's own tokenizer
# (``flynn.memory.fts_words``) and keeps what ``messages_fts`` would hold in plain tables written
# in the message's transaction: each term's postings with its count in the message
# (``message_terms``), each message's length in terms (``messages.terms``), and per namespace root
# the messages and terms it holds (``message_roots``, kept by triggers, updated in place), so the
# same Python ranks the same lists with the same statistics.
_SCHEMA_HISTORY = """
CREATE TABLE sessions (
    key                text COLLATE "C" PRIMARY KEY,
    namespace          text COLLATE "C" NOT NULL,
    summary            text,
    summarized_through bigint,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
CREATE INDEX sessions_namespace ON sessions (namespace);

CREATE TABLE messages (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session    text COLLATE "C" NOT NULL,
    namespace  text COLLATE "C" NOT NULL,
    -- ``flynn.memory.namespaces.namespace_root(namespace)``: whose statistics the row counts in.
    root       text COLLATE "C" NOT NULL,
    role       text NOT NULL,
    content    text NOT NULL,
    tokens     integer NOT NULL,
    created_at timestamptz NOT NULL,
    summarized boolean NOT NULL DEFAULT false,
    offline    boolean NOT NULL DEFAULT false,
    -- Terms of ``content`` as FTS5 cuts them: bm25's length of the row.
    terms      integer NOT NULL
);
CREATE INDEX messages_session ON messages (session, summarized, id);
CREATE INDEX messages_namespace_created ON messages (namespace, created_at, id);
CREATE INDEX messages_root ON messages (root, id);

CREATE TABLE message_tools (
    message_id bigint PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    steps      text NOT NULL
);

-- Postings: which messages hold a term, newest last; a root's own through the second index.
CREATE TABLE message_terms (
    term       text COLLATE "C" NOT NULL,
    message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    root       text COLLATE "C" NOT NULL,
    occurs     integer NOT NULL,
    PRIMARY KEY (term, message_id)
);
CREATE INDEX message_terms_root ON message_terms (root, term, message_id);
CREATE INDEX message_terms_message ON message_terms (message_id);

CREATE TABLE message_roots (
    root      text COLLATE "C" PRIMARY KEY,
    messages  bigint NOT NULL,
    terms     bigint NOT NULL
);

CREATE TABLE embeddings (
    kind      text COLLATE "C" NOT NULL,
    ref_id    bigint NOT NULL,
    namespace text COLLATE "C" NOT NULL,
    model     text COLLATE "C" NOT NULL,
    vector    bytea NOT NULL,
    PRIMARY KEY (kind, ref_id, model)
);
CREATE INDEX embeddings_namespace ON embeddings (namespace, kind);

-- Moves whenever any statement writes ``embeddings``: what a worker's vectors in memory
-- (``flynn.memory.vector_index``) were read at, as SQLite's ``data_version`` is.
CREATE TABLE embedding_writes (
    id      integer PRIMARY KEY CHECK (id = 1),
    version bigint NOT NULL
);
INSERT INTO embedding_writes VALUES (1, 0);
CREATE FUNCTION flynn_embedding_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE embedding_writes SET version = version + 1 WHERE id = 1;
    RETURN NULL;
END $$;
CREATE TRIGGER embeddings_written AFTER INSERT OR UPDATE OR DELETE ON embeddings
    FOR EACH STATEMENT EXECUTE FUNCTION flynn_embedding_written();

-- A root's counts follow its messages on every path that writes them (a forget across stores
-- too), each an update in place: two workers appending at once both count.
CREATE FUNCTION flynn_message_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_roots AS r (root, messages, terms) VALUES (NEW.root, 1, NEW.terms)
    ON CONFLICT (root) DO UPDATE SET messages = r.messages + 1, terms = r.terms + excluded.terms;
    RETURN NULL;
END $$;
CREATE TRIGGER messages_root_added AFTER INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION flynn_message_added();
CREATE FUNCTION flynn_message_recounted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE message_roots SET messages = messages - 1, terms = terms - OLD.terms
    WHERE root = OLD.root;
    INSERT INTO message_roots AS r (root, messages, terms) VALUES (NEW.root, 1, NEW.terms)
    ON CONFLICT (root) DO UPDATE SET messages = r.messages + 1, terms = r.terms + excluded.terms;
    RETURN NULL;
END $$;
CREATE TRIGGER messages_root_recounted AFTER UPDATE OF root, terms ON messages
    FOR EACH ROW WHEN (OLD.root IS DISTINCT FROM NEW.root OR OLD.terms IS DISTINCT FROM NEW.terms)
    EXECUTE FUNCTION flynn_message_recounted();

-- A vector says what its text said: it goes with the message, on every path that deletes one.
CREATE FUNCTION flynn_message_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE message_roots SET messages = messages - 1, terms = terms - OLD.terms
    WHERE root = OLD.root;
    DELETE FROM embeddings WHERE kind = 'message' AND ref_id = OLD.id;
    RETURN NULL;
END $$;
CREATE TRIGGER messages_embeddings_delete AFTER DELETE ON messages
    FOR EACH ROW EXECUTE FUNCTION flynn_message_deleted();
"""

# Facts with their history (``flynn.postgres.facts``). ``id`` by default, not always: a copy from
# SQLite keeps its ids (people see them, ``supersedes`` links them). ``words`` is what search
# matches, cut as SQLite's FTS5 (``unicode61``) cuts text: at anything not a letter or digit,
# ``_`` and ``.`` included. A fact's vectors go with it, on every path that deletes one.
# ``facts_generation`` is ``Facts.generation`` across workers, as
# ``jobs_generation`` is the schedule's: bumped by a trigger at the commit of any change to
# ``facts``, whoever makes it (deferred: a writer holds the row only while it commits).
_FACTS = """
CREATE TABLE facts (
    id         bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    namespace  text COLLATE "C" NOT NULL,
    kind       text COLLATE "C" NOT NULL,
    field      text COLLATE "C",
    value      text NOT NULL,
    confidence double precision NOT NULL,
    source     text COLLATE "C" NOT NULL,
    status     text COLLATE "C" NOT NULL DEFAULT 'active'
               CHECK (status IN ('active', 'superseded', 'deleted')),
    supersedes bigint REFERENCES facts(id) ON DELETE SET NULL,
    session    text COLLATE "C",
    channel    text COLLATE "C",
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    message_id bigint REFERENCES messages (id) ON DELETE SET NULL,
    words      tsvector GENERATED ALWAYS AS (
        to_tsvector('english'::regconfig, regexp_replace(
            (coalesce(field, '') || ' ' || value) COLLATE "default", '[^[:alnum:]]+', ' ', 'g'
        ))
    ) STORED
);
CREATE INDEX facts_namespace_status_field ON facts (namespace, status, field);
CREATE INDEX facts_namespace_field ON facts (namespace, field);
CREATE INDEX facts_supersedes ON facts (supersedes);
CREATE INDEX facts_message_id ON facts (message_id);
-- ``find``: SQLite's NOCASE, which folds ASCII letters only, as lower() does under "C".
CREATE INDEX facts_namespace_value
    ON facts (namespace, lower(value COLLATE "C")) WHERE status = 'active';
CREATE INDEX facts_words ON facts USING gin (words);

CREATE TABLE facts_generation (n bigint NOT NULL);
INSERT INTO facts_generation (n) VALUES (0);
CREATE FUNCTION facts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE facts_generation SET n = n + 1;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER facts_changed AFTER INSERT OR UPDATE OR DELETE ON facts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION facts_changed();
CREATE FUNCTION flynn_fact_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM embeddings WHERE kind = 'fact' AND ref_id = OLD.id;
    RETURN NULL;
END $$;
CREATE TRIGGER facts_embeddings_delete AFTER DELETE ON facts
    FOR EACH ROW EXECUTE FUNCTION flynn_fact_deleted();
"""

# The knowledge graph (``flynn.postgres.graph``); a deleted message takes its mentions.
_GRAPH = """
CREATE TABLE entities (
    id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    namespace   text COLLATE "C" NOT NULL,
    -- bytewise, as on SQLite: lower() folds ASCII letters only (the upsert's spelling rule)
    name        text COLLATE "C" NOT NULL,
    name_key    text COLLATE "C" NOT NULL,
    type        text COLLATE "C" NOT NULL DEFAULT 'thing',
    description text,
    confidence  double precision NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0.0 AND 1.0),
    mentions    integer NOT NULL DEFAULT 1,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (namespace, name_key)
);
CREATE INDEX entities_name_key ON entities (name_key, namespace);
CREATE TABLE relations (
    id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    namespace   text COLLATE "C" NOT NULL,
    source_id   bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_id   bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    type        text COLLATE "C" NOT NULL,
    confidence  double precision NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0.0 AND 1.0),
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (source_id, target_id, type),
    CHECK (source_id != target_id)
);
CREATE INDEX relations_target ON relations (target_id);
CREATE INDEX relations_namespace ON relations (namespace);
CREATE TABLE entity_mentions (
    entity_id   bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    message_id  bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    PRIMARY KEY (entity_id, message_id)
);
CREATE INDEX entity_mentions_message ON entity_mentions (message_id);
"""

# Durable intake (``flynn.postgres.inbound``): the unique key is what lets one of several workers
# accepting the same message run its turn. Flags are 0/1 integers, as on SQLite, so the store's
# logic is the same on both.
_INTAKE = """
CREATE TABLE intake (
    id           bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    channel      text COLLATE "C" NOT NULL,
    message_id   text COLLATE "C" NOT NULL,
    session      text COLLATE "C" NOT NULL,
    namespace    text COLLATE "C",
    chat_id      text COLLATE "C" NOT NULL DEFAULT '',
    thread       text COLLATE "C",
    sender_id    text COLLATE "C" NOT NULL DEFAULT '',
    sender_name  text,
    is_group     smallint NOT NULL DEFAULT 0 CHECK (is_group IN (0, 1)),
    forwarded    smallint NOT NULL DEFAULT 0 CHECK (forwarded IN (0, 1)),
    text         text,
    attachments  text,
    state        text COLLATE "C" NOT NULL DEFAULT 'accepted'
                 CHECK (state IN ('accepted', 'answered', 'delivered', 'failed')),
    reply        text,
    reply_error  text,
    received_at  timestamptz NOT NULL,
    answered_at  timestamptz,
    completed_at timestamptz,
    UNIQUE (channel, chat_id, message_id)
);
CREATE INDEX intake_open ON intake (state, id) WHERE state IN ('accepted', 'answered');
CREATE INDEX intake_received_at ON intake (received_at);
CREATE INDEX intake_namespace ON intake (namespace);
"""

# Who may come in (``flynn.postgres.person_tokens``, ``flynn.postgres.pairing``): each person's
# gateway tokens as SHA-256 digests only (a token is shown once, when made, and never stored),
# the codes handed to strangers who wrote to a bot, and the accounts let in.
_ACCESS = """
CREATE TABLE person_tokens (
    id         bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    person     text COLLATE "C" NOT NULL,
    digest     text COLLATE "C" NOT NULL UNIQUE,
    created_at timestamptz NOT NULL
);
CREATE INDEX person_tokens_person ON person_tokens (person);
CREATE TABLE pairing_requests (
    code        text COLLATE "C" PRIMARY KEY,
    channel     text COLLATE "C" NOT NULL,
    external_id text COLLATE "C" NOT NULL,
    sender_name text,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    UNIQUE (channel, external_id)
);
CREATE TABLE approved_accounts (
    channel     text COLLATE "C" NOT NULL,
    external_id text COLLATE "C" NOT NULL,
    person      text COLLATE "C" NOT NULL,
    approved_at timestamptz NOT NULL,
    PRIMARY KEY (channel, external_id)
);
"""

# Team knowledge (``flynn.postgres.team``): documents, their chunks with the words search matches
# (heading and content cut as FTS5 cuts them, the heading weighing half as much in ranking, as
# on SQLite), and the ``team`` graph entities each document put there. A chunk's vectors go with
# it, on every path that deletes one.
_TEAM = """
CREATE TABLE team_documents (
    id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    path        text COLLATE "C" NOT NULL UNIQUE,
    title       text NOT NULL,
    digest      text COLLATE "C" NOT NULL,
    chars       integer NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE TABLE team_chunks (
    id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    document_id bigint NOT NULL REFERENCES team_documents (id) ON DELETE CASCADE,
    position    integer NOT NULL,
    heading     text NOT NULL DEFAULT '',
    content     text NOT NULL,
    words       tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english'::regconfig, regexp_replace(
            heading COLLATE "default", '[^[:alnum:]]+', ' ', 'g')), 'B')
        || setweight(to_tsvector('english'::regconfig, regexp_replace(
            content COLLATE "default", '[^[:alnum:]]+', ' ', 'g')), 'A')
    ) STORED
);
CREATE INDEX team_chunks_document ON team_chunks (document_id, position);
CREATE INDEX team_chunks_words ON team_chunks USING gin (words);
CREATE TABLE team_document_entities (
    document_id bigint NOT NULL REFERENCES team_documents (id) ON DELETE CASCADE,
    entity_id   bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (document_id, entity_id)
);
CREATE INDEX team_document_entities_entity ON team_document_entities (entity_id);
CREATE FUNCTION flynn_chunk_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM embeddings WHERE kind = 'chunk' AND ref_id = OLD.id;
    RETURN NULL;
END $$;
CREATE TRIGGER team_chunks_embeddings_delete AFTER DELETE ON team_chunks
    FOR EACH ROW EXECUTE FUNCTION flynn_chunk_deleted();
"""

# The pictures and files people send (``flynn.postgres.uploads``): each kept whole, by the
# person's memory root and its name, so every worker reads what one kept; ``FileStore``'s caps
# count ``octet_length(data)``. And which SQLite install a ``flynn storage copy`` filled this
# database from (``flynn.postgres.copy``): a copy into a database holding another install's
# rows is refused.
_UPLOADS_AND_ORIGIN = """
CREATE TABLE uploaded_files (
    namespace  text COLLATE "C" NOT NULL,
    name       text COLLATE "C" NOT NULL,
    data       bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (namespace, name)
);
CREATE TABLE copied_from (
    id         integer PRIMARY KEY CHECK (id = 1),
    install    text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now()
);
"""

# Several workers (``flynn.postgres.coordination``): each worker's lease on life, renewed while
# it runs; the worker that accepted a message (``owner``), whose intake another takes over once
# that lease ran out; leases on work one worker does at a time (Telegram's polling).
_WORKERS = """
ALTER TABLE intake ADD COLUMN owner text COLLATE "C";
CREATE TABLE workers (
    worker      text COLLATE "C" PRIMARY KEY,
    alive_until timestamptz NOT NULL
);
CREATE TABLE leader_leases (
    name   text COLLATE "C" PRIMARY KEY,
    holder text COLLATE "C" NOT NULL,
    until  timestamptz NOT NULL
);
"""

# The gateway's channel token, generated by the first worker to start (``flynn.gateway_token``):
# its SHA-256 digest only, never the token, in one row every worker checks a hello against.
_GATEWAY_TOKEN = """
CREATE TABLE gateway_token (
    id         smallint PRIMARY KEY CHECK (id = 1),
    digest     text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL
);
"""

# Fact and team-chunk search on FTS5's own terms, as messages are searched
# (``flynn.postgres.postings``): the postings of each fact (field and value) and of each chunk
# (heading and content), written with the row by the store, since the words are cut by SQLite's
# tokenizer in Python. ``facts.root`` (``namespace_root``) and ``team_chunks.terms`` (its length in
# terms) are NULL until a row is indexed: rows stored before this version are indexed when the
# memory is opened (``PostgresMemory``). The ``tsvector`` columns (Snowball's words) go.
_POSTINGS = """
CREATE TABLE fact_terms (
    term    text COLLATE "C" NOT NULL,
    fact_id bigint NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    root    text COLLATE "C" NOT NULL,
    occurs  integer NOT NULL,
    PRIMARY KEY (term, fact_id)
);
CREATE INDEX fact_terms_root ON fact_terms (root, term, fact_id);
CREATE INDEX fact_terms_fact ON fact_terms (fact_id);
ALTER TABLE facts ADD COLUMN root text COLLATE "C";
CREATE INDEX facts_root ON facts (root, id);
CREATE INDEX facts_unindexed ON facts (id) WHERE root IS NULL;
ALTER TABLE facts DROP COLUMN words;

CREATE TABLE team_chunk_terms (
    term     text COLLATE "C" NOT NULL,
    chunk_id bigint NOT NULL REFERENCES team_chunks (id) ON DELETE CASCADE,
    root     text COLLATE "C" NOT NULL DEFAULT '',
    occurs   integer NOT NULL,
    PRIMARY KEY (term, chunk_id)
);
CREATE INDEX team_chunk_terms_chunk ON team_chunk_terms (chunk_id);
ALTER TABLE team_chunks ADD COLUMN terms integer;
CREATE INDEX team_chunks_unindexed ON team_chunks (id) WHERE terms IS NULL;
ALTER TABLE team_chunks DROP COLUMN words;
"""

# Moving house may be run again only while nothing else has written (``flynn.postgres.copy``
# ``claim``): the first row any worker or command writes, in any table but the ledgers below and
# the postings (written only with their rows), records itself in ``went_live``. The copy's own
# connections say ``flynn.writer = copy`` (``PostgresDatabase.open(writer=...)``) and are left
# out. Row-level, so a statement that changes nothing (an open's indexing of what is already
# indexed) marks nothing; once marked, each row written costs one probe of a one-row table.
_WENT_LIVE = """
CREATE TABLE went_live (
    id         integer PRIMARY KEY CHECK (id = 1),
    first      text NOT NULL,
    at         timestamptz NOT NULL DEFAULT now()
);
-- A database workers served before this version: what they leave behind says so.
INSERT INTO went_live (id, first)
SELECT 1, 'workers' WHERE EXISTS (SELECT 1 FROM workers)
    OR EXISTS (SELECT 1 FROM leader_leases)
    OR EXISTS (SELECT 1 FROM intake WHERE owner IS NOT NULL);
CREATE FUNCTION flynn_note_live_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('flynn.writer', true) IS DISTINCT FROM 'copy'
       AND NOT EXISTS (SELECT 1 FROM went_live) THEN
        INSERT INTO went_live (id, first) VALUES (1, TG_TABLE_NAME) ON CONFLICT (id) DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;
DO $$
DECLARE
    name text;
BEGIN
    FOR name IN
        SELECT table_name FROM information_schema.tables
        WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
          AND table_name NOT IN ('flynn_migrations', 'copied_from', 'went_live',
                                 'message_terms', 'fact_terms', 'team_chunk_terms')
    LOOP
        EXECUTE format(
            'CREATE TRIGGER flynn_went_live AFTER INSERT OR UPDATE OR DELETE ON %I '
            'FOR EACH ROW EXECUTE FUNCTION flynn_note_live_write()', name);
    END LOOP;
END
$$;
"""

# Which rules of the credential gate the stored rows were last redacted with, and where a pass
# to today's stands (``flynn.memory.redaction``; SQLite's migration 21).
_REDACTION_STAMP = """
CREATE TABLE redaction_stamp (
    id       integer PRIMARY KEY CHECK (id = 1),
    done     integer NOT NULL,
    running  integer,
    kind     text,
    after    text
);
INSERT INTO redaction_stamp (id, done) VALUES (1, 0);
"""

# A forum topic's or thread's per-person session is its own namespace root (SQLite's migration
# 22, ``namespace_root``): ``sessions/<key>/u<digits>`` and what lies under it were rooted at
# ``sessions/<key>``, so two people of one topic shared their postings' statistics. Each such
# row's ``root`` is set anew, with its postings'; ``message_roots`` follows the messages by its
# trigger, and a root left with no message goes. Facts not yet indexed (``root`` NULL) are
# indexed with today's ``namespace_root`` when the memory opens.
_SENDER_ROOT = "substring(namespace from '^(sessions/[^/]*/u[0-9]+)(/|$)')"


def _rerooted(table: str, postings: str, key: str) -> str:
    """Sets ``root`` anew on the rows of ``table`` under a sender, then on their ``postings``
    (whose ``key`` is the row's id). The text of version 16: never to be edited."""
    return f"""
UPDATE {table} SET root = {_SENDER_ROOT}
WHERE namespace >= 'sessions/' AND namespace < 'sessions0'
  AND namespace ~ '^sessions/[^/]*/u[0-9]+(/|$)' AND root <> {_SENDER_ROOT};
UPDATE {postings} AS t SET root = r.root FROM {table} AS r
WHERE t.{key} = r.id AND t.root <> r.root
  AND r.namespace >= 'sessions/' AND r.namespace < 'sessions0';
"""


_SENDER_ROOTS = (
    _rerooted("messages", "message_terms", "message_id")
    + "DELETE FROM message_roots WHERE messages = 0;\n"
    + _rerooted("facts", "fact_terms", "fact_id")
)

# A long message's later windows' vectors go with the message's (SQLite's migration 23).
_PASSAGES = """
CREATE FUNCTION flynn_message_vector_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM embeddings WHERE kind = 'passage'
    AND ref_id BETWEEN OLD.ref_id * 64 + 1 AND OLD.ref_id * 64 + 63 AND model = OLD.model;
    RETURN NULL;
END $$;
CREATE TRIGGER embeddings_passages_delete AFTER DELETE ON embeddings
    FOR EACH ROW WHEN (OLD.kind = 'message') EXECUTE FUNCTION flynn_message_vector_deleted();
"""

MIGRATIONS: tuple[str, ...] = (
    _SCHEMA_V1,
    _SCHEMA_SCHEDULE,
    _SCHEMA_TELEGRAM_UPDATES,
    _SCHEMA_HISTORY,
    _FACTS,
    _GRAPH,
    _INTAKE,
    _ACCESS,
    _TEAM,
    _UPLOADS_AND_ORIGIN,
    _WORKERS,
    _GATEWAY_TOKEN,
    _POSTINGS,
    _WENT_LIVE,
    _REDACTION_STAMP,
    _SENDER_ROOTS,
    _PASSAGES,
)
LATEST_VERSION = len(MIGRATIONS)
