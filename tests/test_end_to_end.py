"""The daemon as people run it: a real ``flynn run`` process, the gateway over a real websockets
client, Telegram through the fake Bot API, the model through the fake OpenAI server, SIGTERM, and a
restart. One person's memory must follow them from the web chat to Telegram."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port
from fakes import FakeOpenAI, Reply
from fakes.fake_telegram import OWNER_ID, TOKEN, FakeTelegram
from fakes.http_server import RecordedRequest
from websockets.asyncio.client import connect

SUMMARY = "- Ana is migrating the billing service to Postgres; next step: cut over on Friday"
FILLER = "We keep the old billing API stable while the Postgres migration runs in batches. " * 12


def _system(request: RecordedRequest) -> str:
    messages = request.json.get("messages", [])
    return str(messages[0]["content"]) if messages and messages[0]["role"] == "system" else ""


def _answer(request: RecordedRequest) -> Reply:
    system = _system(request)
    if "summarising a conversation" in system or "conversation summarizer" in system:
        return Reply(SUMMARY)
    if "extract" in system.lower() and "json" in system.lower():
        return Reply('{"profile": [], "actions": [], "observations": []}')
    return Reply("noted")


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[FakeOpenAI, FakeTelegram, Path]]:
    async with FakeOpenAI() as model, FakeTelegram() as telegram:
        model.responder = _answer
        yield model, telegram, tmp_path


def _config(
    tmp_path: Path, model: FakeOpenAI, telegram: FakeTelegram, *, shared: bool
) -> tuple[Path, int]:
    port = free_port()
    config: dict[str, Any] = {
        "data_dir": str(tmp_path / "data"),
        "llm": {
            "provider": "openai",
            "base_url": model.base_url,
            "model": "fake-model",
            "api_key": "sk-test",
            "context_window": 2048,
            "max_retries": 0,
            "stream": False,
        },
        "compaction": {"reserve_tokens": 512, "keep_recent_tokens": 200},
        "memory": {"user_namespace": "user" if shared else None},
        "channels": {
            "gateway": {"host": "127.0.0.1", "port": port, "token": GATEWAY_TOKEN},
            "telegram": {
                "enabled": True,
                "token": TOKEN,
                "base_url": telegram.base_url,
                "allowed_users": [OWNER_ID],
            },
        },
        "logging": {"level": "info", "format": "json"},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, port


async def _talk_on_the_web(port: int, model: FakeOpenAI) -> None:
    async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "token": GATEWAY_TOKEN, "client_id": "laptop"}))
        assert json.loads(await ws.recv())["type"] == "ready"

        async def say(text: str, frame_id: str) -> None:
            await ws.send(json.dumps({"type": "message", "id": frame_id, "text": text}))
            async with asyncio.timeout(10):
                while True:
                    frame = json.loads(await ws.recv())
                    if frame.get("id") == frame_id and frame["type"] in ("reply", "error"):
                        assert frame["type"] == "reply", frame
                        return

        await say("My name is Ana.", "m0")
        for index in range(1, 16):
            await say(f"Step {index}: {FILLER}", f"m{index}")
            if any(
                "summarising a conversation" in _system(r) or "summarizer" in _system(r)
                for r in model.requests
            ):
                break
        else:
            raise AssertionError("compaction never happened")


async def _first_telegram_prompt(telegram: FakeTelegram, model: FakeOpenAI) -> str:
    before = len(model.requests)
    telegram.queue_private("hi, it's me on my phone")
    await telegram.wait_for_sent(1)
    chats = [r for r in model.requests[before:] if "summar" not in _system(r)]
    assert chats, "the Telegram turn never reached the model"
    return _system(chats[0])


@pytest.mark.parametrize("shared", [True, False], ids=["user_namespace", "session_scoped"])
async def test_memory_follows_the_person_from_web_chat_to_telegram_across_a_restart(
    world: tuple[FakeOpenAI, FakeTelegram, Path], shared: bool
) -> None:
    model, telegram, tmp_path = world
    config, port = _config(tmp_path, model, telegram, shared=shared)
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        await _talk_on_the_web(port, model)
        assert await daemon.stop() == 0

        await daemon.start()  # a new process: nothing survives but the data dir
        system = await _first_telegram_prompt(telegram, model)
        await daemon.stop()
    finally:
        await daemon.kill()

    if shared:
        assert "--- Who you're talking to ---" in system
        assert "name: Ana" in system
        assert "--- Recent context ---" in system
        assert "cut over on Friday" in system
    else:
        assert "--- Who you're talking to ---" not in system
        assert "--- Recent context ---" not in system
        assert "Ana" not in system
