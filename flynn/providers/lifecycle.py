"""Closing providers: the ``aclose`` every provider and wrapper offers (concrete ones own an SDK
connection pool; wrappers delegate), and closing a stream its reader abandons.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterable
from contextlib import asynccontextmanager

from flynn.providers.base import ChatRequest, Provider, StreamEvent

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
