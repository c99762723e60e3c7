"""LLM extraction off the reply path (batched every N turns, never for off-the-record turns),
relative dates in what it learns, and the ``/search`` command's scoping."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

import pytest
from conftest import SMALL_WINDOW, Harness

from evals.scripted_provider import ScriptedProvider
from flynn.errors import ProviderError, StoreError, Unavailable
from flynn.learning.graph_extraction import GRAPH_EXTRACTION_PROMPT
from flynn.learning.graph_ingest import GraphIngestor
from flynn.messages import CommandCall
from flynn.providers.base import ChatRequest, ChatResponse, StreamEvent

SHARED = {**SMALL_WINDOW, "memory": {"user_namespace": "user"}}
EMPLOYER = '{"profile": [{"field": "employer", "value": "Acme", "confidence": 0.9}]}'


class GatedProvider:
    """Answers every request with ``reply``, but only once ``gate`` is set."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.gate = asyncio.Event()
        self.started = asyncio.Event()
        self.requests: list[ChatRequest] = []

    @property
    def name(self) -> str:
        return "gated"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        self.started.set()
        await self.gate.wait()
        return ChatResponse(self.reply)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        yield await self.chat(request)

    async def aclose(self) -> None:
        return None


async def test_extraction_runs_after_the_reply_and_never_blocks_one(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    gated = GatedProvider(EMPLOYER)
    h.extraction = gated  # type: ignore[assignment]
    app = h.open()
    session = h.session()
    for index in range(3):
        await session.handle(f"hello {index}")
    assert gated.requests == []

    reply = await asyncio.wait_for(session.handle("I work at Acme now"), 5)
    assert reply.text == "ok"
    await asyncio.wait_for(gated.started.wait(), 5)  # extraction is running, in the background
    assert app.memory.facts.active("user/profile") == []
    # The next turn does not wait for it either.
    assert (await asyncio.wait_for(session.handle("anyway"), 5)).text == "ok"

    gated.gate.set()
    await session.wait_idle()
    facts = app.memory.facts.active("user/profile")
    assert [(f.field, f.value, f.source) for f in facts] == [("employer", "Acme", "llm")]
    # Facts first, then the graph: two calls of the extraction model, both in the background.
    request, graph_request = gated.requests
    assert request.task == graph_request.task == "extraction"
    assert graph_request.system == GRAPH_EXTRACTION_PROMPT
    transcript = request.messages[0].content
    assert "hello 0" in transcript and "I work at Acme now" in transcript


async def test_the_models_graph_extraction_lands_in_the_graph_with_its_mentions(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)

    def answer(request: ChatRequest) -> str:
        if request.system != GRAPH_EXTRACTION_PROMPT:
            return "{}"
        return json.dumps(
            {
                "entities": [{"name": "Priya", "type": "person"}, {"name": "Kestrel"}],
                "relations": [
                    {"source": "Priya", "target": "Kestrel", "type": "works_on"},
                    {"source": "User", "target": "Priya", "type": "manager"},
                ],
            }
        )

    h.extraction = ScriptedProvider(default=answer, name="extraction")
    app = h.open()
    session = h.session()
    for text in ("Priya moved our team onto Kestrel.", "It ships in May.", "ok", "fine"):
        await session.handle(text)
    await session.wait_idle()

    graph = app.memory.graph
    priya = graph.find("user", "Priya")
    assert priya is not None and priya.type == "person"
    relations = {
        (r.source_name, r.type, r.target_name) for r in graph.relations_of(priya.id, limit=9)
    }
    assert relations == {("Priya", "works_on", "Kestrel"), ("User", "manager", "Priya")}
    # Linked to the person's message that names Priya (so recall weighs it up), and no other.
    [mentioning] = graph.messages_mentioning([priya.id], limit=9)
    assert (
        app.memory.history.messages([mentioning])[0].content == "Priya moved our team onto Kestrel."
    )


async def test_a_failed_graph_call_keeps_the_facts(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.extraction = ScriptedProvider(
        [EMPLOYER, ProviderError("graph call timed out")], default="{}", name="extraction"
    )
    app = h.open()
    session = h.session()
    for text in ("hello", "I work at Acme now", "ok", "fine"):
        await session.handle(text)
    await session.wait_idle()

    facts = app.memory.facts.active("user/profile")
    assert [(f.field, f.value) for f in facts] == [("employer", "Acme")]
    assert (await session.handle("still here?")).text == "ok"


async def test_off_the_record_turns_are_never_extracted(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    await session.handle(CommandCall("otr"))
    for index in range(6):
        await session.handle(f"secret project Falcon {index}")
    await session.wait_idle()
    assert h.extraction.requests == []

    await session.handle(CommandCall("otr"))
    for index in range(4):
        await session.handle(f"on the record {index}")
    await session.wait_idle()
    # One batch: its facts, then its graph.
    assert [r.system == GRAPH_EXTRACTION_PROMPT for r in h.extraction.requests] == [False, True]
    for request in h.extraction.requests:
        transcript = request.messages[0].content
        assert "Falcon" not in transcript and "on the record 0" in transcript


async def test_batches_and_compaction_never_learn_a_turn_twice(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    long = "We are migrating the billing service to Postgres and keeping the API stable. " * 6
    for index in range(30):
        await session.handle(f"Step {index}: {long}")
        await session.wait_idle()
        if h.compaction.requests:
            break
    assert h.compaction.requests, "no compaction happened"
    for graph in (False, True):  # fact extraction, graph extraction
        transcripts = [
            request.messages[0].content
            for request in h.extraction.requests
            if (request.system == GRAPH_EXTRACTION_PROMPT) == graph
        ]
        assert len(transcripts) >= 2
        for index in range(30):
            assert sum(f"Step {index}:" in text for text in transcripts) <= 1


async def test_batching_can_be_turned_off(harness: Callable[..., Harness]) -> None:
    h = harness(**SMALL_WINDOW, memory={"user_namespace": "user", "extract_every_turns": 0})
    h.open()
    session = h.session()
    for index in range(8):
        await session.handle(f"hello {index}")
    await session.wait_idle()
    assert h.extraction.requests == []


async def test_learnt_facts_get_absolute_dates(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED, persona={"timezone": "Europe/Lisbon"})
    dentist = '{"profile": [{"field": "dentist_appointment", "value": "next Friday"}]}'
    h.extraction = ScriptedProvider([dentist], default="{}", name="extraction")
    app = h.open()  # the clock says Monday 2026-11-02
    session = h.session()
    for text in ("My dentist appointment is next Friday.", "ok", "fine", "thanks"):
        await session.handle(text)
    await session.wait_idle()
    [fact] = app.memory.facts.active("user/profile", field="dentist_appointment")
    assert fact.value == "on Friday 2026-11-06"


async def test_search_command_sees_only_the_persons_own_turns(
    harness: Callable[..., Harness],
) -> None:
    users = {"ana": {"gateway": ["laptop"], "telegram": ["1"]}, "bob": {"gateway": ["phone"]}}
    h = harness(**SMALL_WINDOW, users=users)
    h.open()
    ana_web, ana_phone = h.session("gateway", "ana@laptop"), h.session("telegram", "1")
    bob = h.session("gateway", "bob@phone")
    await ana_web.handle("the dentist moved to Friday")
    h.clock.advance(days=1)
    await bob.handle("my dentist is Doctor Who")
    await ana_phone.handle("remind me about the dentist")

    result = await ana_phone.handle(CommandCall("search", "dentist"))
    assert not result.is_error
    lines = result.text.splitlines()
    assert lines.index("2026-11-03") < lines.index("2026-11-02")
    assert "the **dentist** moved to Friday" in result.text
    assert "gateway:ana@laptop" in result.text and "telegram:1" in result.text
    assert "Doctor Who" not in result.text
    assert "Doctor Who" in (await bob.handle(CommandCall("search", "dentist"))).text
    assert "moved" not in (await bob.handle(CommandCall("search", "dentist"))).text
    usage = await bob.handle(CommandCall("search"))
    assert "Usage" in usage.text and not usage.is_error
    assert "/search" in (await bob.handle(CommandCall("help"))).text


def _employer_and_graph(request: ChatRequest) -> str:
    if request.system == GRAPH_EXTRACTION_PROMPT:
        return '{"entities": [{"name": "Priya", "type": "person"}]}'
    return EMPLOYER


async def test_a_graph_write_that_fails_never_has_the_facts_learnt_again(
    harness: Callable[..., Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness(**SHARED)
    h.extraction = ScriptedProvider(default=_employer_and_graph, name="extraction")
    monkeypatch.setattr(GraphIngestor, "ingest_batch", _locked)
    app = h.open()
    session = h.session()
    for text in ("Priya says hi", "I work at Acme now", "ok", "fine", "later", "more", "and", "on"):
        await session.handle(text)
        await session.wait_idle()

    facts = [
        r.messages[0].content for r in h.extraction.requests if r.system != GRAPH_EXTRACTION_PROMPT
    ]
    assert len(facts) == 2
    assert sum("I work at Acme now" in transcript for transcript in facts) == 1
    assert [f.value for f in app.memory.facts.active("user/profile")] == ["Acme"]


async def test_a_graph_write_that_fails_never_fails_a_compaction(
    harness: Callable[..., Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness(**SMALL_WINDOW, memory={"user_namespace": "user", "extract_every_turns": 0})
    h.extraction = ScriptedProvider(default=_employer_and_graph, name="extraction")
    monkeypatch.setattr(GraphIngestor, "ingest_batch", _locked)
    app = h.open()
    session = h.session()
    for index in range(6):
        await session.handle(f"Step {index}: I work at Acme now " + "word " * 60)

    outcome = await session.compact_now()

    assert outcome is not None
    assert app.memory.history.summary(session.session_id)
    assert [f.value for f in app.memory.facts.active("user/profile")] == ["Acme"]


def _locked(*args: object, **kwargs: object) -> list[object]:
    raise StoreError("database is locked")  # another writer held the lock too long


async def test_every_turn_is_learnt_once_batch_after_batch_a_failed_one_with_the_next(
    harness: Callable[..., Harness],
) -> None:
    """The batch is the turns after the last learnt one, found from the end of a session that
    keeps growing: each of the person's turns reaches fact extraction once, in order, and a
    batch whose call failed goes again with the next."""
    h = harness(**{**SHARED, "memory": {"user_namespace": "user", "extract_every_turns": 3}})
    h.open()
    session = h.session()
    for index in range(14):
        if index == 5:
            h.extraction.push(Unavailable("extraction is down"))  # the second batch's call
        await session.handle(f"Note {index}: the plan holds")
        await session.wait_idle()
    transcripts = [
        request.messages[0].content
        for request in h.extraction.requests
        if request.system != GRAPH_EXTRACTION_PROMPT
    ]
    # After turns 3 (0-2), 6 (3-5, failed), 9 (3-8: the failed batch again) and 12 (9-11).
    assert len(transcripts) == 4
    failed = transcripts.pop(1)
    assert "Note 3:" in failed and "Note 5:" in failed
    for index in range(12):
        said = [number for number, text in enumerate(transcripts) if f"Note {index}:" in text]
        assert said == [0 if index < 3 else 1 if index < 9 else 2], index
    assert not any("Note 12:" in text or "Note 13:" in text for text in transcripts)
