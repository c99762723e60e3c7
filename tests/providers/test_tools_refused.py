"""A model or server that takes no tools: the refusal is remembered on the provider, logged once,
and the same call is made again at once without tools, its history's tool turns told in text."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import structlog
from fakes import Fail, FakeAnthropic, FakeModelServer, FakeOpenAI, Reply
from fakes.http_server import ToolSupport
from fakes.script import ToolUse

from flynn.errors import BadRequest
from flynn.providers.anthropic import AnthropicProvider
from flynn.providers.base import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    StreamEvent,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from flynn.providers.http_errors import says_tools_unsupported
from flynn.providers.openai import OpenAIProvider

SdkProvider = AnthropicProvider | OpenAIProvider

TOOLS = (ToolSpec("reminder_set", "Set a reminder.", {"type": "object", "properties": {}}),)
REQUEST = ChatRequest(
    system="You are flynn.",
    messages=(
        ChatMessage("user", "remind me at 18:30"),
        ChatMessage(
            "assistant",
            "Sure.",
            tool_calls=(ToolCall("call_1", "reminder_set", '{"at": "18:30"}'),),
        ),
        ChatMessage(
            "user",
            "and what else?",
            tool_results=(ToolResult("call_1", "reminder_set", "no text given", is_error=True),),
        ),
    ),
    tools=TOOLS,
)
TOLD_IN_TEXT = [
    {"role": "user", "content": "remind me at 18:30"},
    {"role": "assistant", "content": 'Sure.\n[called reminder_set {"at": "18:30"}]'},
    {"role": "user", "content": "[reminder_set failed: no text given]\nand what else?"},
]

# What servers actually say: Ollama, llama.cpp without --jinja, vLLM without auto tool choice,
# an OpenAI model that takes no tools, and a proxy's generic wording.
REFUSALS = [
    "registry.ollama.ai/library/gemma:2b does not support tools",
    "tools param requires --jinja flag",
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    "Unsupported parameter: 'tools' is not supported with this model.",
    "tools are not supported by this model",
    "This model does not support function calling",
]


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


def make_server(vendor: str, tools: ToolSupport = "supported") -> FakeModelServer:
    return FakeAnthropic(tools=tools) if vendor == "anthropic" else FakeOpenAI(tools=tools)


async def collect(events: AsyncIterator[StreamEvent]) -> tuple[list[str], ChatResponse]:
    items = [event async for event in events]
    final = items[-1]
    assert isinstance(final, ChatResponse)
    deltas = [item for item in items[:-1] if isinstance(item, str)]
    assert len(deltas) == len(items) - 1
    return deltas, final


def conversation(server: FakeModelServer, index: int) -> list[object]:
    return [m for m in server.requests[index].json["messages"] if m["role"] != "system"]


@pytest.mark.parametrize("refusal", REFUSALS)
async def test_refused_tools_are_dropped_and_the_call_made_again(vendor: str, refusal: str) -> None:
    async with make_server(vendor) as server:
        server.enqueue(Fail.bad_request(refusal), Reply("Nothing else is due today."))
        async with provider_for(server) as provider:
            with structlog.testing.capture_logs() as logs:
                response = await provider.chat(REQUEST)

    assert response.text == "Nothing else is due today."
    assert response.tool_calls == ()
    first, again = (request.json for request in server.requests)
    assert "tools" in first
    assert "tools" not in again
    assert conversation(server, 1) == TOLD_IN_TEXT
    assert [log["event"] for log in logs] == ["provider.tools_unsupported"]
    assert logs[0]["log_level"] == "warning"
    assert logs[0]["provider"] == provider.name
    assert refusal in logs[0]["error"]


async def test_refusal_is_remembered_and_logged_once(vendor: str) -> None:
    async with make_server(vendor, tools="refused") as server, provider_for(server) as provider:
        with structlog.testing.capture_logs() as logs:
            await provider.chat(REQUEST)
            _, streamed = await collect(provider.stream(REQUEST))
            await provider.chat(REQUEST)

    offered = ["tools" in request.json for request in server.requests]
    # One refusal, then its retry; after that tools are never sent again.
    assert offered == [True, False, False, False]
    assert streamed.text.startswith("echo: ")
    assert [log["event"] for log in logs] == ["provider.tools_unsupported"]


async def test_stream_refused_tools_is_streamed_again_without_them(vendor: str) -> None:
    async with make_server(vendor, tools="refused") as server:
        server.enqueue(Reply("all clear", chunks=3))
        async with provider_for(server) as provider:
            deltas, final = await collect(provider.stream(REQUEST))

    assert "".join(deltas) == "all clear"
    assert final.text == "all clear"
    assert ["tools" in request.json for request in server.requests] == [True, False]
    assert conversation(server, 1) == TOLD_IN_TEXT


async def test_each_provider_remembers_only_its_own_refusal(vendor: str) -> None:
    refusing, willing = make_server(vendor, tools="refused"), make_server(vendor)
    async with refusing, willing, provider_for(refusing) as first, provider_for(willing) as second:
        await first.chat(REQUEST)
        await second.chat(REQUEST)

    assert "tools" in willing.last.json


async def test_other_bad_requests_about_tools_are_raised_and_tools_kept(vendor: str) -> None:
    # A schema the server rejects is our mistake, not a model without tools: dropping the
    # tools would hide it.
    wrong_schema = "tools.0.custom.input_schema: JSON schema is invalid"
    async with make_server(vendor) as server:
        server.enqueue(Fail.bad_request(wrong_schema))
        async with provider_for(server) as provider:
            with structlog.testing.capture_logs() as logs:
                with pytest.raises(BadRequest) as caught:
                    await provider.chat(REQUEST)
                await provider.chat(REQUEST)

    assert type(caught.value) is BadRequest
    assert ["tools" in request.json for request in server.requests] == [True, True]
    assert logs == []


async def test_refusal_wording_without_tools_offered_is_a_plain_bad_request(vendor: str) -> None:
    request = ChatRequest(system="s", messages=(ChatMessage("user", "hi"),))
    async with make_server(vendor) as server:
        server.enqueue(Fail.bad_request("this model does not support tools"))
        async with provider_for(server) as provider:
            with pytest.raises(BadRequest) as caught:
                await provider.chat(request)

    assert type(caught.value) is BadRequest
    assert len(server.requests) == 1


async def test_server_that_ignores_tools_just_answers_in_text(vendor: str) -> None:
    # Nothing to detect: the turn gets text, and tools are still offered next time.
    async with make_server(vendor, tools="ignored") as server:
        server.enqueue(
            Reply("I cannot set reminders.", tool_calls=(ToolUse("reminder_set", {}),)),
            Reply("Still text.", tool_calls=(ToolUse("reminder_set", {}),)),
        )
        async with provider_for(server) as provider:
            with structlog.testing.capture_logs() as logs:
                response = await provider.chat(REQUEST)
                _, streamed = await collect(provider.stream(REQUEST))

    assert (response.text, response.tool_calls) == ("I cannot set reminders.", ())
    assert (streamed.text, streamed.tool_calls) == ("Still text.", ())
    assert ["tools" in request.json for request in server.requests] == [True, True]
    assert logs == []


@pytest.mark.parametrize(
    "message",
    [
        "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after",
        "tools.0.input_schema: JSON schema is invalid",
        "prompt is too long: 250000 tokens > 200000 maximum",
        "the function of this endpoint is to chat",
    ],
)
def test_errors_about_what_is_in_the_tools_are_not_refusals(message: str) -> None:
    assert not says_tools_unsupported(message)


@pytest.mark.parametrize("message", REFUSALS)
def test_refusals_are_recognised(message: str) -> None:
    assert says_tools_unsupported(message)
