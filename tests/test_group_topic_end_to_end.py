"""Two people of one Telegram forum topic, neither in ``users:``, as the daemon serves them: a real
``flynn run`` process, Telegram through the fake Bot API, the model through the fake OpenAI
server. Each has a session of their own in the topic; one's many turns never hide the other's
own from their ``/search``, and nothing either said in the topic reaches the other's DM."""

from __future__ import annotations

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

from flynn.memory.store import NewMessage
from flynn.memory.stores import SqliteMemory
from flynn.messages import SessionKey
from flynn.schedule.migrations import SCHEMA

ANA_ID = 2001
BEN_ID = 2002
TOPIC = 77
ANA_TURNS = 400
"""More of Ana's turns about the ferry than ``/search`` ranks (``CANDIDATE_BUDGET``, 300)."""


def _answer(request: RecordedRequest) -> Reply:
    system = str(request.json["messages"][0]["content"])
    if "extract" in system.lower() and "json" in system.lower():
        return Reply('{"profile": [], "actions": [], "observations": []}')
    return Reply("noted")


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[FakeOpenAI, FakeTelegram, Path]]:
    async with FakeOpenAI() as model, FakeTelegram() as telegram:
        model.responder = _answer
        yield model, telegram, tmp_path


def _topic_session(sender: int) -> str:
    return str(SessionKey("telegram", str(GROUP_ID), str(TOPIC), str(sender)))


def _topic_namespace(sender: int) -> str:
    """Where the daemon keeps a topic person's session (checked against what it writes)."""
    return f"sessions/{_topic_session(sender)}"


def _config(tmp_path: Path, model: FakeOpenAI, telegram: FakeTelegram) -> Path:
    config: dict[str, Any] = {
        "data_dir": str(tmp_path / "data"),
        "llm": {
            "provider": "openai",
            "base_url": model.base_url,
            "model": "fake-model",
            "api_key": "sk-test",
            "max_retries": 0,
            "stream": False,
        },
        "memory": {"user_namespace": "user", "embeddings": False},
        "users": {"owner": {"telegram": [OWNER_ID]}},
        "channels": {
            "gateway": {"host": "127.0.0.1", "port": free_port(), "token": GATEWAY_TOKEN},
            "telegram": {
                "enabled": True,
                "token": TOKEN,
                "base_url": telegram.base_url,
                "allowed_users": [OWNER_ID, ANA_ID, BEN_ID],
            },
        },
        "logging": {"level": "info", "format": "json"},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    # What the topic held before this run: Ben's ferry, then Ana's, many times over.
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


async def test_each_person_of_a_topic_finds_their_own_turns_and_only_theirs(
    world: tuple[FakeOpenAI, FakeTelegram, Path],
) -> None:
    model, telegram, tmp_path = world
    config = _config(tmp_path, model, telegram)
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        telegram.queue_group("I take the ferry too", user_id=ANA_ID, mention=True, thread=TOPIC)
        telegram.queue_group("the ferry is late", user_id=BEN_ID, mention=True, thread=TOPIC)
        await telegram.wait_for_sent(2)
        search = f"/search@{BOT_USERNAME} ferry"
        telegram.queue_group(search, user_id=BEN_ID, thread=TOPIC)
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

    assert (in_topic.chat_id, in_topic.thread) == (GROUP_ID, TOPIC)
    assert "7:40" in in_topic.text, in_topic.text
    assert "trip" not in in_topic.text
    # A DM is a session of its own: neither finds what anyone said in the topic.
    assert (bens_dm.chat_id, anas_dm.chat_id) == (BEN_ID, ANA_ID)
    for dm in (bens_dm, anas_dm):
        assert "7:40" not in dm.text and "trip" not in dm.text and "late" not in dm.text
    assert not any("7:40" in str(r.json) for r in model.requests if "ferry too" in str(r.json))
