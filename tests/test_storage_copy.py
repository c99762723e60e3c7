"""Moving house: an SQLite install with every kind of row, written by the stores' own writers,
copied into a real PostgreSQL and read back through the PostgreSQL stores; a rerun that changes
nothing, a copy interrupted and run again, a database of another install refused."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fakes.embedder import HashingEmbedder

from flynn.attachments import FileLimits, FileStore, FolderShelf
from flynn.credentials import REDACTION_VERSION
from flynn.errors import CopyRefused
from flynn.gateway_token import token_digest
from flynn.memory.database import Database
from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.team import NewChunk
from flynn.memory.vectors import SqliteVectors
from flynn.messages import Attachment, ChannelAccount, InboundMessage
from flynn.people.documents import DocumentsPersonFiles
from flynn.people.files import DirectoryPersonFiles, person_directory
from flynn.postgres.copy import COPY_WRITER, KindCount, copy_install
from flynn.postgres.memory import PostgresMemory
from flynn.postgres.redaction import PostgresRedaction
from flynn.postgres.vectors import PostgresVectors
from flynn.schedule.jobs import PushLimits, Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.postgres import PostgresSchedule
from flynn.schedule.sqlite import SqlitePushes, SqliteSchedule
from flynn.settings import Settings
from flynn.storage_copy import copy_to_postgres, install_name

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PHOTO = bytes(range(256)) * 3
QUERIES = ("boiler pressure", "Lisbon trip", "tea coffee", "deploy server")


@dataclass(frozen=True, slots=True)
class Install:
    data_dir: Path
    settings: Settings


def _settings(data_dir: Path) -> Settings:
    return Settings.model_validate({"data_dir": str(data_dir)})


def build_install(data_dir: Path, *, words: str = "boiler") -> Install:
    """An install with every kind of row, each written by its store (or the schedule, the
    person files, the file store), as a daemon would have written it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with SqliteMemory.open(data_dir / "flynn.db", SCHEMA) as memory:
        memory.documents.replace("user/working", "planning the Lisbon trip", now=T0)
        tea = memory.facts.add(
            NewFact(namespace="user/profile", kind="profile", field="drink", value="tea"), now=T0
        )
        memory.facts.supersede(
            tea.id,
            NewFact(namespace="user/profile", kind="profile", field="drink", value="coffee"),
            now=T0 + timedelta(hours=1),
        )
        lines = [
            f"the {words} pressure dropped again this morning",
            "we should book the Lisbon trip for May",
            "I switched from tea to coffee last week",
            "deploy the server after the meeting",
            f"the {words} man comes on Tuesday about the pressure",
            "Lisbon in May is warm, pack light",
        ]
        stored = []
        for index, text in enumerate(lines):
            session = "gateway:ana" if index < 4 else "telegram:7"
            role = "user" if index % 2 == 0 else "assistant"
            stored.append(
                memory.history.append(
                    session,
                    "user",
                    role,
                    text,
                    tokens=len(text) // 4,
                    now=T0 + timedelta(minutes=index),
                    tool_steps='[{"tool": "remember"}]' if index == 1 else None,
                )
            )
        memory.history.save_summary(
            "gateway:ana", "Ana talked about her boiler", through_id=stored[1].id, now=T0
        )
        maya = memory.graph.upsert_entity("user", "Maya", "person", confidence=0.8, now=T0)
        acme = memory.graph.upsert_entity("user", "Acme", "org", confidence=0.7, now=T0)
        memory.graph.relate("user", maya.id, acme.id, "works_at", confidence=0.6, now=T0)
        memory.graph.mention(maya.id, stored[0].id)
        vectors = SqliteVectors(memory.db, HashingEmbedder())
        rows = [(message.id, "user", message.content) for message in stored]
        vectors.store("message", rows, vectors.embed([text for _, _, text in rows]))
        memory.costs.record(
            provider="anthropic", model="m", task="chat", input_tokens=10, output_tokens=5, now=T0
        )
        inbound = InboundMessage(
            channel="telegram",
            chat_id="7",
            sender_id="7",
            text="hello",
            message_id="41",
            received_at=T0,
        )
        memory.inbound.accept(inbound, "telegram:7", "user", keep_text=True, now=T0)
        document, _ = memory.team.put(
            path="handbook.md",
            title="Handbook",
            digest="d1",
            chars=40,
            chunks=[NewChunk("Boilers", "service the boiler yearly"), NewChunk("", "holidays")],
            now=T0,
        )
        memory.team.link_entities(document.id, [acme.id])
        memory.telegram_updates.claim(1234, 99, now=T0)
        db = memory.db
        _access(db)
        schedule = SqliteSchedule(db, PushLimits(per_person=1, total=10))
        target = Target("gateway", "ana")
        soon, later = T0 + timedelta(minutes=5), T0 + timedelta(days=30)
        # Two due at once over a cap of one: a push and a digest entry; a distillation's run.
        for kind, text, at, repeat, to in (
            ("reminder", "water the plants", soon, "*/5 * * * *", target),
            ("reminder", "call the plumber", soon, "*/5 * * * *", target),
            ("reminder", "stand-up", later, "0 9 * * 1-5", target),
            ("distill", "short", soon, None, None),
        ):
            schedule.add(
                namespace="user",
                kind=kind,
                text=text,
                at=at,
                repeat=repeat,
                timezone="Europe/Lisbon",
                target=to,
                now=T0,
            )
        schedule.fire_due(now=T0 + timedelta(minutes=6), late_after_seconds=300, limit=100)
        SqlitePushes(db, None).delivered(1, now=T0 + timedelta(minutes=7))
    files = DirectoryPersonFiles(data_dir)
    files.write_templates("user")
    files.write("user", "USER.md", "# About me\n- Name: Ana\n")
    files.write("users/bob", "SCRATCH.md", "bob's notes")
    files.write("users/bob", "REMINDERS.md", "")
    folder = person_directory(data_dir, "user")
    FileStore(FileLimits()).keep(
        folder, Attachment("boiler.jpg", "image/jpeg", PHOTO, kind="photo"), store=True
    )
    FileStore(FileLimits()).keep(
        folder, Attachment("notes.txt", "text/plain", b"pressure 1.2 bar"), store=True
    )
    return Install(data_dir, _settings(data_dir))


