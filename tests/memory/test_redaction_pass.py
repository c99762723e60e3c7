"""The re-redaction after an upgrade (``flynn.memory.redaction``), on both backends: rows an older
credential gate let through (written here with the gate switched off, as an older version wrote
them) are redacted in place, their search index with them, the vectors derived from them
deleted, and the stamp written so the next start does nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flynn.credentials import REDACTED_SECRET, REDACTION_VERSION
from flynn.memory.facts import SqlFacts
from flynn.memory.history import SqliteHistory
from flynn.memory.redaction import RedactionPass, SqliteRedaction, SqlRedaction, changes
from flynn.memory.sql import TransactionalSql
from flynn.memory.store import History, NewFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.team import NewChunk, SqlTeam
from flynn.memory.windows import passage_id
from flynn.people.files import DirectoryPersonFiles, person_directory
from flynn.people.store import PersonFileRedaction
from flynn.postgres.coordination import PostgresCoordination, WorkerTimes
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.memory import PostgresMemory
from flynn.postgres.redaction import PostgresRedaction
from flynn.redaction_behind import redact_behind
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.postgres import PostgresPushes, PostgresSchedule
from flynn.schedule.sqlite import SqlitePushes, SqliteSchedule
from flynn.schedule.store import SqlPushes, SqlSchedule

NOW = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
SECRET = "GuestNet2024"
SAID = f"my wifi password is\n{SECRET}"
"""A value on the line below its words: what the gate before version 2 kept."""


@dataclass(frozen=True, slots=True)
class Place:
    name: str
    sql: TransactionalSql
    history: History
    facts: SqlFacts
    team: SqlTeam
    schedule: SqlSchedule
    pushes: SqlPushes
    redaction: SqlRedaction
    replace_document: object

    def count(self, sql: str, params: tuple[object, ...] = ()) -> int:
        if self.name == "postgresql":
            sql = sql.replace("?", "%s")
        row = self.sql.fetchone(f"SELECT count(*) AS n FROM ({sql}) AS counted", params)
        assert row is not None
        return int(row["n"])

    def finds(self, word: str, index: str = "messages") -> int:
        """Rows (messages, facts, team_chunks) whose search index holds ``word``."""
        if isinstance(self.history, SqliteHistory):
            fts = f"{index}_fts"
            return self.count(f"SELECT 1 FROM {fts} WHERE {fts} MATCH '\"{word}\"'")
        terms = {
            "messages": "message_terms",
            "facts": "fact_terms",
            "team_chunks": "team_chunk_terms",
        }
        return self.count(f"SELECT 1 FROM {terms[index]} WHERE term = ?", (word.lower(),))


@pytest.fixture(params=["sqlite", "postgresql"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Place]:
    if request.param == "sqlite":
        with SqliteMemory.open(tmp_path / "data" / "flynn.db", SCHEMA) as memory:
            db = memory.db
            yield Place(
                "sqlite",
                db,
                memory.history,
                memory.facts,
                memory.team,
                SqliteSchedule(db),
                SqlitePushes(db),
                SqliteRedaction(db),
                memory.documents.replace,
            )
        return
    url: str = request.getfixturevalue("postgres_url")
    with PostgresMemory.open(url) as pg_memory:
        pg = pg_memory.db
        yield Place(
            "postgresql",
            pg,
            pg_memory.history,
            pg_memory.facts,
            pg_memory.team,
            PostgresSchedule(pg),
            PostgresPushes(pg),
            PostgresRedaction(pg),
            pg_memory.documents.replace,
        )


@contextlib.contextmanager
def older_gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The stores write as a version whose gate missed everything here did."""
    with monkeypatch.context() as patched:
        for module in ("history", "facts", "team", "documents"):
            patched.setattr(f"flynn.memory.{module}.redact", lambda text: (text, 0))
        patched.setattr("flynn.memory.history.redact_json", lambda text: (text, 0))
        patched.setattr("flynn.schedule.store.redact", lambda text: (text, 0))
        yield


