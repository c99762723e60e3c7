"""OfflineProvider: says no model is configured, answers from memory, refuses other tasks."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flynn.errors import Unavailable
from flynn.memory.working import WorkingMemory
from flynn.providers.base import ChatRequest, ChatResponse, Task
from flynn.providers.offline import OfflineProvider
from flynn.recall.recall import RecallBlock, RecalledMemory
from flynn.sessions.prompt import assemble, build_session_context

NOW = datetime(2026, 11, 24, tzinfo=UTC)
SESSION_CONTEXT = build_session_context(
    ["- name: Ana", "- lives in Lisbon", "- prefers tea over coffee"],
    WorkingMemory("Planning the trip to Porto; booking the train next.", NOW, NOW),
    proactive_greeting=True,
)
RECALLED = RecalledMemory(
    (RecallBlock("Past conversations", "high", ("- Last week: asked about train times",)),)
)


def ask(text: str = "hi", *, memory: bool = True, task: Task = "chat") -> ChatRequest:
    """A request with the system prompt the orchestrator assembles (without memory: none)."""
    prompt = assemble(
        system_block="--- System ---\nNow: Tuesday",
        persona="You are Flynn.",
        session_context=SESSION_CONTEXT if memory else "",
        recalled=RECALLED if memory else RecalledMemory(),
        summary=None,
        turns=(),
        message=text,
    )
    return ChatRequest(system=prompt.system, messages=prompt.messages, task=task)


async def test_greets_by_name_and_says_how_to_configure_a_model() -> None:
    response = await OfflineProvider().chat(ask())

    assert response.text.startswith("Hi Ana!")
    assert "No language model is configured" in response.text
    assert "ANTHROPIC_API_KEY" in response.text
    assert "OPENAI_API_KEY" in response.text
    assert "llm.base_url" in response.text
    assert response.provider == "offline"


async def test_lists_facts_working_memory_and_recalled_snippets() -> None:
    text = (await OfflineProvider().chat(ask())).text

    assert "- name: Ana" in text
    assert "- lives in Lisbon" in text
    assert "- prefers tea over coffee" in text
    assert "Planning the trip to Porto; booking the train next." in text
    assert "- Last week: asked about train times" in text
    assert "If relevant" not in text and "trust" not in text


async def test_without_memory_says_it_knows_nothing_yet() -> None:
    text = (await OfflineProvider().chat(ask(memory=False))).text

    assert text.startswith("Hi!")
    assert "I don't remember anything about you yet." in text


async def test_is_deterministic_and_estimates_usage() -> None:
    first = await OfflineProvider().chat(ask())
    second = await OfflineProvider().chat(ask())

    assert first == second
    assert first.usage.input_tokens > 0
    assert first.usage.output_tokens > 0


async def test_stream_yields_the_same_text_in_a_few_deltas() -> None:
    chat = await OfflineProvider().chat(ask())
    events = [event async for event in OfflineProvider(stream_chunks=3).stream(ask())]

    deltas = [event for event in events if isinstance(event, str)]
    assert 2 <= len(deltas) <= 4
    assert "".join(deltas) == chat.text
    assert events[-1] == chat
    assert isinstance(events[-1], ChatResponse)


@pytest.mark.parametrize("task", ["compaction", "extraction", "distill"])
async def test_other_tasks_are_unavailable(task: Task) -> None:
    with pytest.raises(Unavailable, match="no language model is configured"):
        await OfflineProvider().chat(ask(task=task))
    with pytest.raises(Unavailable):
        async for _ in OfflineProvider().stream(ask(task=task)):
            pass
