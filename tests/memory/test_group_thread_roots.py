"""Two people of one forum topic or thread, neither in ``users:``: each has a session of their
own (``sessions/<channel>:<chat>:<thread>/u<sender>``), and each one's searches count, choose and
rank among their own turns, whatever the other says, on both backends. SQLite's migration 22
and PostgreSQL's 16 move a store written before onto these roots."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from memory.conftest import HistoryBackend

from flynn.memory.namespaces import namespace_root, namespace_token
from flynn.memory.store import NewFact, NewMessage
from flynn.memory.stores import SqliteMemory
from flynn.postgres import database as postgres_database
from flynn.postgres import facts as postgres_facts
from flynn.postgres import history as postgres_history
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.facts import PostgresFacts
from flynn.postgres.history import PostgresHistory
from flynn.postgres.migrations import MIGRATIONS
from flynn.schedule.migrations import SCHEMA

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
TOPIC = "telegram:-1001:77"
ANA = f"sessions/{TOPIC}/u1001"
BEN = f"sessions/{TOPIC}/u1002"
QUESTION = "when do I take the ferry?"
CROWD = 3100
"""More of Ana's turns than a recall search ranks (``WIDE_BUDGET``, 3,000), all about the ferry."""

NAMESPACES = (
    ANA,
    f"{ANA}/profile",
    f"{BEN}/context/{TOPIC}/u1002",
    f"sessions/{TOPIC}",
    f"sessions/{TOPIC}/context/{TOPIC}",
    "sessions/telegram:-1001:u1003",
    "sessions/telegram:42",
    "sessions/x/u",
    "sessions/x/ufo",
    "sessions/x/u12x/profile",
    "sessions/x/u\u0661\u0662",
    "sessions//u7",
    "users/ana/profile",
    "user/working",
    "team",
)
"""Namespaces of every shape: a topic's per-person sessions and what is kept under them, the
topic's shared session, a group's per-person session without a topic, a DM, people, the owner,
the team, and segments that only look like a sender (Arabic-Indic digits too)."""


WRITES = ("insert", "delete", "update")
OWN_FACTS = {"ferry fact 0", "ferry fact 1"}
"""The facts kept under Ana's namespace and its ``profile``."""


def _old_root(namespace: str) -> str:
    """``namespace_root`` before SQLite's migration 22 (PostgreSQL's 16)."""
    parts = namespace.split("/")
    depth = 2 if parts[0] in ("users", "sessions") and len(parts) > 1 else 1
    return "/".join(parts[:depth])


def _crowd_the_topic(history_backend: HistoryBackend) -> int:
    """Ben says when he takes the ferry; then Ana talks about hers, thousands of times."""
    history = history_backend.history
    ben = history.append(TOPIC, BEN, "user", "I take the ferry at 7:40", tokens=8, now=T0).id
    later = T0 + timedelta(minutes=1)
    said = [NewMessage("user", f"I take the ferry again, trip {n}", 8, later) for n in range(CROWD)]
    history.append_many(TOPIC, ANA, said)
    return ben


def test_the_roots_of_a_topics_people_are_their_own() -> None:
    assert namespace_root(f"{ANA}/profile") == ANA
    assert namespace_root(f"{BEN}/context/{TOPIC}/u1002") == BEN
    assert namespace_root(f"sessions/{TOPIC}/context/{TOPIC}") == f"sessions/{TOPIC}"
    assert namespace_root("sessions/x/ufo") == "sessions/x"
    assert namespace_root("sessions/x/u12x/profile") == "sessions/x"
    assert namespace_root("sessions/x/u\u0661\u0662") == "sessions/x"  # Arabic-Indic digits
    assert namespace_root("sessions/discord:5:6/u7/working") == "sessions/discord:5:6/u7"
    assert namespace_token(ANA) != namespace_token(BEN)
    assert namespace_token(f"{ANA}/") == namespace_token(f"{ANA}/profile")


def test_each_person_of_a_topic_finds_their_own_turn_among_the_others_many(
    history_backend: HistoryBackend,
) -> None:
    ben = _crowd_the_topic(history_backend)
    history = history_backend.history

    found = history.search(BEN, QUESTION, limit=5)
    assert [hit.message.id for hit in found] == [ben]
    recalled = history.match(BEN, QUESTION, limit=5, wide=True)
    assert [match.message.id for match in recalled] == [ben]
    # Nothing of Ana's reaches Ben, nor of Ben's Ana.
    assert {hit.message.namespace for hit in history.search(ANA, QUESTION, limit=50)} == {ANA}


