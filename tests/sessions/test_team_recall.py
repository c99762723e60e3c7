"""Team documents in conversations (DESIGN 16): every person in ``users:`` (and the owner) may
recall them, in their own labelled block; strangers' session memory may not; nothing a person
says ever flows into the team's namespace."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import SMALL_WINDOW, Harness

from flynn.learning.documents import DocumentIngestor
from flynn.learning.graph_extraction import RuleGraphExtractor
from flynn.learning.graph_ingest import GraphIngestor
from flynn.memory.team import TEAM_NAMESPACE
from flynn.messages import ChannelAccount, SessionKey
from flynn.providers.base import ChatResponse, ToolCall

PEOPLE = {"alice": {"gateway": ["alice-laptop"]}, "bob": {"gateway": ["bob-laptop"]}}
POLICY = "# Travel policy\n\nTrain tickets over 300 euros need the finance lead's approval.\n"


def _add_policy(h: Harness, tmp_path: Path) -> None:
    assert h.app is not None
    memory = h.app.memory
    path = tmp_path / "policy.md"
    path.write_text(POLICY, encoding="utf-8")
    DocumentIngestor(
        memory.team,
        GraphIngestor(memory.graph, RuleGraphExtractor()),
        vectors=None,
        clock=h.clock,
    ).add(path)


async def test_everyone_listed_recalls_the_team_document_and_strangers_do_not(
    harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = harness(**SMALL_WINDOW, users=PEOPLE)
    app = h.open()
    _add_policy(h, tmp_path)
    question = "do train tickets over 300 euros need approval?"
    # A stranger is an account nobody listed (the gateway's channel token is the owner's).
    for channel, client in (
        ("gateway", "alice@alice-laptop"),
        ("gateway", "bob@bob-laptop"),
        ("telegram", "999"),
    ):
        session = app.sessions.orchestrator(
            SessionKey(channel, client), ChannelAccount(channel, client)
        )
        await session.handle(question)
        system = h.chat.requests[-1].system
        if client == "999":
            assert "Travel policy" not in system
        else:
            assert "[From team documents (trust: medium: shared reference documents" in system
            assert "- Travel policy: Train tickets over 300 euros need the finance lead" in system


async def test_what_people_say_never_reaches_the_team_namespace(
    harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = harness(**SMALL_WINDOW, users=PEOPLE)
    app = h.open()
    alice = app.sessions.orchestrator(
        SessionKey("gateway", "alice@alice-laptop"), ChannelAccount("gateway", "alice@alice-laptop")
    )
    await alice.handle("My sister Maria Lopez lives in Porto and works at Acme Corp.")
    await alice.aclose()
    rows = app.memory.db.fetchall(
        "SELECT namespace FROM entities UNION SELECT namespace FROM facts"
    )
    assert rows, "the turn taught nothing: the test would prove nothing"
    assert all(not row[0].startswith(TEAM_NAMESPACE) for row in rows)
    assert app.memory.team.count() == 0


async def test_memory_search_reads_the_team_documents_too(
    harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = harness(**SMALL_WINDOW, memory={"user_namespace": "user"})
    h.open()
    _add_policy(h, tmp_path)
    h.chat.push(
        ChatResponse(
            "",
            tool_calls=(ToolCall("c1", "memory_search", '{"query": "train ticket approval"}'),),
        ),
        "The finance lead approves it.",
    )
    await h.session().handle("check the rules on train tickets")
    results = [m for m in h.chat.requests[-1].messages if m.tool_results][-1].tool_results
    assert "Travel policy: Train tickets over 300 euros" in results[0].content
