"""The benchmarks' scripted provider reports the prompt tokens of each request's whole
conversation, though it counts only what a request adds to one it saw before."""

from __future__ import annotations

from evals.scripted_provider import ScriptedProvider
from flynn.providers.base import ChatMessage, ChatRequest, ToolCall, ToolResult


def _request(*messages: ChatMessage) -> ChatRequest:
    return ChatRequest(system="You are Flynn.", messages=messages, max_tokens=100)


def _prompt_tokens(request: ChatRequest) -> int:
    """What the provider reports, counted here from scratch."""
    chars = len(request.system)
    for message in request.messages:
        chars += len(message.content)
        chars += sum(len(call.name) + len(call.arguments) for call in message.tool_calls)
        chars += sum(len(result.content) for result in message.tool_results)
    return chars // 4 + 4 * len(request.messages)


async def test_each_request_is_counted_whole_whatever_came_before() -> None:
    provider = ScriptedProvider(default="ok", records=False)
    hello = ChatMessage("user", "Hello there, how are you today?")
    fine = ChatMessage("assistant", "Fine.")
    called = ChatMessage("assistant", "", tool_calls=(ToolCall("1", "remind", '{"at": "9:00"}'),))
    result = ChatMessage("user", "", tool_results=(ToolResult("1", "remind", "Set for 9:00."),))
    learning = ChatMessage("user", "Extract the facts of: " + "a long conversation " * 40)
    requests = [
        _request(hello),
        _request(hello, fine, called, result),  # goes on from the first
        _request(learning),  # another conversation between two turns
        _request(hello, fine, called, result, ChatMessage("user", "Thanks!")),
        _request(hello, ChatMessage("assistant", "Not so fine, " * 30)),  # shorter, then apart
        _request(ChatMessage("user", "Hello there, how are you today?"), fine),  # equal messages
    ]
    for request in requests:
        response = await provider.chat(request)
        assert response.usage.input_tokens == _prompt_tokens(request)
