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

MIGRATIONS: tuple[str, ...] = (_SCHEMA_V1, _SCHEMA_HISTORY)
LATEST_VERSION = len(MIGRATIONS)
