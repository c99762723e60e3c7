"""The orchestrator against real SQLite and a scripted provider: seed 000's success criteria,
compaction paths, commands, and failure handling."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
import structlog
from conftest import SMALL_WINDOW, Harness

from flynn.errors import ContextTooLong, RateLimited, Unavailable
from flynn.memory.working import read_working_memory
from flynn.messages import CommandCall
from flynn.providers.base import ChatRequest
from flynn.providers.offline import memory_in
from flynn.sessions.compaction import build_compaction_prompt
from flynn.sessions.orchestrator import Orchestrator
from flynn.sessions.prompt import PROFILE_HEADING, RECENT_HEADING

SHARED = {**SMALL_WINDOW, "memory": {"user_namespace": "user"}}
LONG = "We are migrating the billing service to Postgres and keeping the old API stable. " * 6


async def talk_until_compacted(h: Harness, session: Orchestrator, turns: int = 30) -> None:
    before = len(h.compaction.requests)
    for index in range(turns):
        await session.handle(f"Step {index}: {LONG}")
        await session.wait_idle()
        if len(h.compaction.requests) > before:
            return
    raise AssertionError("no compaction happened")


async def test_working_memory_survives_restart_and_is_injected_on_another_channel(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    web = h.session("gateway", "laptop")
    await web.handle("My name is Ana.")
    h.compaction.default = "- Ana is migrating billing to Postgres; next: cut over on Friday"
    await talk_until_compacted(h, web)
    await h.close()

    h.open()  # a daemon restart
    telegram = h.session("telegram", "42")
    await telegram.handle("hi")
    system = h.chat.requests[-1].system
    assert PROFILE_HEADING in system
    assert "name: Ana" in system
    assert RECENT_HEADING in system
    assert "cut over on Friday" in system


async def test_two_sessions_with_user_namespace_share_profile_and_working_memory(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    first = h.session("gateway", "laptop")
    await first.handle("My name is Ana.")
    h.compaction.default = "- planning the Lisbon trip"
    await talk_until_compacted(h, first)

    second = h.session("discord", "99")
    await second.handle("hello")
    system = h.chat.requests[-1].system
    assert "name: Ana" in system
    assert "planning the Lisbon trip" in system


async def test_without_user_namespace_nothing_is_injected_or_written(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SMALL_WINDOW, memory={"user_namespace": None})
    app = h.open()
    first = h.session("gateway", "laptop")
    await first.handle("My name is Ana.")
    await talk_until_compacted(h, first)
    assert h.compaction.requests[0].system == build_compaction_prompt(personal_assistant=False)
    assert app.memory.documents.list("user") == []

    second = h.session("telegram", "42")
    await second.handle("hi")
    system = h.chat.requests[-1].system
    assert PROFILE_HEADING not in system
    assert RECENT_HEADING not in system
    assert "Ana" not in system


async def test_every_compaction_writes_working_memory(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    app = h.open()
    session = h.session()
    h.compaction.default = "- first summary"
    await talk_until_compacted(h, session)
    first = read_working_memory(app.memory.documents, "user/working", now=h.clock())
    assert first is not None and "first summary" in first.content
    assert h.compaction.requests[0].system == build_compaction_prompt(personal_assistant=True)

    h.clock.advance(hours=1)
    h.compaction.default = "- second summary"
    await talk_until_compacted(h, session)
    second = read_working_memory(app.memory.documents, "user/working", now=h.clock())
    assert second is not None
    assert "second summary" in second.content and "first summary" not in second.content
    assert second.updated_at > first.updated_at


async def test_expired_working_memory_is_ignored_silently(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    app = h.open()
    app.memory.documents.replace(
        "user/working",
        "# Working Memory\nUpdated: 2025-01-01T00:00:00Z\nExpires: 2025-01-02T00:00:00Z\n\n"
        "stale content",
        now=datetime(2025, 1, 1, tzinfo=UTC),
    )
    result = await h.session().handle("hello")
    assert not result.is_error
    assert "stale content" not in h.chat.requests[-1].system
    assert RECENT_HEADING not in h.chat.requests[-1].system


async def test_session_context_is_built_once_and_reset_clears_it(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    app.memory.documents.replace("user/working", "", now=h.clock())
    from flynn.memory.working import write_working_memory

    write_working_memory(
        app.memory.documents,
        "user/working",
        "old plans",
        ttl_days=14,
        max_tokens=1000,
        now=h.clock(),
    )
    session = h.session()
    await session.handle("hi")
    persona_first = h.chat.requests[-1].system
    assert "old plans" in persona_first

    write_working_memory(
        app.memory.documents,
        "user/working",
        "new plans",
        ttl_days=14,
        max_tokens=1000,
        now=h.clock(),
    )
    await session.handle("and again")
    assert "old plans" in h.chat.requests[-1].system
    await h.close()

    app = h.open()  # a restart starts the session afresh (DESIGN 6): what is true now
    again = h.session()
    await again.handle("back")
    assert "new plans" in h.chat.requests[-1].system
    assert "old plans" not in h.chat.requests[-1].system

    write_working_memory(
        app.memory.documents,
        "user/working",
        "newest plans",
        ttl_days=14,
        max_tokens=1000,
        now=h.clock(),
    )
    await app.sessions.evict(again.key)  # dropped while idle, within the same run
    third = h.session()
    await third.handle("still here")
    assert "new plans" in h.chat.requests[-1].system  # kept: no re-injection mid-session
    assert "newest plans" not in h.chat.requests[-1].system

    await third.handle(CommandCall("reset"))
    await third.handle("fresh start")
    assert "newest plans" in h.chat.requests[-1].system


async def test_proactive_greeting_adds_the_seed_instruction(
    harness: Callable[..., Harness],
) -> None:
    h = harness(
        **SMALL_WINDOW, memory={"user_namespace": "user", "proactive_session_greeting": True}
    )
    h.open()
    session = h.session()
    await session.handle("My name is Ana.")
    await session.handle(CommandCall("new"))
    await session.handle("hi")
    assert "briefly acknowledge what the user was last working on" in h.chat.requests[-1].system


async def test_summary_failure_falls_back_to_an_extractive_summary(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    h.compaction.default = Unavailable("down")
    session = h.session()
    await session.handle("Please look at src/billing/migrate.py and https://example.test/runbook")
    await talk_until_compacted(h, session)
    working = read_working_memory(app.memory.documents, "user/working", now=h.clock())
    assert working is not None
    assert "src/billing/migrate.py" in working.content
    assert "## Recent requests" in working.content
    result = await session.handle("still there?")
    assert not result.is_error


async def test_context_too_long_compacts_then_retries_once(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    for index in range(4):
        await session.handle(f"note {index}: {LONG[:200]}")
    h.chat.push(ContextTooLong("too long"), "answer after compaction")
    result = await session.handle("what now?")
    assert result.text == "answer after compaction"
    assert result.compacted
    assert len(h.compaction.requests) >= 1


async def test_off_the_record_stores_nothing(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    app = h.open()
    session = h.session()
    await session.handle(CommandCall("otr"))
    await session.handle("My name is Zed and my secret project is Falcon.")
    assert "Off The Record" in h.chat.requests[-1].system
    assert app.memory.history.recent("gateway:laptop") == []
    assert app.memory.facts.active("user/profile") == []
    await session.handle(CommandCall("otr"))
    await session.handle("hello")
    assert "Off The Record" not in h.chat.requests[-1].system
    assert "Falcon" not in str(h.chat.requests[-1].messages)


async def test_provider_failure_keeps_the_message_and_the_session(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    session = h.session()
    h.chat.push(RateLimited("slow down", retry_after=3))
    result = await session.handle("remember the dentist on Tuesday")
    assert result.error_code == "rate_limited"
    stored = app.memory.history.recent("gateway:laptop")
    assert [m.content for m in stored] == ["remember the dentist on Tuesday"]

    result = await session.handle("are you back?")
    assert not result.is_error
    sent = h.chat.requests[-1].messages
    assert sent[0].role == "user" and "dentist" in sent[0].content


async def test_rule_extraction_feeds_the_profile_and_memory_view(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    session = h.session()
    await session.handle("My name is Ana. When I say ship it, run the deploy checklist.")
    await session.handle("Actually, call me Annie.")
    names = app.memory.facts.history("user/profile", "name")
    assert [(f.value, f.status) for f in names] == [("Ana", "superseded"), ("Annie", "active")]
    assert app.memory.facts.active("user/patterns")
    await session.handle(CommandCall("new"))  # the profile joins the prompt at a session start
    await session.handle("hi")
    request: ChatRequest = h.chat.requests[-1]
    assert memory_in(request.system).user_name == "Annie"


async def test_llm_extraction_at_compaction_joins_the_persons_profile(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    h.extraction.default = (
        'Sure! ```json {"profile": [{"field": "employer", "value": "Acme", "confidence": 0.9}, '
        '{"field": "pet", "value": "a cat", "confidence": 0.2}], "observations": [{"text": '
    )
    await talk_until_compacted(h, h.session())
    facts = app.memory.facts.active("user/profile")
    assert [(f.field, f.value) for f in facts] == [("employer", "Acme")]


async def test_garbage_extraction_output_is_harmless(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    app = h.open()
    h.extraction.default = "}{ not json at all ]["
    session = h.session()
    await talk_until_compacted(h, session)
    assert app.memory.facts.active("user/profile") == []
    assert not (await session.handle("ok?")).is_error


async def test_extraction_output_nested_too_deeply_is_harmless(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    h.extraction.default = '{"a":' * 3000 + "1" + "}" * 3000
    session = h.session()
    with structlog.testing.capture_logs() as logs:
        await talk_until_compacted(h, session)
        for index in range(3):
            result = await session.handle(f"and now? {index}: {LONG}")
            await session.wait_idle()
            assert not result.is_error
    assert [entry["event"] for entry in logs if entry["log_level"] == "error"] == []
    assert read_working_memory(app.memory.documents, "user/working", now=h.clock()) is not None
    assert app.memory.history.summary("gateway:laptop") is not None


async def test_a_crash_in_learning_does_not_stop_compaction(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()

    def crash(request: ChatRequest) -> str:
        raise RuntimeError("a bug in extraction")

    h.extraction.default = crash
    session = h.session()
    await session.handle("Please look at src/billing/migrate.py before Friday.")
    with structlog.testing.capture_logs() as logs:
        await talk_until_compacted(h, session)
    assert "extraction.crashed" in [entry["event"] for entry in logs]
    working = read_working_memory(app.memory.documents, "user/working", now=h.clock())
    assert working is not None and working.content == "- summary of earlier turns"
    assert app.memory.history.summary("gateway:laptop") == "- summary of earlier turns"
    first = app.memory.db.fetchone("SELECT content, summarized FROM messages ORDER BY id")
    assert tuple(first or ()) == ("Please look at src/billing/migrate.py before Friday.", 1)
    assert not (await session.handle("still there?")).is_error


async def test_compactions_never_overlap(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    for index in range(6):
        await session.handle(f"item {index}: {LONG[:300]}")
    running = 0
    peak = 0
    release = asyncio.Event()

    original_chat = h.compaction.chat

    async def counting_chat(request: ChatRequest):  # type: ignore[no-untyped-def]
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await release.wait()
        running -= 1
        return await original_chat(request)

    h.compaction.chat = counting_chat  # type: ignore[method-assign]
    first = asyncio.create_task(session.handle(CommandCall("compact")))
    second = asyncio.create_task(session.handle(CommandCall("compact")))
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(first, second)
    assert peak == 1


async def test_commands(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    unknown = await session.handle(CommandCall("frobnicate"))
    assert unknown.error_code == "bad_request" and "/status" in unknown.text
    await session.handle("My name is Ana.")
    status = await session.handle(CommandCall("status"))
    assert "gateway:laptop" in status.text and "shared across channels" in status.text
    nothing = await session.handle(CommandCall("compact"))
    assert "Nothing to compact" in nothing.text or "Compacted" in nothing.text
    forgot = await session.handle(CommandCall("forget", "name"))
    assert "Forgotten" in forgot.text
    assert h.app is not None and h.app.memory.facts.active("user/profile", field="name") == []


async def test_the_base_prompt_is_never_mutated(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    await session.handle("hello")
    await session.handle("My name is Ana.")
    await session.handle("hello again")
    persona = h.app.services.person.persona.render() if h.app else ""
    systems = [r.system for r in h.chat.requests]
    assert all(persona in s for s in systems)
    assert all(s.count(persona) == 1 for s in systems)


async def test_forget_field_in_chat_removes_the_fact_and_its_mentions(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    session = h.session()
    await session.handle("My name is Zanzibar.")
    await session.handle("hello again")
    assert app.memory.facts.active("user/profile", field="name")

    forgot = await session.handle(CommandCall("forget", "name"))
    assert "Forgotten: name" in forgot.text and "redacted" in forgot.text
    assert app.memory.facts.active("user/profile", field="name") == []
    assert app.memory.history.search("user", "Zanzibar", limit=5) == []
    await session.handle("who am I?")
    request = h.chat.requests[-1]
    assert "Zanzibar" not in request.system
    assert all("Zanzibar" not in m.content for m in request.messages)
    assert memory_in(request.system).user_name is None


async def test_forget_in_chat_reaches_the_persons_other_sessions_of_this_daemon(
    harness: Callable[..., Harness],
) -> None:
    # One daemon on SQLite: the laptop's turns are loaded (and its session context built)
    # when the phone says /forget; the laptop's next prompt must not quote the name.
    h = harness(**SHARED)
    app = h.open()
    laptop, phone = h.session("gateway", "laptop"), h.session("telegram", "42")
    await laptop.handle("My name is Zanzibar.")
    await laptop.handle("hello again")
    assert "Zanzibar" in repr(h.chat.requests[-1])
    await phone.handle("hi")

    forgot = await phone.handle(CommandCall("forget", "name"))
    assert "Forgotten: name" in forgot.text
    assert app.memory.history.search("user", "Zanzibar", limit=5) == []
    await laptop.handle("who am I?")
    assert "Zanzibar" not in repr(h.chat.requests[-1])


async def test_the_context_estimate_follows_the_turns_it_holds(
    harness: Callable[..., Harness],
) -> None:
    # Kept as turns are added rather than recounted on every check; it must never drift from
    # the turns it describes, through compaction (mid-turn too) and a reset.
    h = harness(**SHARED)
    h.open()
    session = h.session()

    def kept_and_recounted() -> tuple[int, int]:
        # The running count is the conversation's own; the orchestrator shows only /status's
        # usage (recounted), so the test reads its conversation.
        conversation = session._conversation
        turns = conversation.turns()
        return conversation.tokens, sum(message.tokens + 4 for message in turns)

    await talk_until_compacted(h, session)
    kept, recounted = kept_and_recounted()
    assert kept == recounted
    h.chat.push(ContextTooLong("too long"), "answer after compaction")
    await session.handle("what now?")
    await session.wait_idle()
    kept, recounted = kept_and_recounted()
    assert kept == recounted
    assert session._conversation.turns()[-1].content == "answer after compaction"
    await session.handle(CommandCall("reset"))
    await session.handle("fresh start")
    kept, recounted = kept_and_recounted()
    assert kept == recounted


async def test_a_compaction_mid_turn_does_not_repeat_the_message(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    for index in range(4):
        await session.handle(f"note {index}: {LONG[:200]}")
    h.chat.push(ContextTooLong("too long"), "fine")
    await session.handle("what now?")
    retried = h.chat.requests[-1]
    assert retried.messages[-1].content == "what now?"
    assert sum("what now?" in m.content for m in retried.messages) == 1


async def test_turns_are_embedded_off_the_reply_path(harness: Callable[..., Harness]) -> None:
    pytest.importorskip("wordllama")
    h = harness(memory={"embeddings": True, "embeddings_model": "wordllama"})
    app = h.open()
    assert app.load_embeddings()  # the daemon does it in a thread once it serves
    session = h.session()
    await session.handle("I adopted a retired racing greyhound.")
    await session.wait_idle()
    rows = app.memory.db.fetchall("SELECT ref_id FROM embeddings WHERE kind = 'message'")
    assert len(rows) == 2  # the person's message and the reply


async def test_start_up_says_when_stored_messages_lack_vectors(
    harness: Callable[..., Harness],
) -> None:
    pytest.importorskip("wordllama")
    h = harness()
    h.open()
    await h.session().handle("I adopted a retired racing greyhound.")
    await h.close()
    with structlog.testing.capture_logs() as logs:
        h.open(memory={"embeddings": True, "embeddings_model": "wordllama"})
    (warning,) = [entry for entry in logs if entry["event"] == "memory.embeddings_incomplete"]
    assert warning["unembedded"] == 2 and warning["fix"] == "flynn memory embed"


async def test_forgetting_a_field_in_chat_embeds_the_redacted_turns_anew(
    harness: Callable[..., Harness],
) -> None:
    pytest.importorskip("wordllama")
    h = harness(memory={"embeddings": True, "embeddings_model": "wordllama"})
    app = h.open()
    assert app.load_embeddings()  # the daemon does it in a thread once it serves
    session = h.session()
    await session.handle("My email is ana@example.com by the way.")
    await session.handle("And I like green tea.")
    await session.wait_idle()
    count = "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM embeddings)"
    assert tuple(app.memory.db.fetchone(count) or ()) == (4, 4)
    reply = await session.handle(CommandCall("forget", "email"))
    assert reply.text.startswith("Forgotten: email")
    # The queue owns the pass the forget asked for; this one starts after it (or joins it).
    await app.services.learning.writer.embed_missing(session.scope.root)
    # The redacted message and the reply after it were embedded again, from the redacted text.
    assert tuple(app.memory.db.fetchone(count) or ()) == (4, 4)
    texts = [row[0] for row in app.memory.db.fetchall("SELECT content FROM messages")]
    assert not any("ana@example.com" in text for text in texts)
