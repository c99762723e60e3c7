"""Asking the model within a turn: model -> tool calls -> results -> model, up to a step limit,
streamed to the person when their channel can show it; each tool round is handed back to be
stored as it ends."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

import structlog

from flynn.errors import BadRequest, EmptyAnswer, FlynnError, ProviderError, ProviderTimeout
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse, Provider
from flynn.providers.lifecycle import open_stream
from flynn.sessions.tool_steps import ToolStep, step_messages
from flynn.tools.base import ToolContext, ToolRegistry

log = structlog.get_logger(__name__)

OnDelta = Callable[[str], Awaitable[None]]


class ReplyCut(FlynnError):
    """The model stopped answering after part of its reply was streamed to the person: no
    retry can take that back, so the turn ends with what they saw and a note."""

    def __init__(self, partial: str, error: ProviderError) -> None:
        super().__init__(f"reply cut off after {len(partial)} characters: {error}")
        self.partial = partial
        self.error = error


@dataclass(frozen=True, slots=True)
class Answer:
    """What the model finally said, and the tool rounds that led there."""

    response: ChatResponse
    steps: tuple[ToolStep, ...]
    text: str
    """What the person is sent: the text of every round, then the final reply."""


class ToolLoop:
    """Runs the model and the tools it calls for one session's turns."""

    def __init__(
        self,
        chat: Provider,
        tools: ToolRegistry | None,
        *,
        stream: bool,
        max_steps: int,
        turn_timeout: float = 120.0,
    ) -> None:
        self._chat = chat
        self._tools = tools
        self._stream = stream
        self._max_steps = max_steps
        self._turn_timeout = turn_timeout

    def deadline(self) -> float:
        """When a turn starting now must have its answer (the event loop's clock)."""
        return asyncio.get_running_loop().time() + self._turn_timeout

    async def ask(
        self,
        request: ChatRequest,
        on_delta: OnDelta | None,
        *,
        steps: list[ToolStep],
        context: Callable[[], ToolContext],
        keep: Callable[[list[ToolStep]], None],
        deadline: float | None = None,
    ) -> Answer:
        """Model -> tool calls -> results -> model, up to ``max_steps`` rounds. ``steps`` holds
        the rounds done before (a retry after compaction, a replay after a restart): they are
        not run again, the model is shown them and goes on; each new round is appended to it
        and handed to ``keep`` as it ends. A tool's failure is its result, for the model to
        read; only provider errors propagate, as ``ReplyCut`` once any of the reply was
        streamed to the person. Every model call (with its retries and fallbacks) must end by
        ``deadline`` (default: ``turn_timeout`` from now), else ``ProviderTimeout``."""
        deadline = self.deadline() if deadline is None else deadline
        tools = self._tools
        said: list[str] = [step.text for step in steps if step.text]
        messages = [*request.messages, *step_messages(steps)]
        acting_for: ToolContext | None = None
        while True:
            if said and on_delta is not None:
                await on_delta("\n\n")  # what the next round says starts a new paragraph
            try:
                asking = replace(request, messages=tuple(messages))
                response = await self._call(asking, on_delta, deadline)
            except ReplyCut as cut:
                raise ReplyCut("\n\n".join([*said, cut.partial]), cut.error) from cut.error
            except ProviderError as exc:
                if said and on_delta is not None:
                    raise ReplyCut("\n\n".join(said), exc) from exc
                raise
            if not response.tool_calls or tools is None or not request.tools:
                break
            if len(steps) >= self._max_steps:
                log.warning("turn.tool_steps_exhausted", steps=len(steps))
                stopped = (
                    f"(I stopped after {self._max_steps} rounds of tool calls without "
                    "finishing; tell me how to go on.)"
                )
                response = replace(
                    response, text="\n\n".join(t for t in (response.text, stopped) if t)
                )
                if on_delta is not None:
                    await on_delta(stopped)
                break
            if response.text:
                said.append(response.text)
            acting_for = acting_for or context()
            results = await tools.run(response.tool_calls, acting_for)
            steps.append(ToolStep(response.text, response.tool_calls, results))
            keep(steps)
            messages.append(ChatMessage("assistant", response.text, tool_calls=response.tool_calls))
            messages.append(ChatMessage("user", "", tool_results=results))
        if not response.text:
            # Some models end a tool round with no words: what the tools that worked reported
            # is a factual answer. Without any, there is no answer: an error, never "Done.".
            done = [r.content for step in steps for r in step.results if not r.is_error]
            if not done:
                empty = EmptyAnswer("the model answered with no text", provider=response.provider)
                if said and on_delta is not None:
                    raise ReplyCut("\n\n".join(said), empty) from empty
                raise empty
            response = replace(response, text="\n".join(done))
        text = "\n\n".join([*said, response.text])
        return Answer(replace(response, tool_calls=()), tuple(steps), text)

    async def _call(
        self, request: ChatRequest, on_delta: OnDelta | None, deadline: float
    ) -> ChatResponse:
        provider = self._chat
        streamed: list[str] = []
        try:
            async with asyncio.timeout_at(deadline):
                if on_delta is None or not self._stream:
                    return await provider.chat(request)
                final = await self._streamed(request, on_delta, streamed)
        except TimeoutError:
            error: ProviderError = ProviderTimeout(
                f"no answer within the turn's {self._turn_timeout:g} s", provider=provider.name
            )
        except ProviderError as exc:
            error = exc
        else:
            if final is None:
                raise BadRequest("stream ended without a final response", provider=provider.name)
            return final
        if streamed:
            raise ReplyCut("".join(streamed), error) from error
        raise error

    async def _streamed(
        self, request: ChatRequest, on_delta: OnDelta, streamed: list[str]
    ) -> ChatResponse | None:
        """Streams the answer to ``on_delta``, each piece also kept in ``streamed``; the final
        response, None when the stream ended without one."""
        final: ChatResponse | None = None
        async with open_stream(self._chat, request) as events:
            async for event in events:
                if isinstance(event, str):
                    if event:
                        streamed.append(event)
                        await on_delta(event)
                else:
                    final = event
        return final
