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

MIGRATIONS: tuple[str, ...] = (_SCHEMA_V1, _SCHEMA_SCHEDULE, _SCHEMA_TELEGRAM_UPDATES)
LATEST_VERSION = len(MIGRATIONS)
