"""What OpenAIProvider sends to an OpenAI-compatible server, and how it copes with their quirks."""

from __future__ import annotations

from fakes import FakeOpenAI, Reply

from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse
from flynn.providers.openai import NO_API_KEY, OpenAIProvider
from flynn.tokens import estimate_tokens

REQUEST = ChatRequest(
    system="You are flynn.",
    messages=(ChatMessage("user", "hi"), ChatMessage("assistant", "hey"), ChatMessage("user", "?")),
)


def provider_for(server: FakeOpenAI, api_key: str | None = "sk-test") -> OpenAIProvider:
    return OpenAIProvider(
        api_key, "llama3", base_url=server.base_url, timeout_seconds=5, max_output_tokens=300
    )


async def test_chat_sends_the_system_prompt_as_the_first_message(fake_openai: FakeOpenAI) -> None:
    async with provider_for(fake_openai) as provider:
        await provider.chat(REQUEST)

    body = fake_openai.last.json
    assert fake_openai.last.path == "/v1/chat/completions"
    assert body["model"] == "llama3"
    assert body["messages"] == [
        {"role": "system", "content": "You are flynn."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hey"},
        {"role": "user", "content": "?"},
    ]
    # Compatible servers are sent the limit they all understand.
    assert body["max_tokens"] == 300
    assert "max_completion_tokens" not in body
    assert fake_openai.last.headers["authorization"] == "Bearer sk-test"


async def test_local_server_without_key_gets_a_placeholder(fake_openai: FakeOpenAI) -> None:
    async with provider_for(fake_openai, api_key=None) as provider:
        response = await provider.chat(REQUEST)

    assert response.text == "echo: ?"
    assert fake_openai.last.headers["authorization"] == f"Bearer {NO_API_KEY}"


async def test_stream_asks_for_usage_and_reports_it(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(Reply("a b c", chunks=3, input_tokens=99, output_tokens=3))
    async with provider_for(fake_openai) as provider:
        events = [event async for event in provider.stream(REQUEST)]

    body = fake_openai.last.json
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    final = events[-1]
    assert isinstance(final, ChatResponse)
    assert (final.usage.input_tokens, final.usage.output_tokens) == (99, 3)


async def test_stream_without_usage_chunk_estimates_usage(fake_openai: FakeOpenAI) -> None:
    fake_openai.enqueue(Reply("a reply of some length", include_usage=False))
    async with provider_for(fake_openai) as provider:
        events = [event async for event in provider.stream(REQUEST)]

    final = events[-1]
    assert isinstance(final, ChatResponse)
    assert final.text == "a reply of some length"
    assert final.usage.output_tokens == estimate_tokens("a reply of some length")
    assert final.usage.input_tokens > 0
