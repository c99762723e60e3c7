"""RedactingProvider: no request reaches the model with a credential, and a conversation's earlier
messages, redacted once, are not redacted again on every turn (what it remembers is exactly what
redacting anew gives)."""

from __future__ import annotations

import random

from evals.scripted_provider import ScriptedProvider
from flynn.credentials import REDACTED_SECRET
from flynn.providers.base import (
    ChatMessage,
    ChatRequest,
    ImagePart,
    ToolCall,
    ToolResult,
)
from flynn.providers.redacting import RedactedMessages, RedactingProvider, redacted

SECRETS = (
    "my api key is sk-live-4f9d8a7b6c5e4d3c2b1a0f9e",
    "the admin password is hunter2, ok?",
    "pay with 4111 1111 1111 1111 please",
)
PLAIN = ("what should I cook tonight?", "Try a lentil soup.", "thanks, and for dessert?")


def _conversation(turns: int, seed: int = 3) -> list[ChatMessage]:
    """Alternating turns, some holding a credential, one a tool round."""
    rng = random.Random(seed)
    messages = []
    for index in range(turns):
        role = "user" if index % 2 == 0 else "assistant"
        text = rng.choice(SECRETS if rng.random() < 0.2 else PLAIN) + f" ({index})"
        if index == 5:
            call = ToolCall("c1", "remember", '{"text": "password: Tr0ub4dor&3"}')
            messages.append(ChatMessage("assistant", text, tool_calls=(call,)))
        elif index == 6:
            result = ToolResult(
                "c1", "remember", "stored token = ghp_abcdefghijklmnopqrstuvwxyz0123456789"
            )
            messages.append(ChatMessage("user", text, tool_results=(result,)))
        else:
            messages.append(ChatMessage(role, text))
    return messages


async def test_each_request_is_what_redacting_it_anew_gives() -> None:
    inner = ScriptedProvider(default="ok")
    gate = RedactingProvider(inner)
    conversation = _conversation(40)
    for turn in range(1, len(conversation) + 1):
        request = ChatRequest(system="be brief", messages=tuple(conversation[:turn]))
        await gate.chat(request)
        assert inner.requests[-1] == redacted(request)
    sent = inner.requests[-1]
    assert any(REDACTED_SECRET in m.content for m in sent.messages)
    assert not any("hunter2" in m.content or "4111 1111" in m.content for m in sent.messages)
    assert REDACTED_SECRET in sent.messages[5].tool_calls[0].arguments
    assert REDACTED_SECRET in sent.messages[6].tool_results[0].content


async def test_conversations_taking_turns_or_rewritten_are_redacted_as_anew() -> None:
    """Requests go on from one of the last few, or not: two conversations taking turns, one
    whose earlier message was rewritten (a forget), one cut short (a compaction), and one
    reloaded from the store (equal messages, other objects)."""
    inner = ScriptedProvider(default="ok")
    gate = RedactingProvider(inner)
    first, second = _conversation(30, seed=1), _conversation(30, seed=2)
    for turn in range(1, 31):
        for conversation in (first, second):
            request = ChatRequest(system="s", messages=tuple(conversation[:turn]))
            await gate.chat(request)
            assert inner.requests[-1] == redacted(request)
    rewritten = [*first[:3], ChatMessage("user", "my PIN is 4821"), *first[4:]]
    cut = first[20:]
    reloaded = [ChatMessage(m.role, m.content, m.tool_calls, m.tool_results) for m in second]
    for messages in (rewritten, cut, reloaded, [*reloaded, ChatMessage("user", SECRETS[2])]):
        request = ChatRequest(system="s", messages=tuple(messages))
        await gate.chat(request)
        assert inner.requests[-1] == redacted(request)
    assert "4821" not in inner.requests[-4].messages[3].content


async def test_a_streamed_request_is_redacted_too() -> None:
    inner = ScriptedProvider(default="fine")
    gate = RedactingProvider(inner)
    request = ChatRequest(system="s", messages=(ChatMessage("user", SECRETS[1]),))
    events = [event async for event in gate.stream(request)]
    assert events[-1] == await inner.chat(redacted(request))
    assert "hunter2" not in inner.requests[0].messages[0].content


def test_a_remembered_message_is_redacted_as_before_and_a_changed_one_anew() -> None:
    known = RedactedMessages()
    message = ChatMessage("user", SECRETS[0])
    first = known.redact(message)
    assert first[1] == 1 and REDACTED_SECRET in first[0].content
    # The same text again (another object: a conversation reloaded from the store).
    assert known.redact(ChatMessage("user", SECRETS[0])) == first
    assert len(known) == 1
    # A message edited since (a forget rewrote it, say) is another message, redacted anew.
    edited = ChatMessage("user", SECRETS[0] + " and the password is hunter2")
    cleaned, count = known.redact(edited)
    assert count == 2 and "hunter2" not in cleaned.content
    plain = ChatMessage("assistant", PLAIN[1])
    assert known.redact(plain) == (plain, 0)


def test_what_is_remembered_is_bounded_and_pictures_never_kept() -> None:
    known = RedactedMessages(limit=100)
    for index in range(10):
        known.redact(ChatMessage("user", f"message number {index} " + "x" * 20))
        assert len(known) <= 100 // 35 + 1
    shown = ChatMessage("user", SECRETS[1], images=(ImagePart("image/png", b"\x89PNG"),))
    before = len(known)
    cleaned, count = known.redact(shown)
    assert count == 1 and cleaned.images == shown.images
    assert len(known) == before
