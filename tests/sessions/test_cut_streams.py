"""A reply whose stream breaks off, through the real ``openai`` and ``anthropic`` SDKs: it is
never stored or sent as if it were complete, and a streamed call is bounded in time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fakes import FakeAnthropic, FakeModelServer, FakeOpenAI, Reply
from fakes.clock import FakeClock

from flynn.app import App
from flynn.messages import ChannelAccount, SessionKey
from flynn.sessions.orchestrator import Orchestrator
from flynn.settings import load_settings


@pytest.fixture(params=["openai", "anthropic"])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[FakeModelServer]:
    fake: FakeModelServer = FakeOpenAI() if request.param == "openai" else FakeAnthropic()
    async with fake:
        yield fake


def open_app(server: FakeModelServer, data: Path, **llm: object) -> App:
    vendor = "openai" if isinstance(server, FakeOpenAI) else "anthropic"
    settings = load_settings(
        {
            "data_dir": str(data),
            "llm": {
                "provider": vendor,
                "base_url": server.base_url,
                "model": "fake-model",
                "api_key": "sk-test",
                "stream": True,
                **llm,
            },
            "memory": {"user_namespace": "user", "auto_extract": False},
        }
    )
    return App.open(settings, {}, clock=FakeClock())


def session(app: App) -> Orchestrator:
    key = SessionKey("gateway", "laptop")
    return app.sessions.orchestrator(key, ChannelAccount("gateway", "laptop"))


async def test_a_reply_cut_mid_stream_is_shown_as_cut_and_not_stored(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(Reply("The capital of France is Paris.", chunks=4, end_after=2))
    app = open_app(server, tmp_path / "data", max_retries=2)
    try:
        orchestrator = session(app)
        deltas: list[str] = []

        async def on_delta(piece: str) -> None:
            deltas.append(piece)

        result = await orchestrator.handle("What is the capital of France?", on_delta)
        partial = "".join(deltas)

        assert partial == "The capital of F"
        # Deltas were out, so no retry could take them back: the person is told.
        assert len(server.requests) == 1
        assert result.error_code == "llm_unavailable"
        assert result.text.startswith(partial)
        assert "cut off" in result.text
        stored = app.services.memory.history.recent(orchestrator.session_id)
        assert [(m.role, m.content) for m in stored] == [("user", "What is the capital of France?")]

        # The next turn goes on, and the model sees the question that was not answered.
        result = await orchestrator.handle("Are you there?", on_delta)
        assert not result.is_error
        assert "What is the capital of France?" in str(server.last.json["messages"])
    finally:
        await app.aclose()


async def test_a_stream_cut_before_its_first_word_is_retried(
    server: FakeModelServer, tmp_path: Path
) -> None:
    server.enqueue(Reply("lost", end_after=0), Reply("Paris."))
    app = open_app(server, tmp_path / "data", max_retries=2)
    try:
        orchestrator = session(app)
        deltas: list[str] = []

        async def on_delta(piece: str) -> None:
            deltas.append(piece)

        result = await orchestrator.handle("Capital of France?", on_delta)
        assert (result.text, result.error_code) == ("Paris.", None)
        assert "".join(deltas) == "Paris."
        assert len(server.requests) == 2
    finally:
        await app.aclose()


async def test_a_stalled_stream_is_given_up_after_the_idle_gap(
    server: FakeModelServer, tmp_path: Path
) -> None:
    never = asyncio.Event()
    server.enqueue(Reply("one two three", chunks=3, hold=never))
    app = open_app(server, tmp_path / "data", max_retries=0, stream_idle_seconds=0.3)
    try:
        orchestrator = session(app)

        async def on_delta(piece: str) -> None:
            pass

        result = await asyncio.wait_for(orchestrator.handle("hi", on_delta), 10)
        assert result.error_code == "llm_unavailable"
        assert "cut off" in result.text
        assert [m.role for m in app.services.memory.history.recent(orchestrator.session_id)] == [
            "user"
        ]
    finally:
        never.set()
        await app.aclose()
