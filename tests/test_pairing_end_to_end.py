"""Pairing as people do it: a real ``flynn run`` process, Telegram through the fake Bot API, the
model through the fake OpenAI server. A stranger writes and gets a code (once, however often they
write), ``flynn users pending`` shows it, ``flynn users approve CODE --as alice`` (another process)
lets them in, and their next message is answered as alice, with alice's memory."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port, run_flynn
from fakes import FakeOpenAI, Reply
from fakes.fake_telegram import OWNER_ID, STRANGER_ID, TOKEN, FakeTelegram
from fakes.http_server import RecordedRequest

from flynn.learning.fact_relations import FactRelations
from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory
from flynn.schedule.migrations import SCHEMA

CODE = re.compile(r"works for an hour: ([A-Z0-9]{8})")


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
        "memory": {"user_namespace": "user"},
        "users": {"alice": {}, "bob": {}},
        "channels": {
            "gateway": {"host": "127.0.0.1", "port": free_port(), "token": GATEWAY_TOKEN},
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
    with SqliteMemory.open(tmp_path / "data" / "flynn.db", SCHEMA, FactRelations) as memory:
        memory.facts.add(
            NewFact("users/alice/profile", "profile", "Alice", field="name", source="rule"),
            now=datetime.now(UTC),
        )
    return path


async def test_a_stranger_pairs_and_is_answered_as_the_person(
    world: tuple[FakeOpenAI, FakeTelegram, Path],
) -> None:
    model, telegram, tmp_path = world
    config = _config(tmp_path, model, telegram)
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        telegram.queue_private("hello, may I talk to you?", user_id=STRANGER_ID, first_name="Carol")
        [offer] = await telegram.wait_for_sent(1)
        assert offer.chat_id == STRANGER_ID
        match = CODE.search(offer.text)
        assert match is not None, offer.text
        code = match.group(1)
        # Writing again gets nothing new: the owner's reply after it shows it was handled.
        telegram.queue_private("hello?? anyone?", user_id=STRANGER_ID, first_name="Carol")
        telegram.queue_private("hi", user_id=OWNER_ID)
        sent = await telegram.wait_for_sent(2)
        assert [message.chat_id for message in sent] == [STRANGER_ID, OWNER_ID]
        assert not any("may I talk" in str(request.json) for request in model.requests)

        pending = await run_flynn("users", "pending", "--config", str(config), home=tmp_path)
        assert pending.code == 0, pending.stderr
        assert code in pending.stdout and f"telegram {STRANGER_ID} (Carol)" in pending.stdout
        wrong = await run_flynn(
            "users", "approve", code, "--as", "carol", "--config", str(config), home=tmp_path
        )
        assert wrong.code == 2 and "'carol' is neither a person of users:" in wrong.stderr
        approved = await run_flynn(
            "users",
            "approve",
            code.lower(),
            "--as",
            "alice",
            "--config",
            str(config),
            home=tmp_path,
        )
        assert approved.code == 0, approved.stderr
        assert f"Let telegram account {STRANGER_ID} in as alice." in approved.stdout

        before = len(model.requests)
        telegram.queue_private("what's my name?", user_id=STRANGER_ID, first_name="Carol")
        answered = (await telegram.wait_for_sent(3))[2]
        assert (answered.chat_id, answered.text) == (STRANGER_ID, "noted")
        turn = next(r for r in model.requests[before:] if "what's my name?" in str(r.json))
        assert "name: Alice" in str(turn.json["messages"][0]["content"])
        # The code was spent.
        again = await run_flynn("users", "pending", "--config", str(config), home=tmp_path)
        assert "No pairing codes are waiting." in again.stdout
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()