def _access(db: Database) -> None:
    from flynn.memory.pairing import SqlitePairing
    from flynn.memory.person_tokens import SqlitePersonTokens

    SqlitePersonTokens(db).issue("ana", now=T0)
    pairing = SqlitePairing(db)
    pairing.ask(ChannelAccount("telegram", "55"), "Stranger", now=T0)
    offer = pairing.ask(ChannelAccount("telegram", "56"), "Friend", now=T0)
    assert offer is not None
    pairing.approve(offer.request.code, "bob", now=T0)


def _by_kind(counts: list[KindCount]) -> dict[str, KindCount]:
    return {count.kind: count for count in counts}


@pytest.fixture
def install(tmp_path: Path) -> Install:
    return build_install(tmp_path / "data")


def test_every_kind_is_copied_and_read_back_through_the_postgresql_stores(
    install: Install, postgres_url: str
) -> None:
    report = copy_to_postgres(install.settings, postgres_url)
    kinds = _by_kind(report.kinds)
    assert report.matches, [k for k in report.kinds if not k.matches]
    for table in (
        "documents",
        "costs",
        "sessions",
        "messages",
        "message_tools",
        "facts",
        "entities",
        "relations",
        "entity_mentions",
        "embeddings",
        "intake",
        "person_tokens",
        "pairing_requests",
        "approved_accounts",
        "team_documents",
        "team_chunks",
        "team_document_entities",
        "telegram_updates",
        "jobs",
        "pushes",
        "push_drops",
        "job_runs",
        "message_terms",
        "person files",
        "uploaded files",
    ):
        assert kinds[table].source > 0, table
    assert kinds["uploaded files"].target == 2
    assert report.target.count("***") == 1

    with (
        SqliteMemory.open(install.data_dir / "flynn.db", SCHEMA) as sqlite,
        PostgresMemory.open(postgres_url, [PostgresSchedule]) as pg,
    ):
        for query in QUERIES:
            here = sqlite.history.search("user", query, limit=10)
            there = pg.history.search("user", query, limit=10)
            assert [hit.message.id for hit in there] == [hit.message.id for hit in here], query
            assert [hit.message.id for hit in here], query
        chain = [(f.id, f.value, f.status) for f in pg.facts.history("user/profile", "drink")]
        assert chain == [
            (f.id, f.value, f.status) for f in sqlite.facts.history("user/profile", "drink")
        ]
        assert [value for _, value, _ in chain] == ["coffee", "tea"] or sorted(
            value for _, value, _ in chain
        ) == ["coffee", "tea"]
        stand_up = [job for job in PostgresSchedule(pg.db).jobs("user") if job.text == "stand-up"]
        assert [job.next_at for job in stand_up] == [
            job.next_at for job in SqliteSchedule(sqlite.db).jobs("user") if job.text == "stand-up"
        ]
        assert stand_up[0].next_at is not None and stand_up[0].next_at > T0
        files = DocumentsPersonFiles(pg.documents, lambda: T0)
        assert files.read("user", "USER.md") == "# About me\n- Name: Ana\n"
        assert files.read("users/bob", "SCRATCH.md") == "bob's notes"
        shelf = pg.uploads(install.data_dir)
        folder = person_directory(install.data_dir, "user")
        assert shelf.read(folder, "boiler.jpg") == PHOTO
        assert FileStore(FileLimits(), shelf).read_text(folder, "notes.txt") == "pressure 1.2 bar"
        here_near = SqliteVectors(sqlite.db, HashingEmbedder()).nearest(
            "user", "Lisbon trip May", kind="message", limit=3
        )
        there_near = PostgresVectors(pg.db, HashingEmbedder()).nearest(
            "user", "Lisbon trip May", kind="message", limit=3
        )
        assert [ref for ref, _ in there_near] == [ref for ref, _ in here_near]
        assert len(here_near) == 3
        # New rows take ids past every copied one.
        highest = sqlite.db.fetchone("SELECT max(id) AS n FROM messages")
        assert highest is not None
        added = pg.history.append("gateway:ana", "user", "user", "new", tokens=1, now=T0)
        assert added.id > int(highest["n"])
        fact = pg.facts.add(NewFact(namespace="user", kind="profile", value="x"), now=T0)
        assert fact.id > max(f.id for f in sqlite.facts.history("user/profile", "drink"))


