"""Attacks on recall by meaning (issue 25's work) through a running daemon: what a model that
fails mid-call, a forget racing the background catch-up, and a credential typed in a turn do
to recall and to what is stored."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakes.embedder import HashingEmbedder
from websockets.asyncio.client import connect

from evals.scripted_provider import ScriptedProvider
from flynn.daemon import Daemon
from flynn.memory.vectors import Embedder
from flynn.providers.base import TASKS, Provider, Task
from flynn.settings import EmbeddingModel, load_settings

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

TOKEN = "secret-token-for-tests"


async def _say(port: int, client: str, text: str) -> dict[str, Any]:
    """Sends ``text`` as ``client`` and returns the frame that ends the turn (``reply`` or
    ``error``)."""
    async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "token": TOKEN, "client_id": client}))
        assert json.loads(await ws.recv())["type"] == "ready"
        await ws.send(json.dumps({"type": "message", "id": "1", "text": text}))
        async with asyncio.timeout(30):
            while True:
                frame: dict[str, Any] = json.loads(await ws.recv())
                if frame["type"] in ("reply", "error"):
                    return frame


class _FailsOn(HashingEmbedder):
    """The model raising mid-call (out of memory in ONNX Runtime, say) for any text holding
    ``word``."""

    def __init__(self, word: str) -> None:
        self.word = word

    def embed(self, texts: Sequence[str]) -> Matrix:
        if any(self.word in text for text in texts):
            raise RuntimeError("onnxruntime: Failed to allocate memory")
        return super().embed(texts)


async def test_a_model_failing_on_the_question_still_answers_the_turn_by_words(
    tmp_path: Path,
) -> None:
    settings = load_settings(
        {"data_dir": str(tmp_path / "data"), "channels": {"gateway": {"port": 0, "token": TOKEN}}}
    )
    provider = ScriptedProvider(default="noted")
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
    embedder = _FailsOn("Porto?")

    def load(model: EmbeddingModel) -> Embedder:
        return embedder

    daemon = Daemon(settings, {}, providers=providers, announce=lambda _: None, embedder=load)
    stop = asyncio.Event()
    running = asyncio.create_task(daemon.run(stop))
    try:
        await asyncio.wait_for(daemon.ready.wait(), 10)
        await asyncio.wait_for(daemon.caught_up.wait(), 30)
        assert daemon.service is not None
        port = daemon.service.channels["gateway"].bound_port  # type: ignore[attr-defined]
        await _say(port, "first", "My sister Lena moved to Porto for a robotics job.")
        frame = await _say(port, "second", "Did Lena like Porto?")
        assert frame["type"] == "reply", frame
        assert "robotics" in repr(provider.requests[-1])  # recalled by words
        frame = await _say(port, "third", "Where does Lena work?")
        assert frame["type"] == "reply", frame
    finally:
        stop.set()
        assert await asyncio.wait_for(running, 10) == 0


class _Recording(HashingEmbedder):
    """Keeps every text it was asked to embed, in whatever thread."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        return super().embed(texts)


async def test_a_credential_typed_in_a_turn_is_never_embedded(tmp_path: Path) -> None:
    settings = load_settings(
        {"data_dir": str(tmp_path / "data"), "channels": {"gateway": {"port": 0, "token": TOKEN}}}
    )
    provider = ScriptedProvider(default="noted")
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
    embedder = _Recording()

    def load(model: EmbeddingModel) -> Embedder:
        return embedder

    daemon = Daemon(settings, {}, providers=providers, announce=lambda _: None, embedder=load)
    stop = asyncio.Event()
    running = asyncio.create_task(daemon.run(stop))
    try:
        await asyncio.wait_for(daemon.ready.wait(), 10)
        await asyncio.wait_for(daemon.caught_up.wait(), 30)
        assert daemon.service is not None
        port = daemon.service.channels["gateway"].bound_port  # type: ignore[attr-defined]
        await _say(port, "first", "My sister Lena moved to Porto for a robotics job.")
        frame = await _say(port, "second", "my bank password is Zq8#tLw0vRx, where is Lena?")
        assert frame["type"] == "reply", frame
        await _say(port, "third", "and what does Lena do?")  # the reply's context embedded
    finally:
        stop.set()
        assert await asyncio.wait_for(running, 10) == 0
    assert any("Lena" in text for text in embedder.texts)
    assert not [text for text in embedder.texts if "Zq8#tLw0vRx" in text]
