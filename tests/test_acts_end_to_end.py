"""Flynn acts, as people run it: a real ``flynn run`` process whose model (the real ``openai`` and
``anthropic`` SDKs against local fakes, streamed and not) sets a reminder through a tool; the
reminder fires once, on the chat it was set in, across a SIGTERM restart; a gateway client that
was away gets it after its next hello, exactly once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port
from fakes import FakeAnthropic, FakeModelServer, FakeOpenAI, Reply
from fakes.fake_telegram import OWNER_ID, TOKEN, FakeTelegram
from fakes.http_server import RecordedRequest
from fakes.script import ToolUse
from websockets.asyncio.client import ClientConnection, connect


def _after_tool_results(request: RecordedRequest) -> bool:
    messages = request.json.get("messages", [])
    if not messages:
        return False
    last = messages[-1]
    if last.get("role") == "tool":  # OpenAI
        return True
    content = last.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    )


def _last_user_text(request: RecordedRequest) -> str:
    for message in reversed(request.json.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return " ".join(block.get("text", "") for block in content if isinstance(block, dict))
    return ""


def _model(request: RecordedRequest) -> Reply:
    text = json.dumps(request.json)
    if "summar" in text and "conversation" in text and not request.json.get("tools"):
        return Reply("- they asked for a reminder to stretch")
    if not request.json.get("tools"):
        return Reply('{"profile": [], "actions": [], "observations": []}')
    if _after_tool_results(request):
        return Reply("Okay, I'll remind you to stretch.")
    if "remind me" in _last_user_text(request):
        return Reply(
            "",
            tool_calls=(ToolUse("reminder_set", {"text": "stretch", "in_seconds": 1}),),
        )
    return Reply("noted")


def _config(tmp_path: Path, llm: dict[str, Any], telegram: FakeTelegram | None) -> Path:
    channels: dict[str, Any] = {
        "gateway": {"host": "127.0.0.1", "port": free_port(), "token": GATEWAY_TOKEN}
    }
    if telegram is not None:
        channels["telegram"] = {
            "enabled": True,
            "token": TOKEN,
            "base_url": telegram.base_url,
            "allowed_users": [OWNER_ID],
        }
    config = {
        "data_dir": str(tmp_path / "data"),
        "llm": llm,
        "memory": {"user_namespace": "user"},
        "channels": channels,
        "logging": {"level": "info", "format": "json"},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("vendor", ["openai", "anthropic"])
async def test_a_reminder_set_by_the_model_fires_once_on_telegram_across_a_restart(
    tmp_path: Path, vendor: str
) -> None:
    server: FakeModelServer = FakeOpenAI() if vendor == "openai" else FakeAnthropic()
    async with server, FakeTelegram() as telegram:
        server.responder = _model
        llm = {
            "provider": vendor,
            "base_url": server.base_url,
            "model": "fake-model",
            "api_key": "sk-test",
            "max_retries": 0,
            # One vendor streamed, the other not: tool calls arrive both ways.
            "stream": vendor == "anthropic",
        }
        daemon = Daemon(_config(tmp_path, llm, telegram), tmp_path)
        try:
            await daemon.start()
            telegram.queue_private("remind me in a second to stretch")
            (reply,) = await telegram.wait_for_sent(1)
            assert "remind you to stretch" in reply.text
            assert await daemon.stop() == 0  # SIGTERM before (or as) it is due

            await daemon.start()
            sent = await telegram.wait_for_sent(2)
            assert len(sent) == 2
            assert sent[1].chat_id == OWNER_ID
            assert "Reminder: stretch" in sent[1].text
            assert await daemon.stop() == 0

            await daemon.start()  # a third start fires nothing again
            await daemon.wait_for("schedule.started")
            telegram.queue_private("thanks")
            sent = await telegram.wait_for_sent(3)
            assert await daemon.stop() == 0
            assert [message.text for message in sent[2:]] == ["noted"]
        finally:
            await daemon.kill()
        tool_rounds = [r for r in server.requests if _after_tool_results(r)]
        assert len(tool_rounds) == 1


async def _hello(port: int) -> ClientConnection:
    ws = await connect(f"ws://127.0.0.1:{port}/ws")
    await ws.send(json.dumps({"type": "hello", "token": GATEWAY_TOKEN, "client_id": "laptop"}))
    assert json.loads(await ws.recv())["type"] == "ready"
    return ws


async def _until(ws: ClientConnection, kind: str, frame_id: str | None = None) -> dict[str, Any]:
    async with asyncio.timeout(10):
        while True:
            frame: dict[str, Any] = json.loads(await ws.recv())
            if frame["type"] == kind and (frame_id is None or frame.get("id") == frame_id):
                return frame
            assert frame["type"] != "push" or kind == "push", f"unexpected push {frame}"


async def test_a_gateway_client_away_gets_the_push_after_its_next_hello_exactly_once(
    tmp_path: Path,
) -> None:
    # No key at all: the offline assistant sets the reminder through the same tools.
    config = _config(tmp_path, {"provider": "offline"}, None)
    port = yaml.safe_load(config.read_text())["channels"]["gateway"]["port"]
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        ws = await _hello(port)
        await ws.send(
            json.dumps({"type": "message", "id": "m1", "text": "remind me in 1 second to stretch"})
        )
        reply = await _until(ws, "reply", "m1")
        assert "Reminder set" in reply["text"]
        await ws.close()
        await daemon.wait_for("schedule.job_fired")
        await daemon.wait_for("schedule.push_deferred")

        ws = await _hello(port)  # back: the queued push comes right after ready
        push = await _until(ws, "push")
        assert (push["kind"], push["text"]) == ("reminder", "stretch")
        await ws.close()

        ws = await _hello(port)  # and only once
        await ws.send(json.dumps({"type": "command", "id": "c1", "name": "reminders"}))
        listed = await _until(ws, "reply", "c1")
        assert listed["text"] == "No reminders are set."
        await ws.close()
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()