def test_a_second_run_over_a_complete_copy_changes_nothing(
    install: Install, postgres_url: str
) -> None:
    first = copy_to_postgres(install.settings, postgres_url)
    assert first.matches and first.copied > 0
    again = copy_to_postgres(install.settings, postgres_url)
    assert again.matches
    assert again.copied == 0
    assert [(k.kind, k.source, k.target) for k in again.kinds] == [
        (k.kind, k.source, k.target) for k in first.kinds
    ]


class Interrupted(Exception):
    pass


def test_a_copy_interrupted_midway_completes_on_the_next_run_without_duplicates(
    install: Install, postgres_url: str
) -> None:
    batches = 0

    def fault(kind: str, rows: int) -> None:
        nonlocal batches
        batches += 1
        if kind == "messages" and batches > 4:
            raise Interrupted

    name = install_name(install.data_dir)
    with Database.open(install.data_dir / "flynn.db", SCHEMA) as source:
        # The copy's own connections (``COPY_WRITER``): its writes do not mark the database live.
        with (
            PostgresMemory.open(postgres_url, writer=COPY_WRITER) as target,
            pytest.raises(Interrupted),
        ):
            copy_install(source, target.db, name, progress=fault, batch_rows=2)
        with PostgresMemory.open(postgres_url, writer=COPY_WRITER) as target:
            partial = target.db.fetchone("SELECT count(*) AS n FROM messages")
            assert partial is not None and 0 < partial["n"] < 6
            assert PostgresRedaction(target.db).stamp()[0] == 0  # not all copied yet
            counts = copy_install(source, target.db, name, batch_rows=2)
            assert all(count.matches for count in counts), counts
            assert _by_kind(counts)["messages"].copied == 6 - partial["n"]
            # No message's postings twice, none missing: the index matches SQLite's.
            assert _by_kind(counts)["message_terms"].matches
            # Every row went through today's gate: the first start runs no pass over them.
            assert PostgresRedaction(target.db).stamp()[0] == REDACTION_VERSION
    report = copy_to_postgres(install.settings, postgres_url)
    assert report.matches
    assert _by_kind(report.kinds)["person files"].copied > 0


