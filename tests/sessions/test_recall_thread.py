"""Where a turn's recall runs: on the event loop for a turn alone recalling by words, in a
recall thread whenever another turn is under way (its reply may be streaming) or the question
is embedded. Recall finds the same either way."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest
from conftest import SMALL_WINDOW, Harness
from fakes.embedder import HeldEmbedder
from fakes.gated_provider import GatedProvider

from flynn.providers.offline import memory_in

VET = "The vet for our cat Mochi is Dr Okafor, her clinic is in Alfama."
QUESTION = "Who is the vet for Mochi the cat?"


def _recall_threads() -> set[threading.Thread]:
    """The recall worker's threads alive now (its pool starts them at its first job)."""
    return {t for t in threading.enumerate() if t.name.startswith("flynn-recall")}


async def test_a_turn_alone_recalls_on_the_loop_and_beside_another_in_a_thread(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SMALL_WINDOW, memory={"user_namespace": "user", "embeddings": False})
    chat = h.chat = GatedProvider()
    chat.gate.set()
    h.open()
    before = _recall_threads()
    told = h.session("telegram", "1")
    await told.handle(VET)
    await told.wait_idle()

    asking = h.session("gateway", "laptop")
    await asking.handle(QUESTION)
    assert any("Dr Okafor" in line for line in memory_in(chat.requests[-1].system).recalled)
    assert _recall_threads() == before  # alone, by words: recalled on the loop

    # One turn held at the model (its reply would be streaming); another session's recall
    # then goes to a recall thread, found the same.
    chat.gate.clear()
    chat.entered.clear()
    held = asyncio.create_task(told.handle("Anything new?"))
    await chat.entered.wait()
    chat.entered.clear()
    beside = asyncio.create_task(asking.handle(QUESTION))
    await chat.entered.wait()  # its recall is done: it is at the model
    assert _recall_threads() - before
    assert any("Dr Okafor" in line for line in memory_in(chat.requests[-1].system).recalled)
    chat.gate.set()
    await asyncio.gather(held, beside)


async def test_a_turn_alone_that_embeds_its_question_recalls_in_a_thread(
    harness: Callable[..., Harness],
) -> None:
    pytest.importorskip("numpy")
    h = harness(**SMALL_WINDOW, memory={"user_namespace": "user", "embeddings": True})
    h.embedder = embedder = HeldEmbedder(QUESTION)
    embedder.release.set()  # not held: only where it was called from is of interest
    app = h.open()
    assert await asyncio.to_thread(app.load_embeddings)
    await h.session("telegram", "1").handle(VET)

    await h.session("gateway", "laptop").handle(QUESTION)

    # Embedded for recall in the recall worker's embedding thread (beside its recall thread),
    # never on the loop's. The stored message is embedded in the background queue's thread
    # (``flynn-embed``), which may come first.
    assert any(name.startswith("flynn-query") for name in embedder.held_in), embedder.held_in
    assert all(name.startswith(("flynn-query", "flynn-embed")) for name in embedder.held_in)
    assert threading.main_thread().name not in embedder.held_in
    assert any("Dr Okafor" in line for line in memory_in(h.chat.requests[-1].system).recalled)
