"""RetryingProvider: which errors are retried, how long it waits, and streams that already began."""

from __future__ import annotations

import pytest
import structlog
from fakes.flaky_provider import FailMidStream, FlakyProvider, RecordingSleep

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
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse
from flynn.providers.retrying import RetryingProvider

REQUEST = ChatRequest(system="s", messages=(ChatMessage("user", "hi"),))


def retrying(
    inner: FlakyProvider, sleep: RecordingSleep, max_retries: int = 3, jitter: float = 0.0
) -> RetryingProvider:
    return RetryingProvider(
        inner,
        max_retries=max_retries,
        base_delay=0.5,
        max_delay=30.0,
        sleep=sleep,
        random=lambda: jitter,
    )


@pytest.mark.parametrize(
    "error",
    [Unavailable("down"), ProviderTimeout("slow"), MalformedResponse("junk"), RateLimited("429")],
)
async def test_transient_errors_are_retried(error: ProviderError) -> None:
    inner = FlakyProvider("p", error, error, "finally")
    sleep = RecordingSleep()

    response = await retrying(inner, sleep).chat(REQUEST)

    assert response.text == "finally"
    assert inner.calls == 3
    # Equal jitter with random()=0: half of 0.5, then half of 1.0.
    assert sleep.delays == [0.25, 0.5]


async def test_backoff_grows_exponentially_up_to_the_ceiling() -> None:
    inner = FlakyProvider("p", default=Unavailable("down"))
    sleep = RecordingSleep()

    with pytest.raises(Unavailable):
        await retrying(inner, sleep, max_retries=9, jitter=1.0).chat(REQUEST)

    assert sleep.delays == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert inner.calls == 10


async def test_gives_up_after_max_retries_with_the_last_error() -> None:
    last = Unavailable("still down")
    inner = FlakyProvider("p", Unavailable("down"), Unavailable("down"), last)
    sleep = RecordingSleep()

    with pytest.raises(Unavailable) as caught:
        await retrying(inner, sleep, max_retries=2).chat(REQUEST)

    assert caught.value is last
    assert inner.calls == 3


@pytest.mark.parametrize("error", [AuthFailed("key"), BadRequest("bad"), ContextTooLong("long")])
async def test_final_errors_are_never_retried(error: ProviderError) -> None:
    inner = FlakyProvider("p", error)
    sleep = RecordingSleep()

    with pytest.raises(type(error)):
        await retrying(inner, sleep).chat(REQUEST)

    assert inner.calls == 1
    assert sleep.delays == []


async def test_retry_after_is_honoured_exactly() -> None:
    inner = FlakyProvider("p", RateLimited("429", retry_after=12.5), "ok")
    sleep = RecordingSleep()

    await retrying(inner, sleep, jitter=0.9).chat(REQUEST)

    assert sleep.delays == [12.5]


async def test_retry_after_far_beyond_the_ceiling_gives_up_at_once() -> None:
    inner = FlakyProvider("p", RateLimited("429", retry_after=61.0), "ok")
    sleep = RecordingSleep()

    with pytest.raises(RateLimited):
        await retrying(inner, sleep).chat(REQUEST)

    assert inner.calls == 1
    assert sleep.delays == []


async def test_each_retry_is_logged_without_secrets() -> None:
    inner = FlakyProvider("anthropic:claude-x", Unavailable("down"), "ok")

    with structlog.testing.capture_logs() as logs:
        await retrying(inner, RecordingSleep()).chat(REQUEST)

    assert logs == [
        {
            "event": "provider.retry",
            "log_level": "warning",
            "provider": "anthropic:claude-x",
            "attempt": 1,
            "delay": 0.25,
            "error": "Unavailable",
        }
    ]


async def test_stream_is_retried_before_the_first_delta() -> None:
    inner = FlakyProvider("p", Unavailable("down"), "hello world")
    sleep = RecordingSleep()

    events = [event async for event in retrying(inner, sleep).stream(REQUEST)]

    assert events[:-1] == ["hello ", "world"]
    assert isinstance(events[-1], ChatResponse)
    assert inner.calls == 2


async def test_stream_is_not_retried_once_a_delta_was_yielded() -> None:
    inner = FlakyProvider("p", FailMidStream(("hel",), Unavailable("cut")), "hello")
    sleep = RecordingSleep()
    seen: list[object] = []

    with pytest.raises(Unavailable, match="cut"):
        async for event in retrying(inner, sleep).stream(REQUEST):
            seen.append(event)

    assert seen == ["hel"]
    assert inner.calls == 1
    assert sleep.delays == []


async def test_aclose_closes_the_inner_provider() -> None:
    inner = FlakyProvider("p")
    await retrying(inner, RecordingSleep()).aclose()
    assert inner.closed
