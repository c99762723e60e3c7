"""Recall in a conversation that never ends: a Telegram DM is one session for good, so its own
compacted turns must be recalled like any past turn, while the turns its prompt still holds are
not recalled twice."""

from __future__ import annotations

from collections.abc import Callable

from conftest import SMALL_WINDOW, Harness

from flynn.messages import CommandCall
from flynn.providers.offline import memory_in
from flynn.sessions.orchestrator import Orchestrator

SHARED = {**SMALL_WINDOW, "memory": {"user_namespace": "user"}}
VET = "The vet for our cat Mochi is Dr Okafor, her clinic is in Alfama."
FILLER = "We are migrating the billing service to Postgres and keeping the old API stable. " * 6


async def _talk_until_compacted(harness: Harness, session: Orchestrator) -> None:
    """Says ``VET``, then long turns until compaction has summarised it."""
    await session.handle(VET)
    await session.wait_idle()
    assert harness.app is not None
    history = harness.app.services.memory.history
    for step in range(40):
        if not any(turn.content == VET for turn in history.recent(session.session_id)):
            return
        await session.handle(f"Step {step}: {FILLER}")
        await session.wait_idle()
    raise AssertionError("compaction never summarised the first turn")


def _recalled(harness: Harness) -> tuple[str, ...]:
    return memory_in(harness.chat.requests[-1].system).recalled


async def test_a_compacted_turn_of_the_same_chat_is_recalled(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    chat = h.session("telegram", "1")
    await _talk_until_compacted(h, chat)

    await chat.handle("Who is the vet for Mochi the cat?")

    recalled = _recalled(h)
    assert any("Dr Okafor" in line for line in recalled)
    # The turns the prompt still holds are not recalled again.
    assert h.app is not None
    held = [
        turn.content
        for turn in h.app.services.memory.history.recent(chat.session_id)
        if turn.role == "user"  # the model's replies are all "ok"
    ]
    assert len(held) >= 2
    assert not any(turn in line for line in recalled for turn in held)


async def test_the_turns_before_new_are_recalled_in_the_same_chat(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    chat = h.session("telegram", "1")
    await chat.handle(VET)
    await chat.wait_idle()
    await chat.handle(CommandCall("new"))
    await chat.wait_idle()

    await chat.handle("Who is the vet for Mochi the cat?")

    assert any("Dr Okafor" in line for line in _recalled(h))