def test_a_database_holding_another_install_is_refused(tmp_path: Path, postgres_url: str) -> None:
    other = build_install(tmp_path / "other", words="kettle")
    assert copy_to_postgres(other.settings, postgres_url).matches
    mine = build_install(tmp_path / "mine")
    with pytest.raises(CopyRefused) as refused:
        copy_to_postgres(mine.settings, postgres_url)
    assert "another flynn install" in str(refused.value)
    assert "\n" not in str(refused.value)
    with PostgresMemory.open(postgres_url) as pg:
        kettle = pg.history.search("user", "kettle", limit=10)
        boiler = pg.history.search("user", "boiler", limit=10)
    assert kettle and not boiler


def test_a_database_with_rows_of_its_own_is_refused(install: Install, postgres_url: str) -> None:
    with PostgresMemory.open(postgres_url) as pg:
        pg.history.append("gateway:zoe", "user", "user", "hello", tokens=1, now=T0)
    with pytest.raises(CopyRefused, match="already holds data"):
        copy_to_postgres(install.settings, postgres_url)


def test_the_folder_shelf_keeps_files_private(install: Install) -> None:
    folder = person_directory(install.data_dir, "user")
    names = FolderShelf().names(folder)
    assert [name for name, _ in names] == ["boiler.jpg", "notes.txt"]
    assert all((folder / "files" / name).stat().st_mode & 0o777 == 0o600 for name, _ in names)


def test_a_nul_an_older_install_stored_arrives_as_every_store_now_keeps_it(
    install: Install, postgres_url: str
) -> None:
    """SQLite took a NUL in text before stores replaced it; PostgreSQL's text refuses one. The
    copy keeps the row, with the NUL as U+FFFD (``storable``), rather than failing the batch."""
    with Database.open(install.data_dir / "flynn.db", SCHEMA) as source:
        source.execute(
            "UPDATE documents SET content = ? WHERE namespace = ?",
            ("planning the\x00Lisbon trip", "user/working"),
        )
    report = copy_to_postgres(install.settings, postgres_url)
    assert report.matches
    with PostgresMemory.open(postgres_url) as pg:
        kept = pg.documents.read("user/working")
    assert kept is not None and kept.content == "planning the\ufffdLisbon trip"


def test_the_generated_gateway_token_is_kept_as_its_digest(
    install: Install, postgres_url: str
) -> None:
    """The web chat's token people saved keeps working after the move: its digest, never the
    token, in the database; counted, and not written again by a rerun."""
    token = "kept-token-of-this-install-0123456789"
    (install.data_dir / "gateway-token").write_text(token + "\n", encoding="utf-8")
    first = _by_kind(copy_to_postgres(install.settings, postgres_url).kinds)["gateway token"]
    assert (first.source, first.target, first.copied) == (1, 1, 1)
    again = _by_kind(copy_to_postgres(install.settings, postgres_url).kinds)["gateway token"]
    assert (again.source, again.target, again.copied) == (1, 1, 0)
    with PostgresMemory.open(postgres_url) as pg:
        kept = pg.db.fetchall("SELECT digest FROM gateway_token")
    assert [row["digest"] for row in kept] == [token_digest(token)]
    assert token not in str(kept)
