"""Both SDK-backed providers against their local fake servers: replies, streams, error mapping."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import structlog
from fakes import Fail, FakeAnthropic, FakeModelServer, FakeOpenAI, Hang, Malformed, Reply
from fakes.clock import FakeClock
from fakes.flaky_provider import RecordingSleep

from flynn.errors import (
    AuthFailed,
    BadRequest,
    ContextTooLong,
    MalformedResponse,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    Unavailable,
)
from flynn.providers.anthropic import AnthropicProvider
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse, StreamEvent
from flynn.providers.openai import OpenAIProvider
from flynn.providers.retrying import RetryingProvider

API_KEY = "sk-test-1234567890abcdef"
REQUEST = ChatRequest(
    system="You are flynn.",
    messages=(ChatMessage("user", "hello there"),),
)

SdkProvider = AnthropicProvider | OpenAIProvider


@dataclass
class Rig:
    vendor: str
    server: FakeModelServer
    clock: FakeClock

    def provider(
        self, *, timeout: float = 5.0, api_key: str = API_KEY, stream_idle: float | None = None
    ) -> SdkProvider:
        if self.vendor == "anthropic":
            return AnthropicProvider(
                api_key,
                "claude-test",
                base_url=self.server.base_url,
                timeout_seconds=timeout,
                stream_idle_seconds=stream_idle,
                max_output_tokens=256,
                clock=self.clock,
            )
        return OpenAIProvider(
            api_key,
            "gpt-test",
            base_url=self.server.base_url,
            timeout_seconds=timeout,
            stream_idle_seconds=stream_idle,
            max_output_tokens=256,
            clock=self.clock,
        )


@pytest.fixture(params=["anthropic", "openai"])
async def rig(request: pytest.FixtureRequest) -> AsyncIterator[Rig]:
    server: FakeModelServer = FakeAnthropic() if request.param == "anthropic" else FakeOpenAI()
    async with server:
        yield Rig(request.param, server, FakeClock())


async def collect(events: AsyncIterator[StreamEvent]) -> tuple[list[str], list[ChatResponse]]:
    deltas: list[str] = []
    finals: list[ChatResponse] = []
    async for event in events:
        if isinstance(event, ChatResponse):
            finals.append(event)
        else:
            assert not finals, "a delta arrived after the final response"
            deltas.append(event)
    return deltas, finals


async def test_chat_returns_text_usage_and_model(rig: Rig) -> None:
    rig.server.enqueue(Reply("Hi, I'm flynn.", input_tokens=42, output_tokens=5))
    async with rig.provider() as provider:
        response = await provider.chat(REQUEST)

    assert response.text == "Hi, I'm flynn."
    assert (response.usage.input_tokens, response.usage.output_tokens) == (42, 5)
    assert response.provider == rig.vendor
    assert response.model in ("claude-test", "gpt-test")
    assert provider.name == f"{rig.vendor}:{response.model}"


async def test_stream_yields_deltas_then_one_response(rig: Rig) -> None:
    rig.server.enqueue(Reply("one two three four", chunks=4, input_tokens=30, output_tokens=4))
    async with rig.provider() as provider:
        deltas, finals = await collect(provider.stream(REQUEST))

    assert len(deltas) == 4
    assert "".join(deltas) == "one two three four"
    assert len(finals) == 1
    assert finals[0].text == "one two three four"
    assert (finals[0].usage.input_tokens, finals[0].usage.output_tokens) == (30, 4)


async def test_stream_closed_early_releases_the_connection(rig: Rig) -> None:
    rig.server.enqueue(Reply("a b c d e f", chunks=6))
    async with rig.provider() as provider:
        events = provider.stream(REQUEST)
        first = await anext(events)
        await events.aclose()
        # The client is still usable afterwards.
        response = await provider.chat(REQUEST)

    assert isinstance(first, str)
    assert response.text == "echo: hello there"


@pytest.mark.parametrize(
    ("fail", "error"),
    [
        (Fail.server_error(500), Unavailable),
        (Fail.server_error(503), Unavailable),
        (Fail.overloaded(), Unavailable),
        (Fail.unauthorized(), AuthFailed),
        (Fail.forbidden(), AuthFailed),
        (Fail.context_too_long(), ContextTooLong),
        (Fail.bad_request("messages: roles must alternate"), BadRequest),
        (Fail.not_found(), BadRequest),
        (Fail.rate_limited(retry_after=None), RateLimited),
    ],
)
async def test_http_errors_map_to_flynn_errors(
    rig: Rig, fail: Fail, error: type[ProviderError]
) -> None:
    async with rig.provider() as provider:
        for call in ("chat", "stream"):
            rig.server.enqueue(fail)
            with pytest.raises(error) as caught:
                if call == "chat":
                    await provider.chat(REQUEST)
                else:
                    await collect(provider.stream(REQUEST))
            assert type(caught.value) is error, call
            assert caught.value.provider == provider.name
            assert caught.value.__cause__ is not None


async def test_rate_limit_reads_retry_after_in_seconds(rig: Rig) -> None:
    rig.server.enqueue(Fail.rate_limited(retry_after="3"))
    async with rig.provider() as provider:
        with pytest.raises(RateLimited) as caught:
            await provider.chat(REQUEST)
    assert caught.value.retry_after == 3.0


async def test_rate_limit_reads_retry_after_as_http_date(rig: Rig) -> None:
    rig.server.enqueue(Fail.rate_limited(retry_after="Mon, 02 Nov 2026 09:30:42 GMT"))
    async with rig.provider() as provider:
        with pytest.raises(RateLimited) as caught:
            await provider.chat(REQUEST)
    # FakeClock starts at 09:30:00 UTC on that day.
    assert caught.value.retry_after == 42.0


async def test_refused_key_is_auth_failed_and_never_in_the_message(rig: Rig) -> None:
    rig.server.api_key = "the-right-key"
    async with rig.provider(api_key=API_KEY) as provider:
        with pytest.raises(AuthFailed) as caught:
            await provider.chat(REQUEST)
    assert API_KEY not in str(caught.value)
    assert API_KEY not in repr(caught.value.args)


async def test_key_is_sent_in_the_auth_header(rig: Rig) -> None:
    rig.server.api_key = API_KEY
    async with rig.provider() as provider:
        await provider.chat(REQUEST)
    headers = rig.server.last.headers
    sent = headers.get("x-api-key") or headers["authorization"].removeprefix("Bearer ")
    assert sent == API_KEY


async def test_no_answer_in_time_is_provider_timeout(rig: Rig) -> None:
    rig.server.enqueue(Hang())
    async with rig.provider(timeout=0.3) as provider:
        with pytest.raises(ProviderTimeout):
            await provider.chat(REQUEST)


async def test_stream_that_stalls_is_provider_timeout(rig: Rig) -> None:
    rig.server.enqueue(Hang())
    async with rig.provider(timeout=0.3) as provider:
        with pytest.raises(ProviderTimeout):
            await collect(provider.stream(REQUEST))


@pytest.mark.parametrize(
    "body",
    [
        Malformed('{"id": "broken", '),
        Malformed('{"unexpected": true}'),
        Malformed("<html>Bad gateway</html>", content_type="text/html"),
        Malformed("event: message_start\ndata: {broken\n\n", content_type="text/event-stream"),
    ],
)
async def test_unreadable_body_is_malformed_response(rig: Rig, body: Malformed) -> None:
    rig.server.enqueue(body, body)
    async with rig.provider() as provider:
        with pytest.raises(MalformedResponse):
            await provider.chat(REQUEST)
        with pytest.raises(MalformedResponse):
            await collect(provider.stream(REQUEST))


async def test_connection_dropped_mid_stream_is_unavailable_after_the_deltas(rig: Rig) -> None:
    rig.server.enqueue(Reply("abcdefgh", chunks=4, drop_after=2))
    seen: list[StreamEvent] = []
    async with rig.provider() as provider:
        with pytest.raises(Unavailable):
            async for event in provider.stream(REQUEST):
                seen.append(event)
    assert seen == ["ab", "cd"]


async def test_unreachable_server_is_unavailable(rig: Rig) -> None:
    provider = rig.provider()
    await rig.server.aclose()
    async with provider:
        with pytest.raises(Unavailable) as caught:
            await provider.chat(REQUEST)
    assert not isinstance(caught.value, ProviderTimeout)


async def test_retry_recovers_from_a_server_error(rig: Rig) -> None:
    rig.server.enqueue(Fail.server_error(500), Reply("second time lucky"))
    sleep = RecordingSleep()
    async with rig.provider() as inner:
        provider = RetryingProvider(inner, max_retries=3, sleep=sleep, random=lambda: 0.0)
        response = await provider.chat(REQUEST)
    assert response.text == "second time lucky"
    assert len(rig.server.requests) == 2
    assert sleep.delays == [0.25]


async def test_retry_honours_retry_after(rig: Rig) -> None:
    rig.server.enqueue(Fail.rate_limited(retry_after="7"), Reply("done"))
    sleep = RecordingSleep()
    async with rig.provider() as inner:
        provider = RetryingProvider(inner, max_retries=3, sleep=sleep)
        with structlog.testing.capture_logs() as logs:
            deltas, _ = await collect(provider.stream(REQUEST))
    assert "".join(deltas) == "done"
    assert sleep.delays == [7.0]
    assert [log["event"] for log in logs] == ["provider.retry"]
    assert logs[0]["error"] == "RateLimited"
    assert API_KEY not in str(logs)


async def test_refused_key_is_not_retried(rig: Rig) -> None:
    rig.server.enqueue(Fail.unauthorized())
    sleep = RecordingSleep()
    async with rig.provider() as inner:
        provider = RetryingProvider(inner, max_retries=3, sleep=sleep)
        with pytest.raises(AuthFailed):
            await provider.chat(REQUEST)
    assert len(rig.server.requests) == 1
    assert sleep.delays == []


async def test_error_event_mid_stream_is_unavailable_after_the_deltas(rig: Rig) -> None:
    rig.server.enqueue(Reply("abcdefgh", chunks=4, error_after=1, error="overloaded"))
    seen: list[StreamEvent] = []
    async with rig.provider() as provider:
        with pytest.raises(Unavailable):
            async for event in provider.stream(REQUEST):
                seen.append(event)
    assert seen == ["ab"]


async def test_stream_that_ends_before_its_finish_is_malformed_after_the_deltas(rig: Rig) -> None:
    # The body ends cleanly, but without a finish reason / message_stop: a cut reply, not a
    # complete one.
    rig.server.enqueue(Reply("abcdefgh", chunks=4, end_after=2))
    seen: list[StreamEvent] = []
    async with rig.provider() as provider:
        with pytest.raises(MalformedResponse, match="cut"):
            async for event in provider.stream(REQUEST):
                seen.append(event)
    assert seen == ["ab", "cd"]


async def test_cut_stream_before_any_delta_is_retried(rig: Rig) -> None:
    rig.server.enqueue(Reply("abcdefgh", chunks=4, end_after=0), Reply("whole"))
    sleep = RecordingSleep()
    async with rig.provider() as inner:
        provider = RetryingProvider(inner, max_retries=2, sleep=sleep, random=lambda: 0.0)
        deltas, _ = await collect(provider.stream(REQUEST))
    assert "".join(deltas) == "whole"
    assert len(rig.server.requests) == 2


async def test_stream_silent_longer_than_the_idle_gap_is_provider_timeout(rig: Rig) -> None:
    never = asyncio.Event()
    rig.server.enqueue(Reply("abcdefgh", chunks=4, hold=never))
    seen: list[StreamEvent] = []
    async with rig.provider(timeout=30, stream_idle=0.3) as provider:
        started = asyncio.get_running_loop().time()
        with pytest.raises(ProviderTimeout, match="no event"):
            async for event in provider.stream(REQUEST):
                seen.append(event)
        elapsed = asyncio.get_running_loop().time() - started
    assert seen == ["ab"]
    assert elapsed < 5


async def test_stream_that_trickles_past_the_deadline_is_provider_timeout(rig: Rig) -> None:
    # Every gap is short, so only the total deadline (``timeout_seconds``) can end it.
    rig.server.enqueue(Reply("x" * 200, chunks=200, interval=0.02))
    seen: list[StreamEvent] = []
    async with rig.provider(timeout=0.6, stream_idle=0.3) as provider:
        started = asyncio.get_running_loop().time()
        with pytest.raises(ProviderTimeout, match=r"0\.6s"):
            async for event in provider.stream(REQUEST):
                seen.append(event)
        elapsed = asyncio.get_running_loop().time() - started
    assert 0 < len(seen) < 200
    assert elapsed < 2
