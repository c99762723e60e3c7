"""One picture of the person (issue 23), as people run it: a real ``flynn run`` process whose
model (the real ``openai`` and ``anthropic`` SDKs against local fakes) learns facts from one
session on the gateway; after a restart, the session start on Telegram shows them in "who you're
talking to", a model-learnt name has replaced the rule-learnt one there and in ``flynn memory
show`` (with the history kept), and two people's facts never mix."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port, run_flynn
from fakes import FakeAnthropic, FakeModelServer, FakeOpenAI, Reply
from fakes.fake_telegram import OWNER_ID, TOKEN, FakeTelegram
from fakes.http_server import RecordedRequest
from websockets.asyncio.client import ClientConnection, connect

from flynn.learning.graph_extraction import GRAPH_EXTRACTION_PROMPT
from flynn.learning.llm_extraction import EXTRACTION_PROMPT
from flynn.learning.llm_reconcile import RECONCILE_PROMPT
from flynn.sessions.prompt import PATTERNS_HEADING, PROFILE_HEADING

NOTHING = '{"profile": [], "actions": [], "observations": []}'
# What the extraction model learns from each of these (and nothing from anything else).
LEARNT = {
    "I work at Acme": json.dumps(
        {
            "profile": [{"field": "employer", "value": "Acme", "confidence": 0.9}],
            "actions": [
                {"trigger": "ship it", "action": "run the deploy checklist", "confidence": 0.9}
            ],
            "observations": [{"text": "prefers short answers", "confidence": 0.85}],
        }
    ),
    "Annie is what I go by": json.dumps(
        {"profile": [{"field": "name", "value": "Annie", "confidence": 0.95}]}
    ),
    "I work at Globex": json.dumps(
        {"profile": [{"field": "employer", "value": "Globex", "confidence": 0.9}]}
    ),
}


def _system(request: RecordedRequest) -> str:
    """The system prompt, as either vendor's request carries it."""
    system = request.json.get("system")
    if isinstance(system, list):
        return " ".join(str(block.get("text", "")) for block in system)
    if isinstance(system, str):
        return system
    messages = request.json.get("messages", [])
    if messages and messages[0].get("role") == "system":
        return str(messages[0]["content"])
    return ""


class Model:
    """Facts to extraction (``LEARNT``), UPDATE to reconciliation, "noted" to a turn."""

    def __init__(self, server: FakeModelServer) -> None:
        self.server = server
        self.reconciled: list[str] = []
        server.responder = self.answer

    def answer(self, request: RecordedRequest) -> Reply:
        system = _system(request)
        said = self.server.last_user_text(request)
        if system.startswith(EXTRACTION_PROMPT[:60]):
            learnt = [facts for words, facts in LEARNT.items() if words in said]
            return Reply(learnt[0] if learnt else NOTHING)
        if system.startswith(GRAPH_EXTRACTION_PROMPT[:60]):
            return Reply('{"entities": [], "relations": []}')
        if system.startswith(RECONCILE_PROMPT[:60]):
            self.reconciled.append(said)
            return Reply('{"action": "UPDATE", "candidate": 1}')
        return Reply("noted")

    def turn_saying(self, text: str) -> RecordedRequest:
        found = [
            r
            for r in self.server.requests
            if self.server.last_user_text(r) == text and PROFILE_HEADING in _system(r)
        ]
        assert len(found) == 1, [self.server.last_user_text(r) for r in self.server.requests]
        return found[0]


@asynccontextmanager
async def _page(port: int, client_id: str, token: str) -> AsyncIterator[ClientConnection]:
    async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "token": token, "client_id": client_id}))
        assert json.loads(await ws.recv())["type"] == "ready"
        yield ws


async def _say(ws: ClientConnection, daemon: Daemon, text: str) -> None:
    """Says ``text``, waits for the reply, then for the background learning it starts."""
    frame_id = uuid.uuid4().hex
    await ws.send(json.dumps({"type": "message", "id": frame_id, "text": text}))
    while True:
        frame: dict[str, Any] = json.loads(await ws.recv())
        assert frame["type"] != "error", frame
        if frame["type"] == "reply" and frame.get("id") == frame_id:
            break
    await daemon.wait_for("learning.completed")


