"""Compaction when the summarizer fails, hangs or ignores ``max_tokens``: summaries stay capped
and never nest, a failing summarizer is backed off, a prompt that cannot fit recovers by itself,
and ``/compact`` says what happened."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from conftest import SMALL_WINDOW, Harness

from flynn.errors import ContextTooLong, Unavailable
from flynn.messages import CommandCall
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse, StreamEvent
from flynn.sessions.compaction import extractive_summary
from flynn.tokens import estimate_tokens

SHARED = {
    **SMALL_WINDOW,
    "memory": {"user_namespace": "user", "auto_extract": False, "recall_max_tokens": 200},
}
ASK = "Let's plan to edit docs/file{0}.md for ticket ABC-{0}; we decided to use Postgres. " * 6
SESSION = "gateway:laptop"


def summary_cap(h: Harness) -> int:
    assert h.app is not None
    return h.app.services.model.compactor.summary_cap_tokens


async def test_a_failing_summarizer_is_backed_off_and_its_fallback_stays_small(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    h.compaction.default = Unavailable("down")
    session = h.session()
    summaries: list[str] = []
    for index in range(50):
        result = await session.handle(ASK.format(index))
        await session.wait_idle()
        assert not result.is_error, (index, result.text)
        summaries.append(app.memory.history.summary(SESSION) or "")

    # Before: one to four summary calls on every turn from the 5th on. Now a failure waits
    # 2, 4, 8, 16, 32 turns before the model is asked again.
    assert len(h.compaction.requests) <= 6
    cap = summary_cap(h)
    assert all(estimate_tokens(summary) <= cap for summary in summaries)
    assert all(summary.count("## Earlier") <= 1 for summary in summaries)
    assert any(f"ABC-{index}" in summaries[-1] for index in range(40, 50))


def test_an_extractive_summary_of_its_own_output_never_nests_or_grows() -> None:
    summary: str | None = "## Current work\n- Moving billing to Postgres (model summary)"
    for index in range(40):
        turns = [ChatMessage("user", ASK.format(index)), ChatMessage("assistant", "Done.")]
        summary = extractive_summary(turns, summary, max_tokens=300)
        assert estimate_tokens(summary) <= 300
        assert summary.count("## Earlier") <= 1
        assert summary.count("## Recent requests") == 1
    assert summary is not None
    assert "Moving billing to Postgres" in summary  # the model's summary, kept as Earlier
    assert "ABC-39" in summary


async def test_a_summary_that_ignores_max_tokens_is_capped(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    h.compaction.default = "- the summary goes on " * 10_000  # ~200 KB
    session = h.session()
    for index in range(12):
        result = await session.handle(ASK.format(index))
        await session.wait_idle()
        assert not result.is_error, result.text
    assert h.compaction.requests, "no compaction happened"
    stored = app.memory.history.summary(SESSION) or ""
    assert 0 < estimate_tokens(stored) <= summary_cap(h)


async def test_an_oversized_stored_summary_is_shortened_and_compact_says_so(
    harness: Callable[..., Harness],
) -> None:
    # What an earlier version stored: a 200 KB summary that broke every turn until /new.
    h = harness(**SHARED)
    app = h.open()
    session = h.session()
    await session.handle("hello")
    app.memory.history.save_summary(
        SESSION, "- earlier notes " * 12_000, through_id=0, now=h.clock()
    )
    session.rebuild_context()

    result = await session.handle(CommandCall("compact"))
    assert "shortened" in result.text, result.text
    assert not result.is_error
    assert estimate_tokens(app.memory.history.summary(SESSION) or "") <= summary_cap(h)
    result = await session.handle("still there?")
    assert not result.is_error


async def test_an_oversized_stored_summary_does_not_fail_the_next_turn(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    session = h.session()
    await session.handle("hello")
    app.memory.history.save_summary(
        SESSION, "- earlier notes " * 12_000, through_id=0, now=h.clock()
    )
    session.rebuild_context()
    result = await session.handle("what were we doing?")
    assert not result.is_error, result.text
    request = h.chat.requests[-1]
    sent = estimate_tokens(request.system) + sum(
        estimate_tokens(m.content) for m in request.messages
    )
    assert sent < 2048


async def test_compact_says_when_the_summarizer_failed(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    h.compaction.default = Unavailable("down")
    session = h.session()
    for index in range(3):
        await session.handle(ASK.format(index))
    result = await session.handle(CommandCall("compact"))
    assert "The summarizer failed (Unavailable)" in result.text, result.text
    result = await session.handle(CommandCall("compact"))
    assert result.text.startswith("Nothing to compact yet: the 2 messages"), result.text


class HangingProvider:
    """A summarizer that never answers."""

    name = "hanging"

    def __init__(self) -> None:
        self.calls = 0

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        yield await self.chat(request)

    async def aclose(self) -> None:
        return None


async def test_a_hanging_summarizer_never_holds_a_reply(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    hanging = HangingProvider()
    h.compaction = hanging  # type: ignore[assignment]
    app = h.open(compaction={**SMALL_WINDOW["compaction"], "timeout_seconds": 0.2})
    session = h.session()
    for index in range(16):
        result = await asyncio.wait_for(session.handle(ASK.format(index)), 5)
        assert not result.is_error
    await asyncio.wait_for(session.wait_idle(), 5)
    assert hanging.calls >= 1
    assert "## Recent requests" in (app.memory.history.summary(SESSION) or "")


async def test_a_prompt_the_model_refuses_recovers_with_shorter_notes_told_once(
    harness: Callable[..., Harness],
) -> None:
    # The model's real window is smaller than configured: compaction alone does not make the
    # prompt fit, shorter notes and fewer kept turns do.
    h = harness(**SHARED)
    h.open()
    session = h.session()

    def small_model(request: ChatRequest) -> str:
        size = estimate_tokens(request.system) + sum(
            estimate_tokens(m.content) for m in request.messages
        )
        sizes.append(size)
        if size > 600:
            raise ContextTooLong("prompt is too long")
        return "ok"

    for index in range(6):
        await session.handle(ASK.format(index))
    h.chat.default = small_model
    h.compaction.default = "- a long note about the billing migration " * 200  # capped
    sizes: list[int] = []
    told = 0
    for index in range(6, 14):
        result = await session.handle(ASK.format(index))
        await session.wait_idle()
        assert not result.is_error, (index, result.text)
        told += "too long for the model" in result.text
    assert told == 1, sizes
