"""FallbackProvider: the order it tries providers in, and what makes it move on."""

from __future__ import annotations

import pytest
import structlog
from fakes import Fail, FakeAnthropic, FakeOpenAI, Reply
from fakes.flaky_provider import FailMidStream, FlakyProvider

from flynn.errors import (
    AuthFailed,
    BadRequest,
    ContextTooLong,
    ProviderError,
    RateLimited,
    Unavailable,
)
from flynn.providers.anthropic import AnthropicProvider
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse
from flynn.providers.fallback import FallbackProvider
from flynn.providers.openai import OpenAIProvider

REQUEST = ChatRequest(system="s", messages=(ChatMessage("user", "hi"),))


async def test_first_provider_answers_when_it_can() -> None:
    first, second = FlakyProvider("a", "from a"), FlakyProvider("b", "from b")

    response = await FallbackProvider([first, second]).chat(REQUEST)

    assert response.text == "from a"
    assert second.calls == 0


@pytest.mark.parametrize("error", [Unavailable("down"), RateLimited("429"), AuthFailed("key")])
async def test_moves_on_when_a_provider_is_down_limited_or_refuses_the_key(
    error: ProviderError,
) -> None:
    first, second = FlakyProvider("a", error), FlakyProvider("b", "from b")

    with structlog.testing.capture_logs() as logs:
        response = await FallbackProvider([first, second]).chat(REQUEST)

    assert response.text == "from b"
    assert logs == [
        {
            "event": "provider.fallback",
            "log_level": "warning",
            "provider": "a",
            "to": "b",
            "error": type(error).__name__,
        }
    ]


@pytest.mark.parametrize("error", [ContextTooLong("long"), BadRequest("bad")])
async def test_prompt_errors_propagate_at_once(error: ProviderError) -> None:
    first, second = FlakyProvider("a", error), FlakyProvider("b", "from b")

    with pytest.raises(type(error)):
        await FallbackProvider([first, second]).chat(REQUEST)

    assert second.calls == 0


async def test_tries_in_order_and_raises_the_last_error_when_all_fail() -> None:
    last = RateLimited("c limited")
    providers = [
        FlakyProvider("a", Unavailable("a down")),
        FlakyProvider("b", AuthFailed("b refused")),
        FlakyProvider("c", last),
    ]

    with pytest.raises(RateLimited) as caught:
        await FallbackProvider(providers).chat(REQUEST)

    assert caught.value is last
    assert [p.calls for p in providers] == [1, 1, 1]


async def test_stream_falls_back_before_the_first_delta() -> None:
    first, second = FlakyProvider("a", Unavailable("down")), FlakyProvider("b", "from b")

    events = [event async for event in FallbackProvider([first, second]).stream(REQUEST)]

    assert events[:-1] == ["from ", "b"]
    assert isinstance(events[-1], ChatResponse)


async def test_stream_does_not_fall_back_after_a_delta() -> None:
    first = FlakyProvider("a", FailMidStream(("par",), Unavailable("cut")))
    second = FlakyProvider("b", "from b")
    seen: list[object] = []

    with pytest.raises(Unavailable, match="cut"):
        async for event in FallbackProvider([first, second]).stream(REQUEST):
            seen.append(event)

    assert seen == ["par"]
    assert second.calls == 0


async def test_name_lists_the_chain_and_aclose_closes_every_provider() -> None:
    first, second = FlakyProvider("a"), FlakyProvider("b")
    fallback = FallbackProvider([first, second])

    assert fallback.name == "a > b"
    await fallback.aclose()
    assert first.closed and second.closed


async def test_needs_at_least_one_provider() -> None:
    with pytest.raises(ValueError, match="at least one"):
        FallbackProvider([])


async def test_overloaded_anthropic_falls_back_to_openai_over_http(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    fake_anthropic.enqueue(Fail.overloaded())
    fake_openai.enqueue(Reply("openai to the rescue"))
    async with (
        AnthropicProvider(
            "k1",
            "claude-test",
            base_url=fake_anthropic.base_url,
            timeout_seconds=5,
            max_output_tokens=100,
        ) as primary,
        OpenAIProvider(
            "k2",
            "gpt-test",
            base_url=fake_openai.base_url,
            timeout_seconds=5,
            max_output_tokens=100,
        ) as secondary,
    ):
        events = [event async for event in FallbackProvider([primary, secondary]).stream(REQUEST)]

    final = events[-1]
    assert isinstance(final, ChatResponse)
    assert final.text == "openai to the rescue"
    assert final.provider == "openai"
    assert len(fake_anthropic.requests) == 1
