"""Spend in a running App: calls through its providers (the real ``anthropic`` SDK against a
local fake) store their cost at ``llm.prices``, and ``/status`` says what today and this month
cost in the person's calendar."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeAnthropic, Reply
from fakes.clock import FakeClock

from flynn.app import App
from flynn.memory.database import Database
from flynn.messages import ChannelAccount, CommandCall, SessionKey
from flynn.settings import load_settings

NOW = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)  # 22:30 on 2 November in Auckland


def _costs(db: Database) -> list[tuple[object, ...]]:
    rows = db.fetchall(
        "SELECT provider, model, task, input_tokens, output_tokens, cost FROM costs ORDER BY id"
    )
    return [
        (r["provider"], r["model"], r["task"], r["input_tokens"], r["output_tokens"], r["cost"])
        for r in rows
    ]


def _app(tmp_path: Path, server: FakeAnthropic, **llm: Any) -> App:
    settings = load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "llm": {
                "provider": "anthropic",
                "base_url": server.base_url,
                "api_key": "test-key",
                "stream": False,
                **llm,
            },
            "memory": {"auto_extract": False},
            "persona": {"timezone": "Pacific/Auckland"},
        }
    )
    return App.open(settings, {}, clock=FakeClock(NOW))


def _record(app: App, at: datetime, cost: float) -> None:
    app.memory.costs.record(
        provider="anthropic",
        model="claude-sonnet-5-5",
        task="chat",
        input_tokens=10_000,
        output_tokens=1_000,
        now=at,
        cost=cost,
    )


def _spend_line(text: str) -> str:
    [line] = [line for line in text.splitlines() if line.startswith("Spend:")]
    return line


async def test_status_says_what_today_and_this_month_cost_in_the_persons_zone(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    app = _app(tmp_path, fake_anthropic)  # the default model, claude-sonnet-5-5: $2 / $10
    try:
        session = app.sessions.orchestrator(
            SessionKey("gateway", "laptop"), ChannelAccount("gateway", "laptop")
        )
        assert _spend_line((await session.handle(CommandCall("status"))).text) == (
            "Spend: no model calls yet this month"
        )
        fake_anthropic.enqueue(Reply("Hello!", input_tokens=1_000, output_tokens=200))
        await session.handle("hi")
        assert _costs(app.memory.db) == [
            ("anthropic", "claude-sonnet-5-5", "chat", 1_000, 200, pytest.approx(0.004))
        ]
        # Auckland is 13 hours ahead: its 2 November began at 11:00 UTC on the 1st, and its
        # November at 11:00 UTC on 31 October.
        _record(app, datetime(2026, 11, 1, 12, 0, tzinfo=UTC), 0.5)  # today there
        _record(app, datetime(2026, 11, 1, 10, 0, tzinfo=UTC), 1.0)  # yesterday there
        _record(app, datetime(2026, 10, 31, 12, 0, tzinfo=UTC), 2.0)  # 1 November there
        _record(app, datetime(2026, 10, 31, 10, 0, tzinfo=UTC), 4.0)  # October there
        status = await session.handle(CommandCall("status"))
    finally:
        await app.aclose()
    assert _spend_line(status.text) == (
        "Spend: $0.50 today, $3.50 this month (31,000 tokens in, 3,200 out)"
    )


async def test_status_counts_tokens_when_the_model_has_no_price(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    app = _app(tmp_path, fake_anthropic, model="house-proxy-model")
    try:
        session = app.sessions.orchestrator(
            SessionKey("gateway", "laptop"), ChannelAccount("gateway", "laptop")
        )
        fake_anthropic.enqueue(Reply("Hello!", input_tokens=12_345, output_tokens=678))
        await session.handle("hi")
        status = await session.handle(CommandCall("status"))
    finally:
        await app.aclose()
    assert _spend_line(status.text) == (
        "Spend: 12,345 tokens in, 678 out this month (no price known for the model: see llm.prices)"
    )
