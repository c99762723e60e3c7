"""Text holding a NUL character (U+0000), which PostgreSQL's ``text`` refuses and SQLite keeps:
every store keeps it, on both backends alike, with each NUL replaced by U+FFFD (``storable``), so
a turn carrying one neither fails nor loses the message."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.conftest import Stores

from flynn.memory.documents import SqlDocuments, SqliteDocuments
from flynn.memory.sql import NUL_STAND_IN
from flynn.memory.store import NewFact
from flynn.memory.team import NewChunk
from flynn.messages import InboundMessage
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.documents import PostgresDocuments

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SAID = "my PIN note\x00 is in the drawer\x00"
KEPT = SAID.replace("\x00", NUL_STAND_IN)


def _documents(stores: Stores) -> SqlDocuments:
    sql = stores.sql
    if isinstance(sql, PostgresDatabase):
        return PostgresDocuments(sql)
    return SqliteDocuments(sql)  # type: ignore[arg-type]


def test_a_message_and_its_summary_holding_nul_are_kept(stores: Stores) -> None:
    history = stores.history
    stored = history.append("s", "users/ana", "user", SAID, tokens=5, now=NOW)
    assert stored.content == KEPT
    assert [m.content for m in history.recent("s")] == [KEPT]
    assert [m.message.id for m in history.match("users/ana", "drawer", limit=5)] == [stored.id]
    history.save_summary("s", "a summary\x00", through_id=stored.id, now=NOW)
    assert history.summary("s") == f"a summary{NUL_STAND_IN}"


def test_a_fact_holding_nul_is_kept_and_found(stores: Stores) -> None:
    fact = stores.facts.add(
        NewFact("users/ana", "profile", "green\x00tea", field="drink\x00"), now=NOW
    )
    assert (fact.field, fact.value) == (f"drink{NUL_STAND_IN}", f"green{NUL_STAND_IN}tea")
    assert stores.facts.search("users/ana", "green tea", limit=5) == [fact]


def test_a_document_and_a_team_chunk_holding_nul_are_kept(stores: Stores) -> None:
    documents = _documents(stores)
    documents.replace("users/ana/working", "notes\x00", now=NOW)
    documents.append("users/ana/working", "more\x00", now=NOW)
    stored = documents.read("users/ana/working")
    assert stored is not None and "\x00" not in stored.content
    assert stored.content.count(NUL_STAND_IN) == 2
    team, replaced = stores.team.put(
        path="/docs/a.md",
        title="Title\x00",
        digest="d",
        chars=4,
        chunks=[NewChunk("Heading\x00", "Billing runs\x00 on Tuesdays")],
        now=NOW,
    )
    assert not replaced and team.title == f"Title{NUL_STAND_IN}"
    (chunk,) = stores.team.chunks(stores.team.chunk_ids(team.id))
    assert chunk.content == f"Billing runs{NUL_STAND_IN} on Tuesdays"


def test_a_message_holding_nul_is_accepted_and_replayed(stores: Stores) -> None:
    message = InboundMessage("gateway", "c1", "ana", SAID, "m1", NOW, sender_name="Ana\x00")
    assert stores.inbound.accept(message, "s", "users/ana", keep_text=True, now=NOW).state == "new"
    (waiting,) = stores.inbound.unfinished()
    assert (waiting.message.text, waiting.message.sender_name) == (KEPT, f"Ana{NUL_STAND_IN}")
