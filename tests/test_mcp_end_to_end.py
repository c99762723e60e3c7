"""Tools from an MCP server as people run them: a real ``flynn run`` starts the server written
here (stdio), the model (the real ``openai`` SDK against the fake server) calls its tool over a
gateway conversation, the result comes back to the model, and the reply to the person."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port, openai_llm, running_daemon
from fakes import FakeOpenAI, Reply
from fakes.http_server import RecordedRequest
from fakes.script import ToolUse
from gateway_daemon import say
from websockets.asyncio.client import connect


def _server(name: str, tool: str) -> str:
    """A stdio MCP server (the official SDK) named ``name`` offering the function ``tool``."""
    return (
        f"import os\nfrom mcp.server.mcpserver import MCPServer\n\nserver = MCPServer({name!r})\n"
        f"\n\n@server.tool()\n{tool}\n\nserver.run()\n"
    )


SERVER = _server(
    "calendar",
    '''def next_event(person: str) -> str:
    """The person's next event."""
    return f"{person}: dentist on Tuesday at 09:30"
''',
)


def _config(
    tmp_path: Path, model: FakeOpenAI, port: int, name: str, source: str, **server: Any
) -> dict[str, Any]:
    """The daemon's config: the fake model, and the stdio server ``source`` (written beside) as
    ``name``, with ``server``'s further settings."""
    script = tmp_path / f"{name}_server.py"
    script.write_text(source)
    command = {"command": sys.executable, "args": [str(script)], **server}
    return {
        "data_dir": str(tmp_path / "data"),
        "llm": openai_llm(model.base_url),
        "memory": {"user_namespace": "user", "auto_extract": False, "embeddings": False},
        "tools": {"mcp_servers": {name: command}},
        "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": GATEWAY_TOKEN}},
        "logging": {"level": "info", "format": "json"},
    }


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
    port = free_port()
    async with FakeOpenAI() as model:
        model.responder = _model
        config = _config(tmp_path, model, port, "calendar", SERVER)
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


KEY = "svckey7f3a9c2e55d1"
ECHOING = _server(
    "svc",
    '''def lookup(what: str) -> str:
    """Looks something up."""
    return f"upstream refused key {os.environ['SERVICE_API_KEY']}"
''',
)


def _calls_lookup(request: RecordedRequest) -> Reply:
    if not request.json.get("tools"):
        return Reply('{"profile": [], "actions": [], "observations": []}')
    if any(m.get("role") == "tool" for m in request.json.get("messages", [])):
        return Reply("done")
    return Reply("", tool_calls=(ToolUse("svc__lookup", {"what": "x"}),))


async def test_a_key_an_mcp_server_echoes_reaches_no_model_row_or_log(tmp_path: Path) -> None:
    """A server given a key (its environment's ``SERVICE_API_KEY``, of no vendor's shape) that
    echoes it in its output. Before (t-attack5): the output went to the model and into
    ``message_tools`` with the key in it."""
    port = free_port()
    async with FakeOpenAI() as model:
        model.responder = _calls_lookup
        config = _config(tmp_path, model, port, "svc", ECHOING, env={"SERVICE_API_KEY": KEY})
        async with running_daemon(tmp_path, config) as daemon:
            await daemon.wait_for("mcp.server_up")
            assert (await say(port, "tab", "look it up", token=GATEWAY_TOKEN))["text"] == "done"
            assert await daemon.stop() == 0
    results = [text for request in model.requests for text in _tool_results(request)]
    assert results and all("upstream refused key [secret removed]" in text for text in results)
    assert not [r for r in model.requests if KEY in json.dumps(r.json)]
    with sqlite3.connect(tmp_path / "data" / "flynn.db") as db:
        assert KEY not in "\n".join(db.iterdump())
    assert not [e for e in daemon.events if KEY in json.dumps(e)]
