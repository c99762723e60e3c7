"""Replies with tool calls through the wrappers (retry, fallback, metering) over the real SDKs and
their fake servers, and the scripted provider answering with tool calls."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from fakes import Fail, FakeAnthropic, FakeModelServer, FakeOpenAI, Reply
from fakes.flaky_provider import RecordingSleep
from fakes.script import ToolUse

from evals.scripted_provider import ScriptedProvider
from flynn.errors import Unavailable
from flynn.providers.anthropic import AnthropicProvider
from flynn.providers.base import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    StreamEvent,
    Task,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from flynn.providers.fallback import FallbackProvider
from flynn.providers.metered import MeteredProvider
from flynn.providers.openai import OpenAIProvider
from flynn.providers.retrying import RetryingProvider

SdkProvider = AnthropicProvider | OpenAIProvider

REQUEST = ChatRequest(
    system="You are flynn.",
    messages=(ChatMessage("user", "remind me in 10 minutes to stretch"),),
    tools=(ToolSpec("reminder_set", "Set a reminder.", {"type": "object", "properties": {}}),),
)
ARGUMENTS = {"text": "stretch", "in_seconds": 600}
CALL = ToolUse("reminder_set", ARGUMENTS, id="call_a")


def provider_for(server: FakeModelServer) -> SdkProvider:
    if isinstance(server, FakeAnthropic):
        return AnthropicProvider(
            "sk-test",
            "claude-test",
            base_url=server.base_url,
            timeout_seconds=5,
            max_output_tokens=256,
        )
    return OpenAIProvider(
        "sk-test", "gpt-test", base_url=server.base_url, timeout_seconds=5, max_output_tokens=256
    )


@pytest.fixture(params=["anthropic", "openai"])
def vendor(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make_server(vendor: str) -> FakeModelServer:
    return FakeAnthropic() if vendor == "anthropic" else FakeOpenAI()


async def events_of(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


def the_call(response: StreamEvent) -> tuple[str, str, object]:
    assert isinstance(response, ChatResponse)
    (call,) = response.tool_calls
    return call.id, call.name, json.loads(call.arguments)


@dataclass
class RecordingSink:
    rows: list[tuple[str, Task, Usage]] = field(default_factory=list)

    def record_usage(self, *, provider: str, model: str, task: Task, usage: Usage) -> None:
        self.rows.append((provider, task, usage))


# -- retry ------------------------------------------------------------------------------------


async def test_stream_of_only_tool_calls_dropped_midway_is_retried(vendor: str) -> None:
    # Arguments arrive in pieces but nothing is yielded until the final response, so a stream
    # that breaks among them has shown nothing and may be asked again.
    async with make_server(vendor) as server, provider_for(server) as inner:
        server.enqueue(
            Reply("", chunks=4, tool_calls=(CALL,), drop_after=2),
            Reply("", chunks=4, tool_calls=(CALL,)),
        )
        sleep = RecordingSleep()
        provider = RetryingProvider(inner, max_retries=2, sleep=sleep, random=lambda: 0.0)
        events = await events_of(provider.stream(REQUEST))

    assert len(events) == 1
    assert the_call(events[0]) == ("call_a", "reminder_set", ARGUMENTS)
    assert len(server.requests) == 2
    assert len(sleep.delays) == 1


async def test_stream_with_text_before_tool_calls_is_not_retried_once_started(
    vendor: str,
) -> None:
    async with make_server(vendor) as server, provider_for(server) as inner:
        server.enqueue(Reply("ok", chunks=1, tool_calls=(CALL,), drop_after=2))
        sleep = RecordingSleep()
        provider = RetryingProvider(inner, max_retries=2, sleep=sleep)
        seen: list[StreamEvent] = []
        with pytest.raises(Unavailable):
            async for event in provider.stream(REQUEST):
                seen.append(event)

    assert seen == ["ok"]
    assert len(server.requests) == 1
    assert sleep.delays == []


async def test_chat_with_tool_calls_is_retried_after_a_server_error(vendor: str) -> None:
    async with make_server(vendor) as server, provider_for(server) as inner:
        server.enqueue(Fail.server_error(503), Reply("", tool_calls=(CALL,)))
        provider = RetryingProvider(inner, max_retries=2, sleep=RecordingSleep())
        response = await provider.chat(REQUEST)

    assert the_call(response) == ("call_a", "reminder_set", ARGUMENTS)
    assert ["tools" in request.json for request in server.requests] == [True, True]


# -- fallback ---------------------------------------------------------------------------------


async def test_fallback_streams_the_next_providers_tool_calls(vendor: str) -> None:
    down, up = make_server(vendor), make_server(vendor)
    async with down, up, provider_for(down) as first, provider_for(up) as second:
        down.enqueue(Fail.server_error(503))
        up.enqueue(Reply("", chunks=3, tool_calls=(CALL,)))
        provider = FallbackProvider([first, second])
        events = await events_of(provider.stream(REQUEST))

    assert len(events) == 1
    assert the_call(events[0]) == ("call_a", "reminder_set", ARGUMENTS)
    assert "tools" in up.last.json


# -- metering ---------------------------------------------------------------------------------


async def test_usage_of_replies_with_tool_calls_is_recorded(vendor: str) -> None:
    sink = RecordingSink()
    async with make_server(vendor) as server, provider_for(server) as inner:
        server.enqueue(
            Reply("", tool_calls=(CALL,), input_tokens=40, output_tokens=12),
            Reply("", chunks=3, tool_calls=(CALL,), input_tokens=41, output_tokens=13),
        )
        provider = MeteredProvider(inner, sink, "chat")
        response = await provider.chat(REQUEST)
        events = await events_of(provider.stream(REQUEST))

    assert the_call(response) == the_call(events[-1])
    assert sink.rows == [
        (vendor, "chat", Usage(40, 12)),
        (vendor, "chat", Usage(41, 13)),
    ]


# -- the scripted provider ----------------------------------------------------------------------


async def test_scripted_response_with_tool_calls_is_returned_with_usage_filled() -> None:
    call = ToolCall("call_1", "reminder_set", '{"text": "stretch"}')
    scripted = ScriptedProvider([ChatResponse("", tool_calls=(call,))])

    response = await scripted.chat(REQUEST)

    assert response.tool_calls == (call,)
    assert response.text == ""
    assert response.usage.input_tokens > 0
    assert response.usage.output_tokens > 0
    assert scripted.requests == [REQUEST]


async def test_scripted_usage_counts_every_message_and_tool_round_and_a_bench_keeps_nothing() -> (
    None
):
    call = ToolCall("call_1", "reminder_set", '{"text": "stretch"}')
    result = ToolResult("call_1", "reminder_set", "set for 9:00")
    request = ChatRequest(
        system="s" * 40,
        messages=(
            ChatMessage("user", "u" * 400),
            ChatMessage("assistant", "", tool_calls=(call,)),
            ChatMessage("user", "", tool_results=(result,)),
            ChatMessage("assistant", "a" * 80),
        ),
    )
    scripted = ScriptedProvider(records=False)
    written = 40 + 400 + len(call.name) + len(call.arguments) + len(result.content) + 80
    response = await scripted.chat(request)
    assert response.usage.input_tokens == written // 4 + 4 * 4
    assert scripted.requests == []


async def test_scripted_response_keeps_the_usage_it_was_given() -> None:
    given = ChatResponse("hi", usage=Usage(3, 1), model="m", provider="p")
    scripted = ScriptedProvider([given])

    assert await scripted.chat(REQUEST) is given


async def test_scripted_stream_yields_words_then_the_response_with_its_calls() -> None:
    call = ToolCall("call_1", "task_list", "{}")
    scripted = ScriptedProvider(
        [ChatResponse("", tool_calls=(call,))],
        default=lambda request: ChatResponse("Let me look.", tool_calls=(call,)),
    )

    only_calls = await events_of(scripted.stream(REQUEST))
    with_text = await events_of(scripted.stream(REQUEST))

    assert len(only_calls) == 1
    assert isinstance(only_calls[0], ChatResponse)
    assert only_calls[0].tool_calls == (call,)
    assert with_text[:-1] == ["Let ", "me ", "look."]
    final = with_text[-1]
    assert isinstance(final, ChatResponse)
    assert final.tool_calls == (call,)
