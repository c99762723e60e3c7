"""Tool calling through both SDK providers against their fake servers: what is sent (tool schemas,
a history with calls and results, in each vendor's native form) and what is read back, streamed
and not."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fakes import FakeAnthropic, FakeModelServer, FakeOpenAI, Reply
from fakes.script import ToolUse

from flynn.errors import MalformedResponse
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
from flynn.providers.openai import OpenAIProvider

SdkProvider = AnthropicProvider | OpenAIProvider

REMINDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "in_seconds": {"type": "integer"}},
    "required": ["text"],
}
TOOLS = (
    ToolSpec("reminder_set", "Set a reminder.", REMINDER_SCHEMA),
    ToolSpec("task_list", "List open tasks.", {"type": "object", "properties": {}}),
)
ASK = ChatRequest(
    system="You are flynn.",
    messages=(ChatMessage("user", "remind me in 10 minutes to stretch"),),
    tools=TOOLS,
)

# A turn that went through two rounds of tools: a call with no text, then text with two calls
# (one whose arguments are not JSON), and results answered together with the person's words.
HISTORY = ChatRequest(
    system="You are flynn.",
    messages=(
        ChatMessage("user", "remind me at 18:30 to call mum"),
        ChatMessage(
            "assistant",
            "",
            tool_calls=(ToolCall("call_1", "reminder_set", '{"text": "call mum", "at": "18:30"}'),),
        ),
        ChatMessage(
            "user", "", tool_results=(ToolResult("call_1", "reminder_set", "set for 18:30"),)
        ),
        ChatMessage(
            "assistant",
            "Done. Checking your tasks too.",
            tool_calls=(
                ToolCall("call_2", "task_list", "{}"),
                ToolCall("call_3", "reminder_set", "{not json"),
            ),
        ),
        ChatMessage(
            "user",
            "thanks!",
            tool_results=(
                ToolResult("call_2", "task_list", "no open tasks"),
                ToolResult("call_3", "reminder_set", "arguments are not JSON", is_error=True),
            ),
        ),
    ),
    tools=TOOLS,
)


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
async def server(request: pytest.FixtureRequest) -> AsyncIterator[FakeModelServer]:
    fake: FakeModelServer = FakeAnthropic() if request.param == "anthropic" else FakeOpenAI()
    async with fake:
        yield fake


async def collect(events: AsyncIterator[StreamEvent]) -> tuple[list[str], ChatResponse]:
    deltas: list[str] = []
    finals: list[ChatResponse] = []
    async for event in events:
        if isinstance(event, ChatResponse):
            finals.append(event)
        else:
            assert not finals, "a delta arrived after the final response"
            deltas.append(event)
    assert len(finals) == 1
    return deltas, finals[0]


def arguments_of(response: ChatResponse) -> list[tuple[str, object]]:
    return [(call.name, json.loads(call.arguments)) for call in response.tool_calls]


# -- what is sent -------------------------------------------------------------------------------


async def test_anthropic_is_sent_tools_as_name_description_and_input_schema(
    fake_anthropic: FakeAnthropic,
) -> None:
    async with provider_for(fake_anthropic) as provider:
        await provider.chat(ASK)
        await provider.chat(ChatRequest(system="s", messages=ASK.messages))

    with_tools, without_tools = (request.json for request in fake_anthropic.requests)
    assert with_tools["tools"] == [
        {"name": "reminder_set", "description": "Set a reminder.", "input_schema": REMINDER_SCHEMA},
        {
            "name": "task_list",
            "description": "List open tasks.",
            "input_schema": {"type": "object", "properties": {}},
        },
    ]
    assert "tools" not in without_tools


async def test_openai_is_sent_tools_as_functions(fake_openai: FakeOpenAI) -> None:
    async with provider_for(fake_openai) as provider:
        await provider.chat(ASK)
        await provider.chat(ChatRequest(system="s", messages=ASK.messages))

    with_tools, without_tools = (request.json for request in fake_openai.requests)
    assert with_tools["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "reminder_set",
                "description": "Set a reminder.",
                "parameters": REMINDER_SCHEMA,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "task_list",
                "description": "List open tasks.",
                "parameters": {"type": "object", "properties": {}},
            },
        },
    ]
    assert "tools" not in without_tools


async def test_anthropic_history_has_tool_use_and_tool_result_blocks(
    fake_anthropic: FakeAnthropic,
) -> None:
    async with provider_for(fake_anthropic) as provider:
        await provider.chat(HISTORY)

    assert fake_anthropic.last.json["messages"] == [
        {"role": "user", "content": "remind me at 18:30 to call mum"},
        {
            # No empty text block before a call made without words.
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "reminder_set",
                    "input": {"text": "call mum", "at": "18:30"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": "set for 18:30",
                    "is_error": False,
                }
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Done. Checking your tasks too."},
                {"type": "tool_use", "id": "call_2", "name": "task_list", "input": {}},
                # Arguments that are not a JSON object go as the empty object the API accepts.
                {"type": "tool_use", "id": "call_3", "name": "reminder_set", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_2",
                    "content": "no open tasks",
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "call_3",
                    "content": "arguments are not JSON",
                    "is_error": True,
                },
                {"type": "text", "text": "thanks!"},
            ],
        },
    ]


async def test_openai_history_has_tool_calls_and_tool_messages(fake_openai: FakeOpenAI) -> None:
    async with provider_for(fake_openai) as provider:
        await provider.chat(HISTORY)

    def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
        function = {"name": name, "arguments": arguments}
        return {"id": call_id, "type": "function", "function": function}

    assert fake_openai.last.json["messages"] == [
        {"role": "system", "content": "You are flynn."},
        {"role": "user", "content": "remind me at 18:30 to call mum"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("call_1", "reminder_set", '{"text": "call mum", "at": "18:30"}')],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "set for 18:30"},
        {
            "role": "assistant",
            "content": "Done. Checking your tasks too.",
            "tool_calls": [
                call("call_2", "task_list", "{}"),
                # The model's own words go back as it wrote them.
                call("call_3", "reminder_set", "{not json"),
            ],
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "no open tasks"},
        {"role": "tool", "tool_call_id": "call_3", "content": "arguments are not JSON"},
        {"role": "user", "content": "thanks!"},
    ]


async def test_history_with_tools_is_plain_text_when_no_tools_are_offered(
    server: FakeModelServer,
) -> None:
    # Anthropic refuses tool_use blocks in a request that defines no tools; a compatible server
    # that was sent no tools may not know tool messages either.
    request = ChatRequest(system="s", messages=HISTORY.messages[:3])
    async with provider_for(server) as provider:
        await provider.chat(request)

    body = server.last.json
    assert "tools" not in body
    messages = [m for m in body["messages"] if m["role"] != "system"]
    assert messages == [
        {"role": "user", "content": "remind me at 18:30 to call mum"},
        {
            "role": "assistant",
            "content": '[called reminder_set {"text": "call mum", "at": "18:30"}]',
        },
        {"role": "user", "content": "[reminder_set returned: set for 18:30]"},
    ]


# -- what is read back ---------------------------------------------------------------------------


async def test_chat_returns_the_tool_calls_with_their_text(server: FakeModelServer) -> None:
    server.enqueue(
        Reply(
            "Setting that up.",
            tool_calls=(
                ToolUse("reminder_set", {"text": "stretch", "in_seconds": 600}, id="call_a"),
                ToolUse("task_list", {}, id="call_b"),
            ),
        )
    )
    async with provider_for(server) as provider:
        response = await provider.chat(ASK)

    assert response.text == "Setting that up."
    assert [call.id for call in response.tool_calls] == ["call_a", "call_b"]
    assert arguments_of(response) == [
        ("reminder_set", {"text": "stretch", "in_seconds": 600}),
        ("task_list", {}),
    ]


async def test_chat_with_only_tool_calls_has_empty_text(server: FakeModelServer) -> None:
    server.enqueue(Reply("", tool_calls=(ToolUse("task_list", {}),)))
    async with provider_for(server) as provider:
        response = await provider.chat(ASK)

    assert response.text == ""
    assert arguments_of(response) == [("task_list", {})]
    assert response.tool_calls[0].id


async def test_plain_reply_has_no_tool_calls(server: FakeModelServer) -> None:
    async with provider_for(server) as provider:
        response = await provider.chat(ASK)
        _, streamed = await collect(provider.stream(ASK))

    assert response.tool_calls == ()
    assert streamed.tool_calls == ()


async def test_stream_reassembles_arguments_sent_in_pieces(server: FakeModelServer) -> None:
    arguments = {"text": "stretch your legs", "in_seconds": 600}
    server.enqueue(
        Reply(
            "On it.",
            chunks=5,
            tool_calls=(
                ToolUse("reminder_set", arguments, id="call_a"),
                ToolUse("task_list", {}, id="call_b"),
            ),
        )
    )
    async with provider_for(server) as provider:
        deltas, final = await collect(provider.stream(ASK))

    assert "".join(deltas) == "On it."
    assert final.text == "On it."
    assert [call.id for call in final.tool_calls] == ["call_a", "call_b"]
    assert arguments_of(final) == [("reminder_set", arguments), ("task_list", {})]
    assert final.usage.input_tokens == 11


async def test_stream_of_only_tool_calls_yields_no_text(server: FakeModelServer) -> None:
    server.enqueue(Reply("", chunks=4, tool_calls=(ToolUse("reminder_set", {"text": "tea"}),)))
    async with provider_for(server) as provider:
        deltas, final = await collect(provider.stream(ASK))

    assert deltas == []
    assert final.text == ""
    assert arguments_of(final) == [("reminder_set", {"text": "tea"})]


def test_fake_splits_arguments_into_the_pieces_it_streams() -> None:
    # The reassembly test above means something only if the fake really sends pieces.
    call = ToolUse("reminder_set", {"text": "stretch your legs"})
    assert len(call.pieces(5)) == 5
    assert "".join(call.pieces(5)) == call.arguments_json()


async def test_openai_arguments_that_are_not_json_pass_through_raw(
    fake_openai: FakeOpenAI,
) -> None:
    # The tool validates them and answers the model with an error; the adapter only carries them.
    broken = '{"text": "tea", "in_seconds": '
    fake_openai.enqueue(
        Reply("", tool_calls=(ToolUse("reminder_set", broken),)),
        Reply("", chunks=4, tool_calls=(ToolUse("reminder_set", broken),)),
    )
    async with provider_for(fake_openai) as provider:
        response = await provider.chat(ASK)
        _, final = await collect(provider.stream(ASK))

    assert [call.arguments for call in response.tool_calls] == [broken]
    assert [call.arguments for call in final.tool_calls] == [broken]


async def test_anthropic_tool_input_that_is_not_an_object_is_malformed(
    fake_anthropic: FakeAnthropic,
) -> None:
    # The Messages API promises a JSON object; a server that breaks that cannot be read.
    fake_anthropic.enqueue(
        Reply("", tool_calls=(ToolUse("reminder_set", "{not json"),)),
        Reply("", tool_calls=(ToolUse("reminder_set", "{not json"),)),
    )
    async with provider_for(fake_anthropic) as provider:
        with pytest.raises(MalformedResponse):
            await provider.chat(ASK)
        with pytest.raises(MalformedResponse):
            await collect(provider.stream(ASK))


def test_calls_a_server_sent_without_ids_get_ids_unique_across_rounds() -> None:
    from types import SimpleNamespace

    from flynn.providers.openai import _ToolCallPieces

    def round_of_calls() -> tuple[str, ...]:
        pieces = _ToolCallPieces()
        function = SimpleNamespace(name="task_list", arguments="{}")
        pieces.add(0, SimpleNamespace(id=None, function=function))
        pieces.add(1, SimpleNamespace(id=None, function=function))
        return tuple(call.id for call in pieces.assemble())

    first, second = round_of_calls(), round_of_calls()
    assert len(set(first + second)) == 4
