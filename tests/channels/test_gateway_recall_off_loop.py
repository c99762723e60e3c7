"""Recall runs off the event loop: the daemon in-process, two real websockets clients on its
gateway, the model streaming through the real ``openai`` SDK from the fake OpenAI server. While
one session's recall is held in the recall worker (at its question's embedding), the other's
reply keeps streaming."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeOpenAI, RecordedRequest, Reply
from fakes.embedder import HeldEmbedder
from gateway_harness import TOKEN, gateway_port, serving_daemon
from websockets.asyncio.client import ClientConnection, connect

from flynn.daemon import Daemon
from flynn.settings import load_settings

pytest.importorskip("numpy")

_NOTHING_LEARNT = '{"profile": [], "actions": [], "observations": []}'


@contextlib.asynccontextmanager
async def _released(embedder: HeldEmbedder, stream: asyncio.Event) -> AsyncIterator[None]:
    """Whatever the test asserted, nothing stays held when the daemon stops."""
    try:
        yield
    finally:
        embedder.release.set()
        stream.set()


async def _hello(ws: ClientConnection, client_id: str) -> None:
    await ws.send(json.dumps({"type": "hello", "token": TOKEN, "client_id": client_id}))
    assert json.loads(await ws.recv())["type"] == "ready"


async def _frame(ws: ClientConnection) -> dict[str, Any]:
    async with asyncio.timeout(10):
        frame = json.loads(await ws.recv())
    assert isinstance(frame, dict)
    return frame


async def test_a_stream_keeps_flowing_while_another_session_recalls(tmp_path: Path) -> None:
    rest_of_stream = asyncio.Event()
    embedder = HeldEmbedder("ponder")

    def answer(request: RecordedRequest) -> Reply:
        if not request.json.get("tools"):
            return Reply(_NOTHING_LEARNT)  # background learning: nothing to learn here
        if "stream" in model.last_user_text(request):
            return Reply("one two three four", chunks=4, hold=rest_of_stream)
        return Reply("pondered")

    async with FakeOpenAI() as model:
        model.responder = answer
        settings = load_settings(
            {
                "data_dir": str(tmp_path / "data"),
                "llm": {
                    "provider": "openai",
                    "base_url": model.base_url,
                    "model": "fake-model",
                    "api_key": "sk-test",
                    "max_retries": 0,
                },
                "memory": {"user_namespace": "user", "embeddings": True},
                "channels": {"gateway": {"host": "127.0.0.1", "port": 0, "token": TOKEN}},
            },
            env={},
        )
        daemon = Daemon(settings, {}, announce=lambda line: None, embedder=lambda _: embedder)
        async with serving_daemon(daemon), _released(embedder, rest_of_stream):
            # The model loads in a thread once the daemon serves: recall uses it from then on.
            await asyncio.wait_for(daemon.caught_up.wait(), 10)
            url = f"ws://127.0.0.1:{gateway_port(daemon)}/ws"
            async with connect(url) as streaming, connect(url) as pondering:
                await _hello(streaming, "laptop")
                await _hello(pondering, "phone")
                # A turn first, so that the next message is stored (and embedded, in the
                # background) after it: only the question is embedded alone.
                await pondering.send(json.dumps({"type": "message", "id": "h", "text": "hello"}))
                while (frame := await _frame(pondering))["type"] == "delta":
                    pass
                assert frame["type"] == "reply"
                await streaming.send(json.dumps({"type": "message", "id": "s", "text": "stream"}))
                first = await _frame(streaming)
                assert first["type"] == "delta" and "one two three four".startswith(first["text"])

                # The other session's recall is held in the worker at the question's embedding
                # (in the embedding thread beside its recall thread).
                await pondering.send(json.dumps({"type": "message", "id": "p", "text": "ponder"}))
                assert await asyncio.to_thread(embedder.holding.wait, 10)
                assert embedder.held_in in (["flynn-query_0"], ["flynn-query_1"])

                rest_of_stream.set()
                pieces = [first]
                while pieces[-1]["type"] == "delta":
                    pieces.append(await _frame(streaming))
                assert len(pieces) > 2  # pieces kept coming, not only the whole reply
                assert pieces[-1]["type"] == "reply"
                assert pieces[-1]["text"] == "one two three four"
                # Still held: nothing of that session reached the model yet.
                assert not embedder.release.is_set()
                assert not any("ponder" in model.last_user_text(r) for r in model.requests)

                embedder.release.set()
                while (frame := await _frame(pondering))["type"] == "delta":
                    pass
                assert frame["type"] == "reply" and frame["text"] == "pondered"
