"""The daemon as people run it: a real ``flynn run`` process, the gateway over a real websockets
client, Telegram through the fake Bot API, the model through the fake OpenAI server, SIGTERM, and a
restart. One person's memory must follow them from the web chat to Telegram; two people of one
forum topic each find their own turns there, whatever the other says, and only theirs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port
from fakes import FakeOpenAI, Reply
from fakes.fake_telegram import BOT_USERNAME, GROUP_ID, OWNER_ID, TOKEN, FakeTelegram
from fakes.http_server import RecordedRequest
from websockets.asyncio.client import connect

from flynn.memory.store import NewMessage
from flynn.memory.stores import SqliteMemory
from flynn.messages import SessionKey
from flynn.schedule.migrations import SCHEMA

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


ANA_ID = 2001
BEN_ID = 2002
TOPIC = 77
ANA_TURNS = 400
"""More of Ana's turns about the ferry than ``/search`` ranks (``CANDIDATE_BUDGET``, 300)."""


def _topic_session(sender: int) -> str:
    return str(SessionKey("telegram", str(GROUP_ID), str(TOPIC), str(sender)))


def _topic_namespace(sender: int) -> str:
    """Where the daemon keeps a topic person's session (checked against what it writes)."""
    return f"sessions/{_topic_session(sender)}"


def _topic_config(tmp_path: Path, model: FakeOpenAI, telegram: FakeTelegram) -> Path:
    """Ana and Ben may talk to Flynn, neither is in ``users:`` (only the owner is): each has
    memory of their own session only. What the topic held before this run: Ben's ferry, then
    Ana's, many times over."""
    path, _ = _config(tmp_path, model, telegram, shared=True)
    config = yaml.safe_load(path.read_text())
    config["llm"]["context_window"] = 200_000  # Ana's 400 turns are not compacted
    config["memory"]["embeddings"] = False
    config["users"] = {"owner": {"telegram": [OWNER_ID]}}
    config["channels"]["telegram"]["allowed_users"] = [OWNER_ID, ANA_ID, BEN_ID]
    path.write_text(yaml.safe_dump(config))
    at = datetime.now(UTC) - timedelta(days=2)
    with SqliteMemory.open(tmp_path / "data" / "flynn.db", SCHEMA) as memory:
        ben = [NewMessage("user", "I take the ferry at 7:40 from Cais do Sodre", 12, at)]
        memory.history.append_many(_topic_session(BEN_ID), _topic_namespace(BEN_ID), ben)
        ana = [
            NewMessage("user", f"I take the ferry again, trip {n}", 8, at + timedelta(minutes=1))
            for n in range(ANA_TURNS)
        ]
        memory.history.append_many(_topic_session(ANA_ID), _topic_namespace(ANA_ID), ana)
    return path


async def test_each_person_of_a_forum_topic_finds_their_own_turns_and_only_theirs(
    world: tuple[FakeOpenAI, FakeTelegram, Path],
) -> None:
    model, telegram, tmp_path = world
    daemon = Daemon(_topic_config(tmp_path, model, telegram), tmp_path)
    try:
        await daemon.start()
        telegram.queue_group("I take the ferry too", user_id=ANA_ID, mention=True, thread=TOPIC)
        telegram.queue_group("the ferry is late", user_id=BEN_ID, mention=True, thread=TOPIC)
        await telegram.wait_for_sent(2)
        telegram.queue_group(f"/search@{BOT_USERNAME} ferry", user_id=BEN_ID, thread=TOPIC)
        [in_topic] = (await telegram.wait_for_sent(3))[2:]
        telegram.queue_private("/search ferry", user_id=BEN_ID)
        telegram.queue_private("/search ferry", user_id=ANA_ID)
        bens_dm, anas_dm = (await telegram.wait_for_sent(5))[3:]
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()

    with SqliteMemory.open(tmp_path / "data" / "flynn.db", SCHEMA) as memory:
        rows = memory.db.fetchall("SELECT namespace, content FROM messages WHERE role = 'user'")
    said = {str(row["content"]): str(row["namespace"]) for row in rows}
    assert said["I take the ferry too"] == _topic_namespace(ANA_ID)
    assert said["the ferry is late"] == _topic_namespace(BEN_ID)

    # Before each person of a topic was a namespace root of their own, Ana's 400 filled the
    # rows the search ranked and Ben's 7:40 was not among them.
    assert (in_topic.chat_id, in_topic.thread) == (GROUP_ID, TOPIC)
    assert "7:40" in in_topic.text, in_topic.text
    assert "trip" not in in_topic.text
    # A DM is a session of its own: neither finds what anyone said in the topic.
    assert (bens_dm.chat_id, anas_dm.chat_id) == (BEN_ID, ANA_ID)
    for dm in (bens_dm, anas_dm):
        assert "7:40" not in dm.text and "trip" not in dm.text and "late" not in dm.text
    assert not any("7:40" in str(r.json) for r in model.requests if "ferry too" in str(r.json))
