"""The schedule's tables in the one database: jobs, pushes and the drops a digest announces, as the
statements ``flynn.memory.database`` runs at each schema version (``SCHEDULE``), and ``SCHEMA``,
the database's whole schema: memory's migrations with these among them.

Versions are the database's, shared with memory: a new step takes the next version of all, by
appending an entry (empty when only the schedule changes) to ``flynn.memory.migrations.MIGRATIONS``
(append only; never edit a shipped one).
"""

from __future__ import annotations

from flynn.memory.migrations import PERSON_ROWS, Schema, SchemaPart
from flynn.schedule.sqlite import SqliteSchedule

# Durable jobs, each due time claimed exactly once, and the outbox of unprompted messages their
# firings produce.
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
"""

# Each person's reminders are numbered 1, 2, 3 in the order they were set (``jobs.number``), so
# what they see and type does not depend on other people's jobs or on the distillation runs; a
# number is never handed out twice within a namespace (assigned at insert as max + 1 over all of
# its reminders, active or not). Other kinds of job keep NULL. The index serves that max and
# refuses a duplicate whatever races the insert.
_SCHEMA_V11 = """
ALTER TABLE jobs ADD COLUMN number INTEGER;
UPDATE jobs SET number = numbered.n
FROM (
    SELECT id, row_number() OVER (PARTITION BY namespace ORDER BY id) AS n
    FROM jobs WHERE kind = 'reminder'
) AS numbered
WHERE jobs.id = numbered.id;
CREATE UNIQUE INDEX jobs_reminder_number ON jobs(namespace, number) WHERE kind = 'reminder';
"""

# Bounded pushes (flynn.schedule.backlog): a repeating reminder's firings while its push waits
# collapse into that one push (``occurrences``, ``first_due_at``); a push dropped for the caps or
# expired is summarised in one ``digest`` push per person and chat, whose entries are
# ``push_drops`` (one per reminder and reason, counts merged), so nothing leaves unannounced.
_SCHEMA_V13 = """
ALTER TABLE pushes ADD COLUMN occurrences INTEGER NOT NULL DEFAULT 1;
ALTER TABLE pushes ADD COLUMN first_due_at TEXT;
ALTER TABLE pushes ADD COLUMN digest INTEGER NOT NULL DEFAULT 0 CHECK (digest IN (0, 1));
-- The caps count pending pushes to people (per person, and in all) from this index alone; its
-- condition is the one the counts state (flynn.schedule.backlog); a firing looks for its job's
-- pending push.
CREATE INDEX pushes_counted ON pushes(namespace)
    WHERE delivered_at IS NULL AND digest = 0 AND channel != 'flynn';
CREATE INDEX pushes_pending_job ON pushes(job_id) WHERE delivered_at IS NULL;

CREATE TABLE push_drops (
    digest_id    INTEGER NOT NULL REFERENCES pushes(id) ON DELETE CASCADE,
    reason       TEXT NOT NULL CHECK (reason IN ('expired', 'held')),
    key          TEXT NOT NULL,
    kind         TEXT NOT NULL,
    text         TEXT NOT NULL,
    timezone     TEXT NOT NULL,
    occurrences  INTEGER NOT NULL,
    first_due_at TEXT,
    last_due_at  TEXT,
    PRIMARY KEY (digest_id, reason, key)
);
"""

# Gateway jobs and pushes of a person's namespace move to the person's key, ``<name>@<client_id>``,
# with their sessions (``flynn.memory.migrations``, version 15).
_SCHEMA_V15 = f"""
UPDATE jobs SET recipient = substr(namespace, 7) || '@' || recipient
WHERE channel = 'gateway' AND recipient IS NOT NULL AND recipient <> ''
  AND instr(recipient, '@') = 0 AND {PERSON_ROWS.format(ns="namespace")};
UPDATE jobs SET chat_id = substr(namespace, 7) || '@' || chat_id
WHERE channel = 'gateway' AND chat_id IS NOT NULL AND chat_id <> ''
  AND instr(chat_id, '@') = 0 AND {PERSON_ROWS.format(ns="namespace")};
UPDATE pushes SET recipient = substr(namespace, 7) || '@' || recipient
WHERE channel = 'gateway' AND recipient IS NOT NULL AND recipient <> ''
  AND instr(recipient, '@') = 0 AND {PERSON_ROWS.format(ns="namespace")};
UPDATE pushes SET chat_id = substr(namespace, 7) || '@' || chat_id
WHERE channel = 'gateway' AND chat_id <> ''
  AND instr(chat_id, '@') = 0 AND {PERSON_ROWS.format(ns="namespace")};
"""

# A job Flynn does itself (a distillation) is a job kind the scheduler runs through the handler
# registered for it, not a push to a pretend channel: a firing queues a run (leased while its
# handler works, retried with backoff after a failure, finished once), and nothing of it is in
# the outbox. Pending runs queued the old way (pushes to channel 'flynn') move over as they are;
# the distillation jobs lose their pretend target; the caps' index loses its exception for them.
_SCHEMA_V19 = """
CREATE TABLE job_runs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id       INTEGER,
    namespace    TEXT NOT NULL,
    kind         TEXT NOT NULL,
    text         TEXT NOT NULL,
    due_at       TEXT NOT NULL,
    late         INTEGER NOT NULL DEFAULT 0 CHECK (late IN (0, 1)),
    created_at   TEXT NOT NULL,
    leased_until TEXT,
    failures     INTEGER NOT NULL DEFAULT 0,
    finished_at  TEXT,
    outcome      TEXT CHECK (outcome IN ('done', 'given_up'))
);
CREATE INDEX job_runs_pending ON job_runs(id) WHERE finished_at IS NULL;
-- A job's due time queues at most one run, whatever races the claim.
CREATE UNIQUE INDEX job_runs_job_due ON job_runs(job_id, due_at) WHERE job_id IS NOT NULL;
INSERT INTO job_runs (job_id, namespace, kind, text, due_at, late, created_at, failures)
SELECT job_id, namespace, 'distill', text, coalesce(due_at, created_at), late, created_at, failures
FROM pushes WHERE channel = 'flynn' AND delivered_at IS NULL ORDER BY id;
DELETE FROM pushes WHERE channel = 'flynn';
UPDATE jobs SET channel = NULL, chat_id = NULL, thread = NULL, recipient = NULL
WHERE kind = 'distill';
DROP INDEX pushes_counted;
CREATE INDEX pushes_counted ON pushes(namespace) WHERE delivered_at IS NULL AND digest = 0;
"""

SCHEDULE = SchemaPart(
    "schedule",
    {8: _SCHEMA_V8, 11: _SCHEMA_V11, 13: _SCHEMA_V13, 15: _SCHEMA_V15, 19: _SCHEMA_V19},
    forgetting=SqliteSchedule,
)
"""The schedule's statements by version, and its forgetting of a person's jobs and pushes."""

SCHEMA = Schema.of(SCHEDULE)
"""The database's whole schema, what every opener of flynn's database passes
(``Database.open``, ``SqliteMemory.open``)."""
