"""MeteredProvider: every successful call's usage reaches the sink, tagged with the task."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import structlog
from fakes.flaky_provider import FlakyProvider

from flynn.errors import StoreError, Unavailable
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse, Task, Usage
from flynn.providers.metered import MeteredProvider

REQUEST = ChatRequest(system="s", messages=(ChatMessage("user", "hi"),))


@dataclass(frozen=True)
class Recorded:
    provider: str
    model: str
    task: Task
    usage: Usage


@dataclass
class RecordingSink:
    rows: list[Recorded] = field(default_factory=list)
    fail: bool = False

    def record_usage(self, *, provider: str, model: str, task: Task, usage: Usage) -> None:
        if self.fail:
            raise StoreError("database is locked")
        self.rows.append(Recorded(provider, model, task, usage))


async def test_chat_usage_is_recorded_with_provider_model_and_task() -> None:
    sink = RecordingSink()
    metered = MeteredProvider(FlakyProvider("anthropic", "two words"), sink, "compaction")

    await metered.chat(REQUEST)

    assert sink.rows == [Recorded("anthropic", "anthropic-model", "compaction", Usage(7, 2))]


async def test_stream_usage_is_recorded_once_from_the_final_response() -> None:
    sink = RecordingSink()
    metered = MeteredProvider(FlakyProvider("openai", "a b c"), sink, "chat")

    events = [event async for event in metered.stream(REQUEST)]

    assert isinstance(events[-1], ChatResponse)
    assert sink.rows == [Recorded("openai", "openai-model", "chat", Usage(7, 3))]


async def test_failed_calls_record_nothing() -> None:
    sink = RecordingSink()
    metered = MeteredProvider(FlakyProvider("p", Unavailable("down")), sink, "chat")

    with pytest.raises(Unavailable):
        await metered.chat(REQUEST)

    assert sink.rows == []


async def test_a_failing_sink_does_not_lose_the_reply() -> None:
    metered = MeteredProvider(FlakyProvider("p", "still here"), RecordingSink(fail=True), "chat")

    with structlog.testing.capture_logs() as logs:
        response = await metered.chat(REQUEST)

    assert response.text == "still here"
    assert [log["event"] for log in logs] == ["provider.usage_not_recorded"]


async def test_name_and_aclose_pass_through() -> None:
    inner = FlakyProvider("anthropic:claude-x")
    metered = MeteredProvider(inner, RecordingSink(), "chat")

    assert metered.name == "anthropic:claude-x"
    await metered.aclose()
    assert inner.closed