def _config(tmp_path: Path, server: FakeModelServer, telegram: FakeTelegram) -> tuple[Path, int]:
    port = free_port()
    config = {
        "data_dir": str(tmp_path / "data"),
        "llm": {
            "provider": "anthropic" if isinstance(server, FakeAnthropic) else "openai",
            "base_url": server.base_url,
            "model": "fake-model",
            "api_key": "sk-test",
            "max_retries": 0,
            "stream": False,
        },
        # Learning after every message of the person's, so each batch is one message.
        "memory": {"extract_every_turns": 1},
        "users": {"ana": {"telegram": [OWNER_ID]}, "bob": {"telegram": [OWNER_ID + 1]}},
        "channels": {
            "gateway": {"host": "127.0.0.1", "port": port, "token": GATEWAY_TOKEN},
            "telegram": {
                "enabled": True,
                "token": TOKEN,
                "base_url": telegram.base_url,
                "allowed_users": [OWNER_ID, OWNER_ID + 1],
            },
        },
        "logging": {"level": "info", "format": "json"},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, port


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
async def test_what_the_model_learnt_on_the_web_is_who_they_are_on_telegram_after_a_restart(
    tmp_path: Path, vendor: str
) -> None:
    server: FakeModelServer = FakeOpenAI() if vendor == "openai" else FakeAnthropic()
    async with server, FakeTelegram() as telegram:
        model = Model(server)
        config, port = _config(tmp_path, server, telegram)
        tokens = {}
        for name in ("ana", "bob"):
            made = await run_flynn("users", "token", name, "--config", str(config), home=tmp_path)
            assert made.code == 0, made.stderr
            tokens[name] = made.stdout.strip()
        daemon = Daemon(config, tmp_path)
        try:
            await daemon.start()
            async with (
                _page(port, "laptop", tokens["ana"]) as ana,
                _page(port, "laptop", tokens["bob"]) as bob,
            ):
                await _say(ana, daemon, "Hi! My name is Ana.")  # a rule learns the name
                await _say(ana, daemon, "I work at Acme, by the way.")
                await _say(bob, daemon, "I work at Globex.")
                await _say(ana, daemon, "Annie is what I go by these days.")
            assert await daemon.stop() == 0

            await daemon.start()  # a new process; Telegram is a new session for both
            telegram.queue_private("good morning")
            telegram.queue_private("morning!", user_id=OWNER_ID + 1)
            await telegram.wait_for_sent(2)
            assert await daemon.stop() == 0
        finally:
            await daemon.kill()

    # The model was asked to weigh its name against the rule's (and said UPDATE).
    assert any("name: Annie" in said and "name: Ana" in said for said in model.reconciled)

    ana_start = _system(model.turn_saying("good morning"))
    who = ana_start.split(PROFILE_HEADING, 1)[1]
    profile, patterns = who.split(PATTERNS_HEADING, 1)
    assert "- name: Annie" in profile
    assert "name: Ana\n" not in who
    # Identity first (name, then work), then preferences, then the model's patterns.
    order = [profile.index(line) for line in ("name: Annie", "employer: Acme", "prefers short")]
    assert order == sorted(order)
    assert "- when they say 'ship it': run the deploy checklist" in patterns
    assert "Globex" not in ana_start

    bob_start = _system(model.turn_saying("morning!"))
    assert "- employer: Globex" in bob_start.split(PROFILE_HEADING, 1)[1]
    for hers in ("Annie", "Acme", "short answers", "ship it"):
        assert hers not in bob_start

    shown = await run_flynn(
        "memory", "show", "--user", "ana", "--config", str(config), home=tmp_path
    )
    assert shown.code == 0, shown.stderr
    assert "name: Annie  (llm" in shown.stdout
    assert "name: Ana " not in shown.stdout
    assert "employer: Acme  (llm" in shown.stdout
    assert "Globex" not in shown.stdout
    history = await run_flynn(
        "memory", "show", "--user", "ana", "--history", "name", "--config", str(config),
        home=tmp_path,
    )  # fmt: skip
    assert history.code == 0, history.stderr
    lines = history.stdout.splitlines()
    ana_at = next(i for i, line in enumerate(lines) if line.endswith("] Ana"))
    annie_at = next(i for i, line in enumerate(lines) if line.endswith("] Annie"))
    assert ana_at < annie_at
    assert lines[ana_at + 1].strip().startswith("superseded, rule,")
    assert lines[annie_at + 1].strip().startswith("active, llm,")
    assert "replaces [" in lines[annie_at + 1]
