"""The fake model servers themselves: the features other suites (e.g. end-to-end) rely on."""

from __future__ import annotations

import asyncio

from fakes import FakeAnthropic, FakeOpenAI, Reply

from flynn.providers.anthropic import AnthropicProvider
from flynn.providers.base import ChatMessage, ChatRequest
from flynn.providers.openai import OpenAIProvider

REQUEST = ChatRequest(system="s", messages=(ChatMessage("user", "ping"),))


def provider_for(server: FakeOpenAI) -> OpenAIProvider:
    return OpenAIProvider(
        "k", "m", base_url=server.base_url, timeout_seconds=5, max_output_tokens=50
    )


async def test_echoes_by_default_and_uses_the_responder_when_set(fake_openai: FakeOpenAI) -> None:
    async with provider_for(fake_openai) as provider:
        assert (await provider.chat(REQUEST)).text == "echo: ping"
        fake_openai.responder = lambda request: Reply(f"seen {len(fake_openai.requests)}")
        assert (await provider.chat(REQUEST)).text == "seen 2"
        fake_openai.enqueue(Reply("scripted first"))
        assert (await provider.chat(REQUEST)).text == "scripted first"
    assert fake_openai.pending == 0


async def test_wait_for_requests_and_hold_let_tests_synchronise(fake_openai: FakeOpenAI) -> None:
    release = asyncio.Event()
    fake_openai.enqueue(Reply("held reply", chunks=2, hold=release))
    async with provider_for(fake_openai) as provider:
        events = provider.stream(REQUEST)
        first = asyncio.create_task(anext(events))
        await fake_openai.wait_for_requests(1)
        assert await first == "held "
        release.set()
        rest = [event async for event in events]
    assert rest[0] == "reply"


async def test_keeps_connections_alive_between_requests(fake_anthropic: FakeAnthropic) -> None:
    async with AnthropicProvider(
        "k",
        "claude-test",
        base_url=fake_anthropic.base_url,
        timeout_seconds=5,
        max_output_tokens=50,
    ) as provider:
        await provider.chat(REQUEST)
        await provider.chat(REQUEST)
    assert [request.connection for request in fake_anthropic.requests] == [1, 1]
