"""``llm.turn_timeout_seconds``: a model that hangs holds a turn no longer than its budget, which
every call, retry and fallback shares; the person gets a clear error and their message is kept.
Through the real SDKs against the fake OpenAI and Anthropic servers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fakes import FakeAnthropic, FakeOpenAI, Reply
from fakes.clock import FakeClock
from fakes.script import Fail, Hang

from flynn.app import App
from flynn.errors import ConfigError
from flynn.messages import ChannelAccount, SessionKey
from flynn.sessions.orchestrator import Orchestrator
from flynn.settings import load_settings

TURN_SECONDS = 1.0
CALL_SECONDS = 60.0
"""Each call alone may take this long: without the turn's budget a test would wait it out."""


@pytest.fixture
async def servers() -> AsyncIterator[tuple[FakeOpenAI, FakeAnthropic]]:
    async with FakeOpenAI() as primary, FakeAnthropic() as fallback:
        yield primary, fallback


async def open_app(
    tmp_path: Path, primary: FakeOpenAI, fallback: FakeAnthropic, *, stream: bool
) -> App:
    settings = load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "llm": {
                "provider": "openai",
                "base_url": primary.base_url,
                "model": "fake-model",
                "api_key": "sk-test",
                "max_retries": 2,
                "timeout_seconds": CALL_SECONDS,
                "stream_idle_seconds": CALL_SECONDS,
                "turn_timeout_seconds": TURN_SECONDS,
                "stream": stream,
                "fallbacks": [
                    {
                        "provider": "anthropic",
                        "base_url": fallback.base_url,
                        "model": "fake-model",
                        "api_key": "sk-test",
                    }
                ],
            },
            "memory": {"user_namespace": "user", "auto_extract": False},
        }
    )
    return App.open(settings, {}, clock=FakeClock())


def session(app: App) -> Orchestrator:
    key = SessionKey("gateway", "laptop")
    return app.sessions.orchestrator(key, ChannelAccount("gateway", "laptop"))


@pytest.mark.parametrize("stream", [False, True], ids=["chat", "stream"])
async def test_a_hanging_fallback_ends_the_turn_within_its_budget(
    tmp_path: Path, servers: tuple[FakeOpenAI, FakeAnthropic], stream: bool
) -> None:
    primary, fallback = servers
    primary.responder = lambda request: Fail("unauthorized", 401, "invalid api key")
    fallback.responder = lambda request: Hang()
    app = await open_app(tmp_path, primary, fallback, stream=stream)
    try:
        orchestrator = session(app)
        deltas: list[str] = []

        async def on_delta(piece: str) -> None:
            deltas.append(piece)

        # Many times the budget, far below one call's own timeout (and its retries').
        async with asyncio.timeout(10 * TURN_SECONDS):
            result = await orchestrator.handle("are you there?", on_delta)
        assert result.error_code == "llm_unavailable"
        assert "did not answer in time" in result.text and "Your message is saved" in result.text
        assert fallback.requests  # the fallback was asked, within the same budget
        stored = app.memory.history.recent(orchestrator.session_id)
        assert [(m.role, m.content) for m in stored] == [("user", "are you there?")]

        primary.responder = lambda request: Reply("Here now.")
        async with asyncio.timeout(10 * TURN_SECONDS):
            answered = await orchestrator.handle("and now?", on_delta)
        assert answered.text == "Here now."  # each turn gets a budget of its own
    finally:
        await app.aclose()


def test_the_turn_budget_is_validated() -> None:
    for bad in (0, -1, 7200, "soon"):
        with pytest.raises(ConfigError, match=r"llm\.turn_timeout_seconds"):
            load_settings({"llm": {"turn_timeout_seconds": bad}})
