"""Nothing accepted is lost, for pictures and files: a photo accepted before a crash cut its turn
off is kept in the person's folder at intake, and the turn replayed after the restart shows it
to the model (the real ``openai`` SDK against its local fake), keeps it once and stores the
turn once; a file forgotten meanwhile is answered without, saying so."""

from __future__ import annotations

import base64
from dataclasses import replace
from pathlib import Path
from typing import Any

from fakes import FakeOpenAI, Reply
from fakes.channel import RecordingChannel
from fakes.gated_provider import GatedProvider
from fakes.http_server import RecordedRequest

from flynn.app import App
from flynn.attachments import forget_files
from flynn.messages import Attachment, OutboundMessage
from flynn.providers.base import TASKS, Provider, Task
from flynn.router import Router
from flynn.settings import load_settings

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
NOTHING_LEARNT = '{"profile": [], "actions": [], "observations": []}'


def _settings(tmp_path: Path, llm: dict[str, Any]) -> Any:
    return load_settings(
        {"data_dir": str(tmp_path / "data"), "llm": {"stream": False, "vision": "on", **llm}}
    )


def _router(app: App, channel: RecordingChannel) -> Router:
    return Router(
        app.sessions,
        {"gateway": channel},
        app.identity,
        app.memory.inbound,
        clock=app.services.clock,
    )


async def _crash_during_the_turn(tmp_path: Path, channel: RecordingChannel) -> Path:
    """Accepts a photo, holds its turn at the model, and cuts it off (a drain that gives up, as
    a kill does); returns the person's files folder."""
    provider = GatedProvider()
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
    app = App.open(_settings(tmp_path, {}), {}, providers=providers)
    router = _router(app, channel)
    photo = Attachment("boiler.png", "image/png", PNG, kind="photo")
    message = replace(channel.inbound("what pressure?", message_id="p1"), attachments=(photo,))
    await router.on_message(message)
    await provider.entered.wait()
    # The channel redelivers it while its turn runs: joined, its file not kept again.
    await router.on_message(message)
    router.close_intake()
    await router.drain(0)
    await app.aclose()
    return app.settings.data_dir / "user" / "files"


def _answer(request: RecordedRequest) -> Reply:
    if not request.json.get("tools"):
        return Reply(NOTHING_LEARNT)
    return Reply("It says 1.5 bar.")


async def _restart_and_replay(tmp_path: Path) -> tuple[OutboundMessage, RecordedRequest, Any]:
    """The restart: the same data, a model behind the real ``openai`` SDK; replays what the
    crash left and returns the reply, the model's chat request and the stored turns."""
    async with FakeOpenAI() as model:
        model.responder = _answer
        llm = {"provider": "openai", "base_url": model.base_url, "api_key": "sk-test-openai-key"}
        app = App.open(_settings(tmp_path, {**llm, "model": "gpt-test"}), {})
        channel = RecordingChannel()  # the restarted daemon's; the first got "restarting"
        router = _router(app, channel)
        try:
            assert await router.replay() == 1
            reply = await channel.reply()
            await router.quiet.wait()
            stored = app.memory.history.recent("gateway:c1")
        finally:
            router.close_intake()
            await router.drain(5)
            await app.aclose()
    (request,) = [r for r in model.requests if r.json.get("tools")]
    return reply, request, stored


async def test_a_photo_accepted_before_a_crash_reaches_the_model_after_the_restart(
    tmp_path: Path,
) -> None:
    channel = RecordingChannel()
    files = await _crash_during_the_turn(tmp_path, channel)
    assert [p.name for p in files.iterdir()] == ["boiler.png"]

    reply, request, stored = await _restart_and_replay(tmp_path)
    assert (reply.reply_to, reply.text) == ("p1", "It says 1.5 bar.")
    parts = [m for m in request.json["messages"] if m["role"] == "user"][-1]["content"]
    assert {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
    } in parts
    assert [p.name for p in files.iterdir()] == ["boiler.png"]  # kept once
    assert (files / "boiler.png").read_bytes() == PNG
    # The turn the crash cut off had stored the message: the replay goes on from it.
    assert [m.content for m in stored if m.role == "user"] == ["[photo: boiler.png] what pressure?"]


async def test_a_replayed_photo_forgotten_meanwhile_is_answered_without_it(
    tmp_path: Path,
) -> None:
    channel = RecordingChannel()
    files = await _crash_during_the_turn(tmp_path, channel)
    assert forget_files(files.parent) == 1  # what forgetting the person's files does

    reply, request, _ = await _restart_and_replay(tmp_path)
    assert reply.text.startswith("It says 1.5 bar.")
    assert "I no longer have boiler.png: it was forgotten" in reply.text
    last = [m for m in request.json["messages"] if m["role"] == "user"][-1]["content"]
    assert "image_url" not in str(last)
    assert not files.exists()
