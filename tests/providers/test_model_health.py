"""How a configured chat model fares, counted where the real ``anthropic`` and ``openai`` SDKs
meet local fakes answering 401, 429, 500, a cut stream and a hang: each failure by its type in
``flynn.errors``, the last failure and the last answer, failing / degraded / ready. Never the
key, even when the server echoes it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from fakes import Fail, FakeAnthropic, FakeOpenAI, Hang, Malformed, Reply

from flynn.errors import AuthFailed, MalformedResponse, ProviderTimeout, Unavailable
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse, Provider
from flynn.providers.build import build_task_providers
from flynn.providers.health import FAILING_SECONDS, ModelHealth, ModelStatus
from flynn.settings import load_settings

REQUEST = ChatRequest(system="s", messages=(ChatMessage("user", "my plans for Porto"),))
KEY = "sk-ant-api03-WATCHEDKEY0123456789abcdef"


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _NullSink:
    def record_usage(self, **_: object) -> None:
        return None


def _model(health: ModelHealth, provider: str) -> ModelStatus:
    (found,) = [model for model in health.status().models if model.provider == provider]
    return found


def _kinds(model: ModelStatus) -> dict[str, int]:
    return {failure.kind: failure.count for failure in model.failures}


def test_failing_until_an_answer_then_degraded_then_ready_after_ten_minutes() -> None:
    clock = _Clock()
    health = ModelHealth(clock=clock, now=lambda: datetime(2026, 11, 28, 12, tzinfo=UTC))
    record = health.watch("anthropic", "claude-x", key_from="ANTHROPIC_API_KEY")
    assert health.status().state == "ready"
    record.failed(AuthFailed("invalid x-api-key " + KEY))
    clock.now += 5
    assert health.status().state == "failing"
    record.succeeded()
    assert health.status().state == "degraded"
    record.failed(Unavailable("500"))
    assert health.status().state == "failing"  # nothing answered since the last one
    record.succeeded()
    clock.now += FAILING_SECONDS
    status = health.status()
    assert status.state == "ready"
    (model,) = status.models
    assert _kinds(model) == {"Unavailable": 1, "AuthFailed": 1}  # kept, as history
    assert KEY not in json.dumps(status.as_json())


async def _call(provider: Provider, *, stream: bool) -> None:
    if not stream:
        await provider.chat(REQUEST)
        return
    events = [event async for event in provider.stream(REQUEST)]
    assert isinstance(events[-1], ChatResponse)


async def test_each_failure_of_the_real_sdks_is_counted_under_the_model_it_called(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    """Chat on Anthropic, extraction (a background caller) on an OpenAI-compatible server:
    401 (echoing the key), 500 and a cut stream on one; 429 then an answer, a hang past the
    timeout and garbage on the other."""
    llm = load_settings(
        {
            "llm": {
                "provider": "anthropic",
                "base_url": fake_anthropic.base_url,
                "api_key": KEY,
                "model": "claude-haiku-4-5",
                "max_retries": 1,
                "timeout_seconds": 1,
                "tasks": {
                    "extraction": {
                        "provider": "openai",
                        "base_url": fake_openai.base_url,
                        "api_key": KEY,
                        "model": "llama3.1",
                    }
                },
            }
        }
    ).llm
    health = ModelHealth()
    providers = build_task_providers(llm, {}, _NullSink(), health)
    try:
        fake_anthropic.enqueue(Fail("unauthorized", 401, f"invalid x-api-key: {KEY}"))
        with pytest.raises(AuthFailed):
            await _call(providers["chat"], stream=True)
        anthropic = _model(health, "anthropic")
        assert anthropic.state == "failing" and _kinds(anthropic) == {"AuthFailed": 1}
        assert anthropic.key_from == "llm.api_key"

        fake_anthropic.enqueue(Fail.server_error(), Fail.server_error())
        with pytest.raises(Unavailable):
            await _call(providers["chat"], stream=False)
        fake_anthropic.enqueue(Reply("a reply cut short", chunks=4, drop_after=1))
        with pytest.raises(Unavailable):  # after a delta: not retried
            await _call(providers["chat"], stream=True)
        anthropic = _model(health, "anthropic")
        assert _kinds(anthropic) == {"AuthFailed": 1, "Unavailable": 3}
        assert anthropic.state == "failing" and anthropic.last_success_at is None

        fake_openai.enqueue(Fail.rate_limited(retry_after="0"), Reply("{}"))
        await _call(providers["extraction"], stream=False)  # the retry gets past it
        openai = _model(health, "openai")
        assert openai.state == "degraded" and _kinds(openai) == {"RateLimited": 1}
        assert openai.last_success_at is not None

        fake_openai.enqueue(Hang(), Hang())
        with pytest.raises(ProviderTimeout):
            await _call(providers["extraction"], stream=False)
        openai = _model(health, "openai")
        assert _kinds(openai) == {"RateLimited": 1, "ProviderTimeout": 2}
        assert openai.state == "failing"
        fake_openai.enqueue(Malformed(), Malformed())  # garbage: 200 and no answer in it
        with pytest.raises(MalformedResponse):
            await _call(providers["extraction"], stream=False)
        assert _kinds(_model(health, "openai"))["MalformedResponse"] == 2

        fake_anthropic.enqueue(Reply("back"))
        await _call(providers["chat"], stream=False)
        assert _model(health, "anthropic").state == "degraded"
    finally:
        for provider in providers.values():
            await provider.aclose()
    body = json.dumps(health.status().as_json())
    assert KEY not in body and "Porto" not in body and "cut short" not in body
