"""Moving house with vectors: what ``flynn storage copy`` redacts on the way (credentials an older
install kept) takes its vector with it, for every kind of row a vector embeds (messages, facts,
team chunks): the vector of a secret is derived from it, and never reaches PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fakes.embedder import HashingEmbedder

from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.team import TEAM_NAMESPACE, NewChunk
from flynn.memory.vectors import SqliteVectors
from flynn.memory.windows import turn_of
from flynn.postgres.database import PostgresDatabase
from flynn.schedule.migrations import SCHEMA
from flynn.settings import Settings
from flynn.storage_copy import copy_to_postgres

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SECRET = "Zq8#tLw0vRx-41"
HELD = f"the wifi password is {SECRET}"


def test_a_row_the_copy_redacts_arrives_without_its_vector(
    tmp_path: Path, postgres_url: str
) -> None:
    data_dir = _data_dir(tmp_path)
    with SqliteMemory.open(data_dir / "flynn.db", SCHEMA) as memory:
        plain = memory.history.append("gateway:ana", "user", "user", "hello", tokens=1, now=T0)
        held = memory.history.append("gateway:ana", "user", "user", "later", tokens=1, now=T0)
        fact = memory.facts.add(
            NewFact(namespace="user/profile", kind="profile", field="home", value="later"), now=T0
        )
        calm = memory.facts.add(
            NewFact(namespace="user/profile", kind="profile", field="drink", value="tea"), now=T0
        )
        memory.team.put(
            path="wifi.md",
            title="Wifi",
            digest="d1",
            chars=10,
            chunks=[NewChunk("Wifi", "later"), NewChunk("Tea", "green tea on Fridays")],
            now=T0,
        )
        chunk, other = (int(row[0]) for row in memory.db.fetchall("SELECT id FROM team_chunks"))
        # As an older install kept them, before its credential rules knew this shape: the
        # secret in the text, and each row's vector of it.
        memory.db.execute("UPDATE messages SET content = ? WHERE id = ?", (HELD, held.id))
        memory.db.execute("UPDATE facts SET value = ? WHERE id = ?", (HELD, fact.id))
        memory.db.execute("UPDATE team_chunks SET content = ? WHERE id = ?", (HELD, chunk))
        vectors = SqliteVectors(memory.db, HashingEmbedder())
        for kind, rows in (
            ("message", [(plain.id, "user", "hello"), (held.id, "user", HELD)]),
            ("fact", [(fact.id, "user/profile", f"home {HELD}"), (calm.id, "user/profile", "tea")]),
            ("chunk", [(chunk, TEAM_NAMESPACE, HELD), (other, TEAM_NAMESPACE, "green tea")]),
        ):
            vectors.store(kind, rows, vectors.embed([text for _, _, text in rows]))

    redacted, kept, texts = _copied(data_dir, postgres_url, "SELECT content FROM team_chunks")

    assert redacted >= 3
    assert not [text for text in texts if SECRET in text]
    # The rows the copy did not redact keep theirs (and the message after the redacted one
    # embeds it as context: it goes too, as before).
    assert ("message", plain.id) in kept and ("fact", calm.id) in kept
    assert ("chunk", other) in kept
    # On main only the message's went: the fact's and the chunk's vectors of the secret stayed.
    assert {("message", held.id), ("fact", fact.id), ("chunk", chunk)} & kept == set()


def test_the_chunks_of_a_document_whose_title_the_copy_redacts_arrive_without_vectors(
    tmp_path: Path, postgres_url: str
) -> None:
    # A chunk's vector embeds its document's title ("title: heading\ncontent", as
    # flynn.learning.documents adds it): when the copy redacts the title, the chunks' vectors
    # are derived from the secret as much as the title was, though their own rows are clean.
    data_dir = _data_dir(tmp_path)
    with SqliteMemory.open(data_dir / "flynn.db", SCHEMA) as memory:
        for path, title in (("held.md", "Wifi"), ("calm.md", "Tea")):
            memory.team.put(
                path=path,
                title=title,
                digest="d1",
                chars=10,
                chunks=[NewChunk("Notes", "green tea on Fridays")],
                now=T0,
            )
        rows = memory.db.fetchall(
            "SELECT c.id, d.title FROM team_chunks c JOIN team_documents d ON d.id = c.document_id"
        )
        chunk = {str(row[1]): int(row[0]) for row in rows}
        # As an older install kept it: the secret in the title, and the vector of it.
        memory.db.execute("UPDATE team_documents SET title = ? WHERE path = 'held.md'", (HELD,))
        vectors = SqliteVectors(memory.db, HashingEmbedder())
        embedded = [
            (chunk["Wifi"], TEAM_NAMESPACE, f"{HELD}: Notes\ngreen tea on Fridays"),
            (chunk["Tea"], TEAM_NAMESPACE, "Tea: Notes\ngreen tea on Fridays"),
        ]
        vectors.store("chunk", embedded, vectors.embed([text for _, _, text in embedded]))

    redacted, kept, titles = _copied(data_dir, postgres_url, "SELECT title FROM team_documents")

    assert redacted >= 1
    assert not [title for title in titles if SECRET in title]
    assert ("chunk", chunk["Tea"]) in kept
    # On main the chunk's vector of the redacted title was copied.
    assert ("chunk", chunk["Wifi"]) not in kept


def test_a_long_message_the_copy_redacts_arrives_without_its_windows(
    tmp_path: Path, postgres_url: str
) -> None:
    data_dir = _data_dir(tmp_path)
    before = "We went through the whole move plan, room by room and box by box. " * 20
    with SqliteMemory.open(data_dir / "flynn.db", SCHEMA) as memory:
        held = memory.history.append("gateway:ana", "user", "user", "later", tokens=1, now=T0)
        plain = memory.history.append("gateway:bo", "user", "user", "later", tokens=1, now=T0)
        # Past what the model reads: only the later windows' vectors hold the secret.
        memory.db.execute("UPDATE messages SET content = ? WHERE id = ?", (before + HELD, held.id))
        memory.db.execute("UPDATE messages SET content = ? WHERE id = ?", (before, plain.id))
        vectors = SqliteVectors(memory.db, HashingEmbedder())
        vectors.add("message", [(held.id, "user", before + HELD), (plain.id, "user", before)])
        stored = {
            (str(row[0]), turn_of(int(row[1])))
            for row in memory.db.fetchall("SELECT kind, ref_id FROM embeddings")
            if row[0] == "passage"
        }
        assert stored == {("passage", held.id), ("passage", plain.id)}

    redacted, kept, texts = _copied(data_dir, postgres_url, "SELECT content FROM messages")

    assert redacted >= 1 and not [text for text in texts if SECRET in text]
    windows = {(kind, turn_of(ref)) for kind, ref in kept if kind == "passage"}
    assert windows == {("passage", plain.id)}  # the redacted message's windows stayed behind
    assert ("message", held.id) not in kept and ("message", plain.id) in kept


def _copied(
    data_dir: Path, postgres_url: str, texts: str
) -> tuple[int, set[tuple[str, int]], list[str]]:
    """Copies ``data_dir``'s store to PostgreSQL: how many rows it redacted, the ``(kind,
    ref_id)`` of the vectors that arrived, and the one column ``texts`` selects, as copied."""
    report = copy_to_postgres(Settings.model_validate({"data_dir": str(data_dir)}), postgres_url)
    with PostgresDatabase.open(postgres_url) as pg:
        rows = pg.fetchall("SELECT kind, ref_id FROM embeddings")
        kept = {(str(row["kind"]), int(row["ref_id"])) for row in rows}
        copied = [str(next(iter(row.values()))) for row in pg.fetchall(texts)]
    return report.redacted, kept, copied


def _data_dir(tmp_path: Path) -> Path:
    """An install's data dir, whose ``flynn.db`` the test fills as an older install did."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    return data_dir
