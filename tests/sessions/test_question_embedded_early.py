"""A turn starts its question's embedding as its message is final, before the turn stores it
(``TurnPreparation.embed_early``): after the credential gate, so a secret typed in passing is
never embedded, and once, so the recall uses that embedding instead of making another."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pytest
from conftest import SMALL_WINDOW, Harness
from fakes.embedder import RecordingEmbedder

from flynn.providers.offline import memory_in

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

VET = "The vet for our cat Mochi is Dr Okafor, her clinic is in Alfama."
SECRET = "Zq8#tLw0vRx"


class _ThreadRecordingEmbedder(RecordingEmbedder):
    """Also keeps which thread asked for each text."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, str]] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.asked.extend((threading.current_thread().name, text) for text in texts)
        return super().embed(texts)


async def test_a_question_with_a_secret_is_embedded_once_and_only_as_redacted(
    harness: Callable[..., Harness],
) -> None:
    pytest.importorskip("numpy")
    h = harness(**SMALL_WINDOW, memory={"user_namespace": "user", "embeddings": True})
    h.embedder = embedder = _ThreadRecordingEmbedder()
    app = h.open()
    assert await asyncio.to_thread(app.load_embeddings)
    told = h.session("telegram", "1")
    await told.handle(VET)
    await told.wait_idle()

    asking = h.session("gateway", "laptop")
    await asking.handle(f"my bank password is {SECRET}, and who is the vet for Mochi?")
    await asking.wait_idle()

    assert not [text for text in embedder.texts if SECRET in text]
    asked = [text for thread, text in embedder.asked if thread.startswith("flynn-query")]
    # The redacted question and its topic (without the name), each embedded once: the early
    # embedding is the one recall used, not one of two.
    mine = [text for text in asked if "password" in text]
    assert sorted(mine) == [
        "my bank password is [secret removed], and who is the vet for Mochi?",
        "my bank password is [secret removed], and who is the vet for?",
    ], asked
    assert any("Dr Okafor" in line for line in memory_in(h.chat.requests[-1].system).recalled)
