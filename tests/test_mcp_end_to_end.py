"""Tools from an MCP server as people run them: a real ``flynn run`` starts the server written
here (stdio), the model (the real ``openai`` SDK against the fake server) calls its tool over a
gateway conversation, the result comes back to the model, and the reply to the person."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port
from fakes import FakeOpenAI, Reply
from fakes.http_server import RecordedRequest
from fakes.script import ToolUse
from websockets.asyncio.client import connect

SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("calendar")


@server.tool()
def next_event(person: str) -> str:
    """The person's next event."""
    return f"{person}: dentist on Tuesday at 09:30"


server.run()
'''


def _tool_results(request: RecordedRequest) -> list[str]:
    return [m["content"] for m in request.json.get("messages", []) if m.get("role") == "tool"]


def _model(request: RecordedRequest) -> Reply:
    if not request.json.get("tools"):
        return Reply('{"profile": [], "actions": [], "observations": []}')
    results = _tool_results(request)
    if results:
        return Reply("Your next event: " + results[-1].split("dentist", 1)[-1].strip())
    return Reply("", tool_calls=(ToolUse("calendar__next_event", {"person": "Ana"}),))


async def test_the_daemon_starts_the_server_and_the_model_calls_its_tool(tmp_path: Path) -> None:
    script = tmp_path / "calendar_server.py"
    script.write_text(SERVER)
    port = free_port()
    async with FakeOpenAI() as model:
        model.responder = _model
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
            "memory": {"user_namespace": "user", "auto_extract": False},
            "tools": {
                "mcp_servers": {
                    "calendar": {"command": sys.executable, "args": [str(script)]},
                }
            },
            "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": GATEWAY_TOKEN}},
            "logging": {"level": "info", "format": "json"},
        }
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        daemon = Daemon(path, tmp_path)
        try:
            await daemon.start()
            await daemon.wait_for("mcp.server_up")
            async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
                hello = {"type": "hello", "token": GATEWAY_TOKEN, "client_id": "laptop"}
                await ws.send(json.dumps(hello))
                assert json.loads(await ws.recv())["type"] == "ready"
                ask = {"type": "message", "id": "m1", "text": "what is my next event?"}
                await ws.send(json.dumps(ask))
                async with asyncio.timeout(20):
                    while (frame := json.loads(await ws.recv()))["type"] != "reply":
                        pass
            assert await daemon.stop() == 0
        finally:
            await daemon.kill()
    assert frame["text"] == "Your next event: on Tuesday at 09:30"
    offered = {tool["function"]["name"] for tool in model.requests[0].json["tools"]}
    assert "calendar__next_event" in offered and "remember" in offered
    results = [text for request in model.requests for text in _tool_results(request)]
    assert any("Ana: dentist on Tuesday at 09:30" in text for text in results)
