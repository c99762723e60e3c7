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

MIGRATIONS: tuple[str, ...] = (_SCHEMA_V1,)
LATEST_VERSION = len(MIGRATIONS)
