"""Closing providers: the ``aclose`` every provider and wrapper offers (concrete ones own an SDK
connection pool; wrappers delegate), closing a stream its reader abandons, and bounding how long
a stream may stay silent or last.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Literal, TypeVar

from flynn.errors import ProviderTimeout
from flynn.providers.base import ChatRequest, Provider, StreamEvent

T = TypeVar("T")

ClosableProvider = Provider
"""Every ``Provider`` can be closed; the name stays for the wrappers that say so explicitly."""


@asynccontextmanager
async def open_stream(
    provider: Provider, request: ChatRequest
) -> AsyncGenerator[AsyncIterator[StreamEvent], None]:
    """``provider.stream(request)``, closed on exit even when the caller stops early.

    Closing matters: an abandoned stream keeps its HTTP response (and connection) open until the
    garbage collector finalises the generator, outside any task.
    """
    events = provider.stream(request)
    try:
        yield events
    finally:
        if isinstance(events, AsyncGenerator):
            await events.aclose()


async def close_providers(providers: Iterable[ClosableProvider]) -> None:
    """Close each provider once, in order (shared backends tolerate the repeat)."""
    seen: set[int] = set()
    for provider in providers:
        if id(provider) not in seen:
            seen.add(id(provider))
            await provider.aclose()


async def paced(
    events: AsyncIterator[T],
    *,
    idle_seconds: float,
    deadline: float,
    timed_out: Callable[[Literal["idle", "deadline"]], ProviderTimeout],
) -> AsyncGenerator[T, None]:
    """``events`` as long as each arrives within ``idle_seconds`` of asking and before
    ``deadline`` (on the running loop's clock); otherwise ``timed_out`` of which limit it was
    is raised.

    An HTTP read timeout cannot do this: a server that sends a byte now and then resets it
    forever. The wait is cancelled, so the SDK's stream ends with it; the caller closes it.
    Time the reader spends between events counts against the deadline, not the idle gap.
    """
    loop = asyncio.get_running_loop()
    while True:
        idle_until = loop.time() + idle_seconds
        try:
            async with asyncio.timeout_at(min(idle_until, deadline)):
                event = await anext(events)
        except StopAsyncIteration:
            return
        except TimeoutError as exc:
            raise timed_out("idle" if idle_until < deadline else "deadline") from exc
        yield event
