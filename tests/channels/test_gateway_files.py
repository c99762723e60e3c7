"""Files through the web page's protocol: a ``message`` frame's ``attachments`` are decoded
within the cap, and a text document sent that way reaches the model (the real ``anthropic`` SDK
against its fake) with its credentials redacted, is kept, and ``file_read`` reads it later."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from fakes import FakeAnthropic, Reply
from fakes.http_server import RecordedRequest
from fakes.script import ToolUse
from gateway_harness import final_answer, running_daemon
from websockets.asyncio.client import connect

from flynn.channels.gateway.protocol import ClientText, Rejected, parse_frame
from flynn.messages import Attachment
from flynn.settings import load_settings

TOKEN = "web-files-token-for-tests"
NOTES = "Boiler service: 14 March.\nWi-Fi password: hunter2-Sesame-41\nPressure 1.5 bar.\n"


def _frame(text: str | None, *attachments: dict[str, str]) -> str:
    frame: dict[str, Any] = {"type": "message", "id": "m1", "attachments": list(attachments)}
    if text is not None:
        frame["text"] = text
    return json.dumps(frame)


def _file(name: str, media_type: str, data: bytes) -> dict[str, str]:
    return {"name": name, "type": media_type, "data": base64.b64encode(data).decode()}


def test_a_message_frame_carries_decoded_attachments() -> None:
    frame = parse_frame(
        _frame(None, _file("a.txt", "text/plain", b"hello")), 1024, attachment_bytes=2048
    )
    assert frame == ClientText(
        "m1", "", None, (Attachment("a.txt", "text/plain", b"hello", "document"),)
    )


def test_attachments_over_the_cap_or_not_base64_or_not_taken_are_refused() -> None:
    big = _frame("hi", _file("a.bin", "application/octet-stream", b"x" * 3000))
    refused = parse_frame(big, 1024, attachment_bytes=2048)
    assert isinstance(refused, Rejected) and refused.code == "too_large"
    bad = _frame("hi", {"name": "a.txt", "type": "text/plain", "data": "not base64!"})
    assert parse_frame(bad, 1024, attachment_bytes=2048) == Rejected(
        "bad_request", "An attachment's data must be base64.", "m1"
    )
    small = _frame("hi", _file("a.txt", "text/plain", b"x"))
    assert parse_frame(small, 1024) == Rejected(
        "bad_request", "This gateway takes no attachments.", "m1"
    )
    # Without attachments, a long frame is still too large.
    long_text = json.dumps({"type": "message", "id": "m1", "text": "x" * 2000})
    long = parse_frame(long_text, 1024, attachment_bytes=4096)
    assert isinstance(long, Rejected) and long.code == "too_large"


def _tool_result(request: RecordedRequest) -> str | None:
    content = request.json["messages"][-1]["content"]
    if isinstance(content, list):
        for block in content:
            if block.get("type") == "tool_result":
                return str(block["content"])
    return None


async def test_a_text_file_from_the_web_page_reaches_the_model_redacted_and_is_kept(
    tmp_path: Path,
) -> None:
    results: list[str] = []

    def respond(request: RecordedRequest) -> Reply:
        if not request.json.get("tools"):
            return Reply('{"profile": [], "actions": [], "observations": []}')
        result = _tool_result(request)
        if result is not None:
            results.append(result)
            return Reply("Read it again.")
        if "again" in model.last_user_text(request):
            return Reply("", tool_calls=(ToolUse("file_read", {"name": "notes.txt"}),))
        return Reply("Your boiler was serviced on 14 March.")

    async with FakeAnthropic() as model:
        model.responder = respond
        settings = load_settings(
            {
                "data_dir": str(tmp_path / "data"),
                "llm": {
                    "provider": "anthropic",
                    "base_url": model.root_url,
                    "api_key": "sk-ant-test-key",
                    "model": "claude-test",
                    "stream": False,
                },
                "memory": {"auto_extract": False},
                "channels": {"gateway": {"host": "127.0.0.1", "port": 0, "token": TOKEN}},
            }
        )
        async with running_daemon(settings) as port:
            async with connect(f"ws://127.0.0.1:{port}/ws", max_size=None) as ws:
                await ws.send(json.dumps({"type": "hello", "token": TOKEN, "client_id": "ada"}))
                assert json.loads(await ws.recv())["type"] == "ready"
                notes = _file("notes.txt", "text/plain", NOTES.encode())
                frame = json.loads(_frame("when was it serviced?", notes))
                answer = await final_answer(ws, frame)
                again = {"type": "message", "id": "m2", "text": "read the notes again"}
                second = await final_answer(ws, again)
            asked = next(r for r in model.requests if r.json.get("tools"))
    said = model.last_user_text(asked)
    assert said.startswith("[document: notes.txt] when was it serviced?")
    assert "Boiler service: 14 March." in said and "Pressure 1.5 bar." in said
    assert "hunter2-Sesame-41" not in json.dumps(asked.json)
    assert answer["text"].startswith("Your boiler was serviced on 14 March.")
    assert "I removed 1 password or key from notes.txt" in answer["text"]
    kept = tmp_path / "data" / "user" / "files" / "notes.txt"
    assert "hunter2" not in kept.read_text() and "Pressure 1.5 bar." in kept.read_text()
    assert kept.stat().st_mode & 0o777 == 0o600
    assert second["text"] == "Read it again."
    (result,) = results
    assert "Boiler service: 14 March." in result and "hunter2" not in result