def test_a_persons_words_are_weighed_among_their_own_turns(
    history_backend: HistoryBackend,
) -> None:
    history = history_backend.history
    filler = [NewMessage("user", f"weather note {n}", 3, T0) for n in range(CROWD * 3)]
    history.append_many("telegram:9", "users/zed", filler)  # the topic is a minority
    ben = _crowd_the_topic(history_backend)

    postings = history.postings(QUESTION, wide=True, namespace_prefix=BEN)
    assert postings is not None
    assert postings.documents == 1
    assert postings.terms["ferry"] == (ben,)


def _sqlite_tokens(memory: SqliteMemory, table: str) -> dict[str, str]:
    rows = memory.db.fetchall(f"SELECT namespace, ns FROM {table}")
    return {str(row["namespace"]): str(row["ns"]) for row in rows}


def _indexed_tokens(memory: SqliteMemory, table: str) -> dict[str, str]:
    """Each row's namespace and the ``ns`` token its full-text index holds for it, read from
    the index itself (``integrity-check`` does not compare an external content table's entries
    with their rows before SQLite 3.44)."""
    vocabulary = f"temp.{table}_entries"
    memory.db.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocabulary} USING fts5vocab(main, {table}, instance)"
    )
    rows = memory.db.fetchall(
        f"SELECT r.namespace, v.term FROM {vocabulary} AS v "
        f"JOIN {table[:-4]} AS r ON r.id = v.doc WHERE v.col = 'ns'"
    )
    indexed: dict[str, str] = {}
    for row in rows:
        assert str(row["namespace"]) not in indexed, "a row indexed under two tokens"
        indexed[str(row["namespace"])] = str(row["term"])
    return indexed


def _fts_triggers(memory: SqliteMemory) -> dict[str, str]:
    rows = memory.db.fetchall(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%fts%'"
    )
    return {str(row["name"]): str(row["sql"]) for row in rows}


def _token(root: str) -> str:
    return "n" + root.encode().hex() + "x"


def test_sqlites_ns_column_agrees_with_namespace_root(memory: SqliteMemory) -> None:
    for n, namespace in enumerate(NAMESPACES):
        memory.history.append("s", namespace, "user", f"line {n}", tokens=2, now=T0)
        memory.facts.add(NewFact(namespace, "profile", f"fact {n}", "route"), now=T0)
    expected = {namespace: _token(namespace_root(namespace)) for namespace in NAMESPACES}
    assert _sqlite_tokens(memory, "messages") == expected
    assert _sqlite_tokens(memory, "facts") == expected
    assert _indexed_tokens(memory, "messages_fts") == expected


def test_sqlite_migration_22_moves_a_topics_people_onto_their_own_roots(tmp_path: Path) -> None:
    path = tmp_path / "flynn.db"
    with SqliteMemory.open(path, SCHEMA.up_to(21)) as old:
        for n, namespace in enumerate(NAMESPACES):
            old.history.append("s", namespace, "user", f"ferry line {n}", tokens=3, now=T0)
            old.facts.add(NewFact(namespace, "profile", f"ferry fact {n}", "route"), now=T0)
        assert _sqlite_tokens(old, "messages")[ANA] == _token(f"sessions/{TOPIC}")
        triggers = _fts_triggers(old)
        assert {f"{t}_fts_{on}" for t in ("messages", "facts") for on in WRITES} <= set(triggers)

    with SqliteMemory.open(path, SCHEMA) as memory:
        assert _fts_triggers(memory) == triggers  # made again as they were
        expected = {namespace: _token(namespace_root(namespace)) for namespace in NAMESPACES}
        assert _sqlite_tokens(memory, "messages") == expected
        assert _sqlite_tokens(memory, "facts") == expected
        for table in ("messages_fts", "facts_fts"):
            memory.db.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
            assert _indexed_tokens(memory, table) == _sqlite_tokens(memory, table[:-4])
        # Written after the migration, by the triggers made again.
        memory.history.append("s", BEN, "user", "the ferry was late", tokens=4, now=T0)
        assert len(memory.history.search(BEN, "ferry", limit=5)) == 2
        assert {f.value for f in memory.facts.search(ANA, "ferry", limit=5)} == OWN_FACTS


