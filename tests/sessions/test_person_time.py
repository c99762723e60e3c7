"""The person's own time, through the real ``openai`` and ``anthropic`` SDKs against the fake
model servers: the system block the model receives tells the date and time in the person's
timezone (their fact, else ``persona.timezone``, else the host's), a timezone the extraction model
learns mid-conversation applies from the next turn, and ``/status`` says which zone and whence."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeAnthropic, FakeModelServer, FakeOpenAI, Reply
from fakes.clock import FakeClock
from fakes.http_server import RecordedRequest

from flynn.app import App
from flynn.messages import ChannelAccount, CommandCall, SessionKey
from flynn.sessions.orchestrator import Orchestrator
from flynn.settings import load_settings

VENDORS = [("openai", True), ("anthropic", False)]
# Monday 2 November 2026, 09:30 UTC: 09:30 in Lisbon (WET), 04:30 in New York (EST), 18:30 in
# Tokyo (JST).
NOW = FakeClock().now
TOKYO = '{"profile": [{"field": "timezone", "value": "Asia/Tokyo", "confidence": 0.95}]}'


def system_of(request: RecordedRequest) -> str:
    """The system prompt of a recorded request, in either vendor's form."""
    body = request.json
    system = body.get("system")
    if system is None:
        first = body["messages"][0]
        assert first["role"] == "system"
        system = first["content"]
    if isinstance(system, list):
        return "".join(block.get("text", "") for block in system)
    assert isinstance(system, str)
    return system


def _is_extraction(request: RecordedRequest) -> bool:
    return "extract durable facts" in json.dumps(request.json)


def _answer(request: RecordedRequest) -> Reply:
    if _is_extraction(request):
        said = json.dumps(request.json)
        return Reply(TOKYO if "moved to Tokyo" in said else '{"profile": []}')
    if not request.json.get("tools"):
        return Reply("{}")  # the graph's extraction, a summary: nothing to learn here
    return Reply("noted")


def chat_requests(server: FakeModelServer) -> list[RecordedRequest]:
    """The requests that asked for a reply (they offer the tools)."""
    return [r for r in server.requests if r.json.get("tools")]


@pytest.fixture(params=VENDORS, ids=[f"{v}-{'stream' if s else 'chat'}" for v, s in VENDORS])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[FakeModelServer]:
    vendor, _ = request.param
    fake: FakeModelServer = FakeOpenAI() if vendor == "openai" else FakeAnthropic()
    fake.responder = _answer
    async with fake:
        yield fake


def open_app(tmp_path: Path, server: FakeModelServer, persona: dict[str, Any], **extra: Any) -> App:
    vendor = "openai" if isinstance(server, FakeOpenAI) else "anthropic"
    settings = load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "llm": {
                "provider": vendor,
                "base_url": server.base_url,
                "model": "fake-model",
                "api_key": "sk-test",
                "max_retries": 0,
                "stream": vendor == "openai",
            },
            "memory": {"extract_every_turns": 1},
            "users": {"ana": {"telegram": ["101"]}, "ben": {"telegram": ["202"]}},
            "persona": persona,
            **extra,
        }
    )
    return App.open(settings, {}, clock=FakeClock(NOW))


def telegram(app: App, account: str) -> Orchestrator:
    return app.sessions.orchestrator(
        SessionKey("telegram", account), ChannelAccount("telegram", account)
    )


async def say(server: FakeModelServer, session: Orchestrator, text: str) -> str:
    """Sends ``text`` and returns the system prompt its reply was asked with."""
    before = len(chat_requests(server))
    result = await session.handle(text)
    assert not result.is_error, result.text
    await session.wait_idle()  # learning from the turn, in the background, is done
    asked = chat_requests(server)
    assert len(asked) == before + 1
    return system_of(asked[-1])


async def status(session: Orchestrator) -> str:
    result = await session.handle(CommandCall("status"))
    line = next(line for line in result.text.splitlines() if line.startswith("Timezone: "))
    return line.removeprefix("Timezone: ")


async def test_two_people_see_the_same_moment_in_their_own_time(
    tmp_path: Path, server: FakeModelServer
) -> None:
    app = open_app(tmp_path, server, {"timezone": "America/New_York"})
    try:
        ana, ben = telegram(app, "101"), telegram(app, "202")
        await say(server, ana, "my timezone is Europe/Lisbon")  # the rules learn it
        ana_system = await say(server, ana, "what time is it?")
        ben_system = await say(server, ben, "what time is it?")
        assert "Current date and time: Monday, 2026-11-02 at 09:30 AM WET" in ana_system
        assert "Current date and time: Monday, 2026-11-02 at 04:30 AM EST" in ben_system
        assert await status(ana) == "Europe/Lisbon, from what you told me"
        assert await status(ben) == "America/New_York, from persona.timezone"
    finally:
        await app.aclose()


async def test_a_timezone_the_model_learns_applies_from_the_next_turn(
    tmp_path: Path, server: FakeModelServer
) -> None:
    app = open_app(tmp_path, server, {"timezone": "America/New_York"})
    try:
        ana = telegram(app, "101")
        said = await say(server, ana, "I just moved to Tokyo for the new job")
        # Asked before the extraction model had read the message: still the configured zone.
        assert "at 04:30 AM EST" in said
        learnt = app.memory.facts.active("users/ana/profile", field="timezone")
        assert [(fact.value, fact.source) for fact in learnt] == [("Asia/Tokyo", "llm")]
        # The very next turn of the same session is in Tokyo time, with no restart.
        assert "Current date and time: Monday, 2026-11-02 at 06:30 PM JST" in await say(
            server, ana, "what should I do tonight?"
        )
        assert await status(ana) == "Asia/Tokyo, from what you told me"
        # Ben stored nothing: the configured zone still.
        assert "at 04:30 AM EST" in await say(server, telegram(app, "202"), "hi")
    finally:
        await app.aclose()


async def test_without_a_fact_or_a_configured_zone_it_is_the_hosts(
    tmp_path: Path, server: FakeModelServer
) -> None:
    app = open_app(tmp_path, server, {})
    try:
        assert (await status(telegram(app, "101"))).endswith(", the host's")
    finally:
        await app.aclose()
