"""What AnthropicProvider sends: the Messages API request shape, checked on the fake server."""

from __future__ import annotations

import asyncio

from fakes import FakeAnthropic, Reply

from flynn.providers.anthropic import AnthropicProvider
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse

API_KEY = "sk-ant-test-key"


def provider_for(server: FakeAnthropic, max_output_tokens: int = 512) -> AnthropicProvider:
    return AnthropicProvider(
        API_KEY,
        "claude-test",
        base_url=server.base_url,
        timeout_seconds=5,
        max_output_tokens=max_output_tokens,
    )


async def test_chat_sends_system_messages_model_and_max_tokens(
    fake_anthropic: FakeAnthropic,
) -> None:
    request = ChatRequest(
        system="You are flynn.",
        messages=(
            ChatMessage("user", "hi"),
            ChatMessage("assistant", "hello!"),
            ChatMessage("user", "what's my name?"),
        ),
    )
    async with provider_for(fake_anthropic) as provider:
        await provider.chat(request)

    body = fake_anthropic.last.json
    assert fake_anthropic.last.path == "/v1/messages"
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 512
    assert body["system"] == "You are flynn."
    assert body["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello!"},
        {"role": "user", "content": "what's my name?"},
    ]
    assert "stream" not in body
    assert "anthropic-version" in fake_anthropic.last.headers


async def test_request_max_tokens_wins_and_empty_system_is_left_out(
    fake_anthropic: FakeAnthropic,
) -> None:
    request = ChatRequest(system="", messages=(ChatMessage("user", "hi"),), max_tokens=64)
    async with provider_for(fake_anthropic) as provider:
        await provider.chat(request)

    body = fake_anthropic.last.json
    assert body["max_tokens"] == 64
    assert "system" not in body


async def test_stream_asks_for_a_stream(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(Reply("streamed", chunks=2))
    request = ChatRequest(system="s", messages=(ChatMessage("user", "hi"),))
    async with provider_for(fake_anthropic) as provider:
        events = [event async for event in provider.stream(request)]

    assert fake_anthropic.last.json["stream"] is True
    assert events[:-1] == ["stre", "amed"]
    final = events[-1]
    assert isinstance(final, ChatResponse)
    assert final.text == "streamed"


async def test_deltas_arrive_before_the_reply_is_finished(fake_anthropic: FakeAnthropic) -> None:
    release = asyncio.Event()
    fake_anthropic.enqueue(Reply("first second", chunks=2, hold=release))
    request = ChatRequest(system="s", messages=(ChatMessage("user", "hi"),))
    async with provider_for(fake_anthropic) as provider:
        events = provider.stream(request)
        first = await anext(events)
        # The server is holding the rest back: the first delta got here on its own.
        release.set()
        rest = [event async for event in events]

    assert first == "first "
    assert rest[0] == "second"