def _written_by_version_15(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store as version 15 wrote it: rows rooted by the old rule, postings and counts too."""
    with monkeypatch.context() as old:
        old.setattr(postgres_database, "LATEST_VERSION", 15)
        old.setattr(postgres_history, "namespace_root", _old_root)
        old.setattr(postgres_facts, "namespace_root", _old_root)
        with PostgresDatabase.open(postgres_url) as db:
            assert db.version == 15
            history = PostgresHistory(db)
            facts = PostgresFacts(db)
            for n, namespace in enumerate(NAMESPACES):
                history.append("s", namespace, "user", f"ferry line {n}", tokens=3, now=T0)
                facts.add(NewFact(namespace, "profile", f"ferry fact {n}", "route"), now=T0)
            roots = db.fetchall("SELECT DISTINCT root FROM message_terms")
            assert {row["root"] for row in roots} == {_old_root(n) for n in NAMESPACES}


def _message_roots(postgres_url: str) -> dict[str, str]:
    with psycopg.connect(postgres_url, autocommit=True) as other:
        rows = other.execute("SELECT namespace, root FROM messages").fetchall()
    return {str(namespace): str(root) for namespace, root in rows}


def test_postgresql_migration_16_moves_a_topics_people_onto_their_own_roots(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _written_by_version_15(postgres_url, monkeypatch)

    with PostgresDatabase.open(postgres_url) as db:
        assert db.version == postgres_database.LATEST_VERSION >= 16  # 16 and any after it
        for table, key in (("messages", "message_terms"), ("facts", "fact_terms")):
            rows = db.fetchall(f"SELECT namespace, root FROM {table}")
            assert {row["namespace"]: row["root"] for row in rows} == {
                namespace: namespace_root(namespace) for namespace in NAMESPACES
            }
            ref = "message_id" if table == "messages" else "fact_id"
            astray = db.fetchone(
                f"SELECT count(*) AS n FROM {key} AS t JOIN {table} AS r ON r.id = t.{ref} "
                "WHERE t.root <> r.root"
            )
            assert astray == {"n": 0}
        counts = db.fetchall("SELECT root, messages FROM message_roots")
        roots = [namespace_root(namespace) for namespace in NAMESPACES]
        assert {row["root"]: row["messages"] for row in counts} == {
            root: roots.count(root) for root in roots
        }
        history = PostgresHistory(db)
        history.append("s", BEN, "user", "the ferry was late", tokens=4, now=T0)
        assert len(history.search(BEN, "ferry", limit=5)) == 2
        assert {f.value for f in PostgresFacts(db).search(ANA, "ferry", limit=5)} == OWN_FACTS


def test_postgresql_migration_16_cut_off_halfway_is_undone_and_runs_again(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # t-review7: a worker killed while it moves the rows (the migration of a large store takes
    # a minute) leaves version 15's roots whole, and the next worker to start moves them all.
    _written_by_version_15(postgres_url, monkeypatch)
    old_roots = _message_roots(postgres_url)
    assert old_roots == {namespace: _old_root(namespace) for namespace in NAMESPACES}
    # Migration 16's statements, then a wait inside its transaction: the worker is cut off there.
    halted = (*MIGRATIONS[:15], MIGRATIONS[15] + "SELECT pg_sleep(120);")
    failures: list[BaseException] = []

    def start() -> None:
        try:
            PostgresDatabase.open(postgres_url).close()
        except BaseException as exc:
            failures.append(exc)

    with monkeypatch.context() as patched:
        patched.setattr(postgres_database, "MIGRATIONS", halted)
        worker = threading.Thread(target=start)
        worker.start()
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            waiting = (
                "SELECT pid FROM pg_stat_activity "
                "WHERE query LIKE '%pg_sleep(120)%' AND pid <> pg_backend_pid()"
            )
            deadline = time.monotonic() + 30
            while (row := admin.execute(waiting).fetchone()) is None:
                assert time.monotonic() < deadline, "the migration never reached its wait"
                time.sleep(0.05)  # nothing on the server to wait on: it is polled
            assert _message_roots(postgres_url) == old_roots  # moved, not yet committed
            admin.execute("SELECT pg_terminate_backend(%s)", row)
        worker.join(timeout=60)
        assert not worker.is_alive() and len(failures) == 1
    with psycopg.connect(postgres_url, autocommit=True) as other:
        version = other.execute("SELECT max(version) FROM flynn_migrations").fetchone()
    assert version == (15,)
    assert _message_roots(postgres_url) == old_roots

    with PostgresDatabase.open(postgres_url) as db:
        assert db.version == postgres_database.LATEST_VERSION >= 16  # 16 and any after it
        assert _message_roots(postgres_url) == {
            namespace: namespace_root(namespace) for namespace in NAMESPACES
        }
        astray = db.fetchone(
            "SELECT count(*) AS n FROM message_terms AS t JOIN messages AS r "
            "ON r.id = t.message_id WHERE t.root <> r.root"
        )
        assert astray == {"n": 0}
        history = PostgresHistory(db)
        found = [hit.message.namespace for hit in history.search(BEN, "ferry", limit=5)]
        assert found == [f"{BEN}/context/{TOPIC}/u1002"]
