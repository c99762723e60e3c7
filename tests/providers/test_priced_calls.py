"""Each call's cost through the real path: the real ``anthropic`` and ``openai`` SDKs against
local fakes, wrapped as ``build_task_providers`` wraps them, with a priced ``SqliteCosts`` as
the usage sink."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeAnthropic, FakeOpenAI, Reply

from flynn.memory.costs import SqliteCosts
from flynn.memory.database import Database
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse
from flynn.providers.build import build_task_providers
from flynn.providers.prices import PriceTable
from flynn.schedule.migrations import SCHEMA
from flynn.settings import load_settings

REQUEST = ChatRequest(system="s", messages=(ChatMessage("user", "hi"),))


def _costs(db: Database) -> list[tuple[object, ...]]:
    rows = db.fetchall(
        "SELECT provider, model, task, input_tokens, output_tokens, cost FROM costs ORDER BY id"
    )
    return [
        (r["provider"], r["model"], r["task"], r["input_tokens"], r["output_tokens"], r["cost"])
        for r in rows
    ]


async def test_each_metered_call_stores_its_cost(
    tmp_path: Path, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    llm = load_settings(
        {
            "llm": {
                "provider": "anthropic",
                "base_url": fake_anthropic.base_url,
                "api_key": "test-key",
                "model": "claude-haiku-4-5-20251001",
                "tasks": {
                    "extraction": {
                        "provider": "openai",
                        "base_url": fake_openai.base_url,
                        "api_key": "test-key",
                        "model": "gpt-5.4-mini-2026-03-17",
                    },
                    "compaction": {
                        "provider": "openai",
                        "base_url": fake_openai.base_url,
                        "api_key": "test-key",
                        "model": "llama3.1",
                    },
                },
                "prices": {"gpt-5.4-mini": {"input": 1.0, "output": 2.0}},
            }
        }
    ).llm
    fake_anthropic.enqueue(
        Reply("one", input_tokens=1_000, output_tokens=200),
        Reply("two", input_tokens=3_000, output_tokens=100),
    )
    fake_openai.enqueue(
        Reply("{}", input_tokens=5_000, output_tokens=500),
        Reply("- summary", input_tokens=700, output_tokens=70),
    )
    with Database.open(tmp_path / "flynn.db", SCHEMA) as db:
        sink = SqliteCosts(db, prices=PriceTable.configured(llm.prices))
        providers = build_task_providers(llm, {}, sink)
        try:
            await providers["chat"].chat(REQUEST)
            events = [event async for event in providers["chat"].stream(REQUEST)]
            assert isinstance(events[-1], ChatResponse)
            await providers["extraction"].chat(REQUEST)
            await providers["compaction"].chat(REQUEST)
        finally:
            for provider in providers.values():
                await provider.aclose()
        assert _costs(db) == [
            # Haiku 4.5: $1 in, $5 out per million tokens.
            ("anthropic", "claude-haiku-4-5-20251001", "chat", 1_000, 200, pytest.approx(0.002)),
            ("anthropic", "claude-haiku-4-5-20251001", "chat", 3_000, 100, pytest.approx(0.0035)),
            # llm.prices overrides the default $0.75/$4.50.
            ("openai", "gpt-5.4-mini-2026-03-17", "extraction", 5_000, 500, pytest.approx(0.006)),
            # No price for a local model: its tokens are kept, its cost unknown.
            ("openai", "llama3.1", "compaction", 700, 70, None),
        ]
