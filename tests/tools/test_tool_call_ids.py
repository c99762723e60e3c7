"""Tool call ids a strict provider takes after a reload: Anthropic refuses a request in which two
``tool_use`` blocks share an id ("`tool_use` ids must be unique"), anywhere in the history, or an
id outside ``[a-zA-Z0-9_-]``. The offline assistant and OpenAI-compatible servers that send no id
(``call_0`` every round) gave every turn the same ones, so a session that acted twice before its
owner set an Anthropic key failed every turn after."""

from __future__ import annotations

import re

from flynn.providers.base import ChatMessage, ChatRequest, ToolCall, ToolResult, ToolSpec
from flynn.providers.offline import OfflineProvider
from flynn.sessions.tool_steps import ToolStep, decode_steps, encode_steps, step_messages

ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
REMIND = ToolSpec("reminder_set", "Set a reminder.", {"type": "object", "properties": {}})


async def test_the_offline_assistant_never_gives_two_calls_one_id() -> None:
    offline = OfflineProvider()
    request = ChatRequest(
        system="",
        messages=(ChatMessage("user", "remind me in 10 minutes to stretch"),),
        tools=(REMIND,),
    )
    first = (await offline.chat(request)).tool_calls
    second = (await offline.chat(request)).tool_calls
    ids = [call.id for call in (*first, *second)]
    assert len(ids) == 2 and len(set(ids)) == 2
    assert all(ANTHROPIC_ID.match(call_id) for call_id in ids)


def _turn(call_id: str) -> str:
    call = ToolCall(call_id, "reminder_set", '{"text":"stretch","in_seconds":60}')
    result = ToolResult(call_id, "reminder_set", "Reminder set: 1. stretch")
    return encode_steps([ToolStep("", (call,), (result,))])


def test_stored_steps_replay_with_ids_unique_across_turns_and_paired_with_their_results() -> None:
    stored = [_turn("call_0"), _turn("call_0"), _turn("offline reminder.set")]
    messages = [m for text in stored for m in step_messages(decode_steps(text))]
    calls = [call for m in messages for call in m.tool_calls]
    results = [result for m in messages for result in m.tool_results]
    assert len(calls) == 3 and len({call.id for call in calls}) == 3
    assert all(ANTHROPIC_ID.match(call.id) for call in calls)
    assert [result.call_id for result in results] == [call.id for call in calls]
    # A stored row reads back the same every time: the replayed prompt stays cacheable.
    assert decode_steps(stored[0]) == decode_steps(stored[0])


def test_a_made_up_tool_name_is_stored_in_characters_a_strict_provider_takes() -> None:
    call = ToolCall("call_1", "functions.reminder set", "{}")
    result = ToolResult("call_1", "functions.reminder set", "error: there is no tool", True)
    (replayed_call, replayed_result) = step_messages(
        decode_steps(encode_steps([ToolStep("", (call,), (result,))]))
    )
    (stored,) = replayed_call.tool_calls
    assert stored.name == "functions_reminder_set"
    assert replayed_result.tool_results[0].name == stored.name
