"""``/tier`` and ``/help`` as people use them: the daemon in-process, a real websockets client on
its gateway sending ``command`` frames, and the model through the real ``openai`` SDK against the
fake OpenAI server, whose recorded requests show what the system prompt loaded."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fakes import FakeOpenAI, RecordedRequest, Reply
from gateway_harness import TOKEN, final_answer, running_daemon
from websockets.asyncio.client import connect

from flynn.settings import load_settings

_NOTHING_LEARNT = '{"profile": [], "actions": [], "observations": []}'


def _answer(request: RecordedRequest) -> Reply:
    if not request.json.get("tools"):
        return Reply(_NOTHING_LEARNT)  # background learning: nothing to learn here
    return Reply("noted")


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[FakeOpenAI, int]]:
    """The daemon on the fake OpenAI server, with a HELP.md and the owner's scratchpad; yields
    the server and the gateway's port."""
    data = tmp_path / "data"
    persona = data / "persona" / "flynn"
    persona.mkdir(parents=True)
    (persona / "HELP.md").write_text("Ask me about the garden.", encoding="utf-8")
    (data / "user").mkdir(parents=True)
    (data / "user" / "SCRATCH.md").write_text("plan: the kiln at ten", encoding="utf-8")
    async with FakeOpenAI() as model:
        model.responder = _answer
        settings = load_settings(
            {
                "data_dir": str(data),
                "llm": {
                    "provider": "openai",
                    "base_url": model.base_url,
                    "model": "fake-model",
                    "api_key": "sk-test",
                    "max_retries": 0,
                },
                "memory": {"user_namespace": "user"},
                "channels": {"gateway": {"host": "127.0.0.1", "port": 0, "token": TOKEN}},
            },
            env={},
        )
        async with running_daemon(settings) as port:
            yield model, port


def system_prompt(model: FakeOpenAI) -> str:
    asked = [r for r in model.requests if r.json.get("tools")]
    first = asked[-1].json["messages"][0]
    assert first["role"] == "system"
    content = first["content"]
    assert isinstance(content, str)
    return content


async def test_tier_and_help_through_the_gateway(world: tuple[FakeOpenAI, int]) -> None:
    model, port = world
    async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "token": TOKEN, "client_id": "laptop"}))
        assert json.loads(await ws.recv())["type"] == "ready"

        help_reply = await final_answer(ws, {"type": "command", "id": "h", "name": "help"})
        assert help_reply["text"].startswith("Ask me about the garden.\n\nCommands:\n")
        assert "/tier [N]" in help_reply["text"]

        said = await final_answer(ws, {"type": "message", "id": "1", "text": "hello"})
        assert said["type"] == "reply"
        assert "plan: the kiln at ten" not in system_prompt(model)  # tier 2, the default

        chosen = await final_answer(ws, {"type": "command", "id": "t", "name": "tier", "arg": "4"})
        assert chosen["type"] == "reply", chosen
        assert chosen["text"].startswith("Context tier 4 from your next message")
        await final_answer(ws, {"type": "message", "id": "2", "text": "what was the plan?"})
        assert "--- SCRATCH.md ---\nplan: the kiln at ten" in system_prompt(model)

        # The same as a typed text, as Telegram and Discord send it.
        listing = await final_answer(ws, {"type": "message", "id": "3", "text": "/tier"})
        assert "Context tier: 4 (chosen for this conversation)" in listing["text"]

        await final_answer(ws, {"type": "command", "id": "n", "name": "new"})
        await final_answer(ws, {"type": "message", "id": "4", "text": "and now?"})
        assert "plan: the kiln at ten" not in system_prompt(model)
