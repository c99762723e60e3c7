"""The offline provider explains once per conversation that no model is configured: later
replies say what it remembers and end with one short line, instead of the same three lines."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from flynn.app import App
from flynn.memory.working import WorkingMemory
from flynn.messages import ChannelAccount, SessionKey
from flynn.providers.base import ChatMessage, ChatRequest
from flynn.providers.offline import LATER_HINT, NO_MODEL, SETUP_HINT, OfflineProvider
from flynn.recall.recall import RecalledMemory
from flynn.sessions.prompt import assemble, build_session_context
from flynn.settings import load_settings

NOW = datetime(2026, 11, 24, tzinfo=UTC)
SESSION_CONTEXT = build_session_context(
    ["- name: Ana", "- lives in Lisbon"],
    WorkingMemory("Planning the trip to Porto.", NOW, NOW),
    proactive_greeting=False,
)


def ask(text: str, turns: tuple[ChatMessage, ...] = (), *, memory: bool = True) -> ChatRequest:
    prompt = assemble(
        system_block="--- System ---\nNow: Tuesday",
        persona="You are Flynn.",
        session_context=SESSION_CONTEXT if memory else "",
        recalled=RecalledMemory(),
        summary=None,
        turns=turns,
        message=text,
    )
    return ChatRequest(system=prompt.system, messages=prompt.messages)


async def test_a_later_reply_says_what_it_remembers_and_one_short_line() -> None:
    provider = OfflineProvider()
    first = (await provider.chat(ask("hi"))).text
    assert first.startswith(f"Hi Ana! {NO_MODEL}") and SETUP_HINT in first

    history = (ChatMessage("user", "hi"), ChatMessage("assistant", first))
    later = (await provider.chat(ask("what was I planning?", history))).text

    assert NO_MODEL not in later and SETUP_HINT not in later
    assert not later.startswith("Hi")
    assert "- name: Ana" in later and "Planning the trip to Porto." in later
    assert later.endswith("\n\n" + LATER_HINT)
    assert len([line for line in later.splitlines() if "language model" in line]) == 1


async def test_a_later_reply_with_nothing_remembered_says_so_briefly() -> None:
    provider = OfflineProvider()
    first = (await provider.chat(ask("hi", memory=False))).text
    history = (ChatMessage("user", "hi"), ChatMessage("assistant", first))
    later = (await provider.chat(ask("ok", history, memory=False))).text
    assert later == "Nothing I remember relates to that.\n\n" + LATER_HINT


async def test_replies_a_model_gave_before_do_not_count_as_the_explanation() -> None:
    # The key was removed: the conversation has replies, but none said there is no model.
    history = (ChatMessage("user", "hi"), ChatMessage("assistant", "Hello Ana, how was Porto?"))
    text = (await OfflineProvider().chat(ask("and now?", history))).text
    assert text.startswith(f"Hi Ana! {NO_MODEL}") and SETUP_HINT in text


async def test_streamed_later_replies_are_the_same() -> None:
    provider = OfflineProvider(stream_chunks=2)
    first = (await provider.chat(ask("hi"))).text
    request = ask("more", (ChatMessage("user", "hi"), ChatMessage("assistant", first)))
    deltas = [event async for event in provider.stream(request) if isinstance(event, str)]
    assert "".join(deltas) == (await provider.chat(request)).text
    assert NO_MODEL not in "".join(deltas)


async def test_in_a_conversation_only_the_first_reply_explains(tmp_path: Path) -> None:
    settings = load_settings({"data_dir": str(tmp_path), "llm": {"provider": "offline"}})
    app = App.open(settings, {})
    try:
        orchestrator = app.sessions.orchestrator(
            SessionKey("cli", "ana"), ChannelAccount("cli", "ana")
        )
        replies = [
            (await orchestrator.handle(text)).text
            for text in ("my name is Ana", "I'm working on src/app.py", "what am I working on?")
        ]
        # What a tool did is its result alone, as before.
        done = (await orchestrator.handle("add buy milk to my tasks")).text
    finally:
        await app.aclose()
    assert NO_MODEL in replies[0] and SETUP_HINT in replies[0]
    for later in replies[1:]:
        assert NO_MODEL not in later and SETUP_HINT not in later
        assert later.endswith(LATER_HINT)
    assert "working on src/app.py" in replies[2]
    assert done == "Added task 1: buy milk"