def add_vector(place: Place, kind: str, ref_id: int) -> None:
    statement = (
        "INSERT INTO embeddings (kind, ref_id, namespace, model, vector) VALUES (?, ?, ?, ?, ?)"
    )
    if place.name == "postgresql":
        statement = statement.replace("?", "%s")
    place.sql.execute(statement, (kind, ref_id, "users/ana", "m", b"\x00\x00\x80?"))


def vectors(place: Place, kind: str, ref_id: int) -> int:
    return place.count("SELECT 1 FROM embeddings WHERE kind = ? AND ref_id = ?", (kind, ref_id))


def holding(place: Place, table: str, column: str) -> int:
    """Rows of ``table`` whose ``column`` still holds the secret."""
    return place.count(f"SELECT 1 FROM {table} WHERE {column} LIKE ?", (f"%{SECRET}%",))


def test_a_pass_redacts_every_kind_of_row_an_older_gate_kept(
    place: Place, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with older_gate(monkeypatch):
        before = place.history.append("s1", "users/ana", "user", "hello there", tokens=2, now=NOW)
        leaked = place.history.append(
            "s1", "users/ana", "user", SAID, tokens=5, now=NOW, tool_steps=f'["{SAID}"]'
        )
        after = place.history.append("s1", "users/ana", "assistant", "noted", tokens=1, now=NOW)
        place.history.save_summary("s1", f"Ana said {SAID}", through_id=after.id, now=NOW)
        fact = place.facts.add(NewFact("users/ana", "note", SAID), now=NOW)
        place.replace_document("users/ana/working", f"wifi: {SAID}", now=NOW)  # type: ignore[operator]
        # A person's file kept as a document (on PostgreSQL, where the workers share them).
        place.replace_document(  # type: ignore[operator]
            "users/ana/files/TASKS.json", json.dumps({"tasks": [{"text": SAID}]}), now=NOW
        )
        document, _ = place.team.put(
            path="wifi.md",
            title="Guest wifi",
            digest="d",
            chars=10,
            chunks=[NewChunk("Wifi", SAID)],
            now=NOW,
        )
        place.schedule.add(
            namespace="users/ana",
            kind="reminder",
            text=f"tell Bob {SAID}",
            at=NOW,
            repeat=None,
            timezone="UTC",
            target=Target("telegram", "1"),
            now=NOW,
        )
        place.pushes.add(
            namespace="users/ana", kind="notice", text=SAID, target=Target("telegram", "1"), now=NOW
        )
    folder = person_directory(tmp_path / "files", "users/ana")
    folder.mkdir(parents=True)
    (folder / "USER.md").write_text(f"# Ana\n{SAID}\n")
    (folder / "TASKS.json").write_text(
        '{"tasks": [{"text": "my wifi password is\\nGuestNet2024"}]}'
    )
    chunk = place.count("SELECT id FROM team_chunks")
    chunk_id = int(place.sql.fetchall("SELECT id FROM team_chunks")[0]["id"])
    for kind, ref in (("message", before.id), ("message", leaked.id), ("message", after.id)):
        add_vector(place, kind, ref)
    add_vector(place, "fact", fact.id)
    add_vector(place, "chunk", chunk_id)
    assert chunk == 1 and holding(place, "messages", "content") == 1
    assert [place.finds(SECRET, index) for index in ("messages", "facts", "team_chunks")] == [1] * 3

    redaction = RedactionPass(
        place.redaction, PersonFileRedaction(DirectoryPersonFiles(tmp_path / "files"))
    )
    assert redaction.is_due
    counts = asyncio.run(redaction.run_behind())

    assert counts is not None
    for table, column in (
        ("messages", "content"),
        ("message_tools", "steps"),
        ("sessions", "summary"),
        ("facts", "value"),
        ("documents", "content"),
        ("team_chunks", "content"),
        ("jobs", "text"),
        ("pushes", "text"),
    ):
        assert holding(place, table, column) == 0, table
    assert [place.finds(SECRET, index) for index in ("messages", "facts", "team_chunks")] == [0] * 3
    assert place.finds("wifi", "team_chunks") == 1  # the redacted text is indexed again
    assert (
        place.count(
            "SELECT 1 FROM messages WHERE content = ?", (f"my wifi password is\n{REDACTED_SECRET}",)
        )
        == 1
    )
    assert SECRET not in (folder / "USER.md").read_text()
    tasks = place.sql.fetchone(
        "SELECT content FROM documents WHERE namespace = 'users/ana/files/TASKS.json'"
    )
    assert tasks is not None and SECRET not in tasks["content"]
    assert json.loads(tasks["content"])["tasks"][0]["text"].endswith(REDACTED_SECRET)
    assert SECRET not in (folder / "TASKS.json").read_text()
    # The vectors of what changed (and of the message after it, which embeds it) are gone.
    assert vectors(place, "message", leaked.id) == vectors(place, "message", after.id) == 0
    assert vectors(place, "fact", fact.id) == vectors(place, "chunk", chunk_id) == 0
    assert vectors(place, "message", before.id) == 1
    assert counts.changed["messages"] == 1 and counts.changed["files"] == 2
    # Nothing else moved: ids, times and order are as they were.
    ids = [int(row["id"]) for row in place.sql.fetchall("SELECT id FROM messages ORDER BY id")]
    assert ids == [before.id, leaked.id, after.id]
    assert place.redaction.stamp()[0] == REDACTION_VERSION
    assert document.title == "Guest wifi"


def test_a_json_file_keeps_its_layout_through_a_pass(
    place: Place, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # TASKS.json as the tasks tool writes it; the pass used to write it back on one line.
    held = json.dumps([{"text": SAID, "done": False}], indent=2) + "\n"
    clean = json.dumps([{"text": "buy milk", "done": False}], indent=2) + "\n"
    with older_gate(monkeypatch):
        for name, text in (("users/ana", held), ("users/bob", clean)):
            place.replace_document(f"{name}/files/TASKS.json", text, now=NOW)  # type: ignore[operator]
            place.history.append("s1", name, "user", "hello", tokens=1, now=NOW)  # a known root
    for name, text in (("users/ana", held), ("users/bob", clean)):
        folder = person_directory(tmp_path / "files", name)
        folder.mkdir(parents=True)
        (folder / "TASKS.json").write_text(text)
    files = PersonFileRedaction(DirectoryPersonFiles(tmp_path / "files"))
    asyncio.run(RedactionPass(place.redaction, files).run_behind())

    redacted = held.replace("GuestNet2024", REDACTED_SECRET)
    for name, text in (("users/ana", redacted), ("users/bob", clean)):
        row = place.sql.fetchone(
            "SELECT content FROM documents WHERE namespace = ?".replace(
                "?", "%s" if place.name == "postgresql" else "?"
            ),
            (f"{name}/files/TASKS.json",),
        )
        assert row is not None and row["content"] == text
        assert (person_directory(tmp_path / "files", name) / "TASKS.json").read_text() == text


def test_a_store_stamped_2_gets_the_rules_of_version_3(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the version 2 gate kept: a bare password, a list's later values, YAML under a name.
    kept = (
        "wifi password GuestNet2024",
        "passwords: hunter22x, Tr0ub4dor&3, 9f8e7d6c",
        "db:\n  password:\n    S3cr3tValue!",
    )
    with older_gate(monkeypatch):
        for text in kept:
            place.history.append("s1", "users/ana", "user", text, tokens=5, now=NOW)
    place.redaction.finish(2)

    redaction = RedactionPass(place.redaction)
    assert redaction.is_due
    counts = asyncio.run(redaction.run_behind())

    assert counts is not None and counts.changed["messages"] == 3
    stored = " ".join(row["content"] for row in place.sql.fetchall("SELECT content FROM messages"))
    for secret in ("GuestNet2024", "Tr0ub4dor", "9f8e7d6c", "S3cr3tValue"):
        assert secret not in stored
    assert place.redaction.stamp()[0] == REDACTION_VERSION  # 3, or a later version


def test_a_long_messages_windows_go_with_its_vector(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = "We went through the whole move plan, room by room and box by box. " * 20
    with older_gate(monkeypatch):
        # The secret past the model's 256 tokens: only the later windows' vectors hold it.
        leaked = place.history.append("s1", "users/ana", "user", before + SAID, tokens=5, now=NOW)
        plain = place.history.append("s2", "users/ana", "user", before, tokens=5, now=NOW)
    for message in (leaked, plain):
        add_vector(place, "message", message.id)
        for window in (1, 2):
            add_vector(place, "passage", passage_id(message.id, window))

    assert asyncio.run(RedactionPass(place.redaction).run_behind()) is not None

    windows = "SELECT 1 FROM embeddings WHERE kind = 'passage' AND ref_id BETWEEN ? AND ?"
    assert place.count(windows, (passage_id(leaked.id, 1), passage_id(leaked.id, 63))) == 0
    assert place.count(windows, (passage_id(plain.id, 1), passage_id(plain.id, 63))) == 2


def test_a_stamped_store_is_not_redacted_again(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert asyncio.run(RedactionPass(place.redaction).run_behind()) is not None
    with older_gate(monkeypatch):
        place.history.append("s1", "users/ana", "user", SAID, tokens=5, now=NOW)

    again = RedactionPass(place.redaction)
    assert not again.is_due
    assert asyncio.run(again.run_behind()) is None
    assert holding(place, "messages", "content") == 1  # nothing written: the pass did not run


def test_a_pass_cut_short_goes_on_from_its_last_batch(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    with older_gate(monkeypatch):
        for number in range(5):
            place.history.append("s1", "users/ana", "user", f"{number} {SAID}", tokens=5, now=NOW)
    first = RedactionPass(place.redaction, batch_rows=2)
    batches = first.batches()
    for _ in range(2):  # two batches written, then the process dies
        batch = next(batches)
        first.write(batch, changes(batch))
    batches.close()
    assert holding(place, "messages", "content") == 1

    resumed = RedactionPass(place.redaction, batch_rows=2)
    counts = asyncio.run(resumed.run_behind())

    assert counts is not None
    assert counts.seen["messages"] == 1  # only what the first pass had not reached
    assert holding(place, "messages", "content") == 0
    assert place.redaction.stamp()[0] == REDACTION_VERSION


def test_a_dry_run_counts_and_writes_nothing(place: Place, monkeypatch: pytest.MonkeyPatch) -> None:
    with older_gate(monkeypatch):
        place.history.append("s1", "users/ana", "user", SAID, tokens=5, now=NOW)

    counts = RedactionPass(place.redaction, dry_run=True).run()

    assert counts.changed["messages"] == 1
    assert holding(place, "messages", "content") == 1
    assert place.redaction.stamp()[0] < REDACTION_VERSION


def said_on_postgres(url: str, monkeypatch: pytest.MonkeyPatch, messages: int) -> None:
    """``messages`` messages an older gate stored, each holding the secret."""
    with older_gate(monkeypatch), PostgresMemory.open(url) as memory:
        for number in range(messages):
            memory.history.append("s1", "users/ana", "user", f"{number} {SAID}", tokens=5, now=NOW)


async def test_two_workers_starting_together_redact_once(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    said_on_postgres(postgres_url, monkeypatch, 30)
    times = WorkerTimes(leader_renew_seconds=0.05, leader_try_seconds=0.05)
    with contextlib.ExitStack() as stack:
        workers = []
        for name in ("w1", "w2"):
            db = stack.enter_context(PostgresDatabase.open(postgres_url))
            redaction = RedactionPass(PostgresRedaction(db), batch_rows=4)
            workers.append((redaction, PostgresCoordination(db, worker_id=name, times=times)))

        await asyncio.gather(*(redact_behind(pass_, lead) for pass_, lead in workers))

        # One of them redacted every row; the other found the stamp written and did nothing.
        assert sorted(sum(pass_.counts.changed.values()) for pass_, _ in workers) == [0, 30]
        pg = stack.enter_context(PostgresDatabase.open(postgres_url))
        assert pg.fetchone("SELECT 1 FROM messages WHERE content LIKE '%GuestNet%'") is None
        assert PostgresRedaction(pg).stamp()[0] == REDACTION_VERSION


def test_a_row_written_after_it_was_read_is_left_as_written(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    with older_gate(monkeypatch):
        place.replace_document("users/ana/working", f"wifi: {SAID}", now=NOW)  # type: ignore[operator]
    redaction = RedactionPass(place.redaction)
    batches = redaction.batches()
    batch = next(batch for batch in batches if batch.kind.table == "documents")
    found = changes(batch)
    # A compaction writes the working memory anew between the read and the write.
    place.replace_document("users/ana/working", "Ana is planning a trip", now=NOW)  # type: ignore[operator]

    redaction.write(batch, found)

    assert len(found) == 1 and redaction.counts.changed["documents"] == 0
    row = place.sql.fetchone("SELECT content FROM documents")
    assert row is not None and row["content"] == "Ana is planning a trip"


# Markdown's backticks around a value, on its line and on the line below its words.
BACKTICKED = ("my wifi password: `GuestNet2024`", "PIN:\n`4711`", "api_key = `abc123`")


def test_rows_written_with_todays_gate_are_left_as_they_are(place: Place) -> None:
    # Redacting is idempotent, so the pass (and ``flynn memory redact`` run on demand) finds
    # nothing to change in what today's stores wrote: the gate once took a value's opening
    # backtick with it, and made "`[secret removed]`" into "[secret removed] removed]`".
    written = [
        place.history.append("s1", "users/ana", "user", text, tokens=5, now=NOW)
        for text in BACKTICKED
    ]
    place.replace_document("users/ana/working", "\n".join(BACKTICKED), now=NOW)  # type: ignore[operator]
    stored = [message.content for message in place.history.messages([m.id for m in written])]
    assert all(f"`{REDACTED_SECRET}`" in text for text in stored)
    for message in written:
        add_vector(place, "message", message.id)

    counts = asyncio.run(RedactionPass(place.redaction).run_behind(only_if_due=False))

    assert counts is not None and sum(counts.changed.values()) == 0
    assert [m.content for m in place.history.messages([m.id for m in written])] == stored
    assert all(vectors(place, "message", message.id) == 1 for message in written)


def test_after_a_pass_every_word_left_is_found_and_the_counts_agree(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    with older_gate(monkeypatch):
        for number in range(7):
            said = SAID if number % 2 else f"the ferry to Brindisi leaves at {number}"
            place.history.append("s1", "users/ana", "user", said, tokens=5, now=NOW)
        place.facts.add(NewFact("users/ana", "note", f"Brindisi wifi: {SAID}"), now=NOW)
        place.facts.add(NewFact("users/ana", "plan", "a ferry to Brindisi"), now=NOW)

    counts = asyncio.run(RedactionPass(place.redaction, batch_rows=2).run_behind())

    assert counts is not None
    assert {kind: n for kind, n in counts.changed.items() if n} == {"messages": 3, "facts": 1}
    assert place.finds(SECRET) == place.finds(SECRET, "facts") == 0
    # Words of the redacted rows and of those left alone are all found, once per row.
    assert (place.finds("wifi"), place.finds("Brindisi")) == (3, 4)
    assert (place.finds("Brindisi", "facts"), place.finds("wifi", "facts")) == (2, 1)
    assert place.finds("secret") == 3  # the mark, indexed in its place
    if place.name == "postgresql":
        # A message's length in terms, its postings and its root's totals in step.
        row = place.sql.fetchone(
            "SELECT (SELECT sum(terms) FROM messages) AS terms,"
            " (SELECT sum(occurs) FROM message_terms) AS occurs,"
            " (SELECT terms FROM message_roots WHERE root = 'users/ana') AS root_terms,"
            " (SELECT messages FROM message_roots WHERE root = 'users/ana') AS root_messages"
        )
        assert row is not None
        assert row["terms"] == row["occurs"] == row["root_terms"] and row["root_messages"] == 7
        assert place.count("SELECT 1 FROM facts WHERE root IS NULL") == 0


REPOSITORY = Path(__file__).resolve().parents[2]
_KILLED_WORKER = """
import asyncio, sys
from flynn.memory.redaction import RedactionPass
from flynn.postgres.coordination import PostgresCoordination, WorkerTimes
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.redaction import PostgresRedaction
from flynn.redaction_behind import REDACTION_LEASE

times = WorkerTimes(leader_seconds=1.0, leader_renew_seconds=0.2, leader_try_seconds=0.1)


def progress(kind: str, rows: int, changed: int) -> None:
    print(kind, rows, changed, flush=True)
    if kind == "messages":
        input()  # the test says go on, or kills it while it waits here (its lease unrenewed)


async def main() -> None:
    with PostgresDatabase.open(sys.argv[1]) as db:
        redaction = RedactionPass(PostgresRedaction(db), batch_rows=4)
        lead = PostgresCoordination(db, worker_id="killed", times=times)

        async def work() -> None:
            await redaction.run_behind(progress)

        await lead.lead(REDACTION_LEASE, work)


asyncio.run(main())
"""


async def test_a_worker_killed_mid_pass_is_taken_over_from_its_cursor(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    said_on_postgres(postgres_url, monkeypatch, 14)
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _KILLED_WORKER,
        postgres_url,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPOSITORY,
    )
    assert child.stdin is not None and child.stdout is not None
    output = child.stdout

    async def batch() -> list[bytes]:
        while True:  # past its log lines
            line = await asyncio.wait_for(output.readline(), 30)
            if line.startswith(b"messages") or not line:
                return line.split()

    for _ in range(2):  # two batches written (and their cursor), then it is killed mid-pass
        assert await batch() == [b"messages", b"4", b"4"]
        child.stdin.write(b"go on\n")
    assert await batch() == [b"messages", b"4", b"4"]
    child.kill()
    await child.wait()

    times = WorkerTimes(leader_seconds=1.0, leader_renew_seconds=0.2, leader_try_seconds=0.1)
    with PostgresDatabase.open(postgres_url) as db:
        assert PostgresRedaction(db).stamp()[1:3] == (REDACTION_VERSION, "messages")
        redaction = RedactionPass(PostgresRedaction(db), batch_rows=4)
        lead = PostgresCoordination(db, worker_id="next", times=times)
        # Within 30 s instead of never: the killed worker's lease runs out (1 s), the pass goes
        # on after the third batch, which the killed worker wrote (its cursor with it).
        await asyncio.wait_for(redact_behind(redaction, lead), 30)

        assert redaction.counts.seen["messages"] == 2  # the last two of 14
        assert db.fetchone("SELECT 1 FROM messages WHERE content LIKE '%GuestNet%'") is None
        assert PostgresRedaction(db).stamp() == (REDACTION_VERSION, None, None, None)
        ids = [int(row["id"]) for row in db.fetchall("SELECT id FROM messages ORDER BY id")]
        assert len(ids) == 14 and sorted(set(ids)) == ids
