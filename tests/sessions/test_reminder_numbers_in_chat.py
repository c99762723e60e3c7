"""What a person sees of their reminders in a chat (the tools' replies, ``/reminders``,
``/reminders cancel N`` and the prompt's pending-reminders block) numbers them 1, 2, 3 on their
own, whatever the distillation runs and other people have on the schedule, and keeps a number
after another one is cancelled."""

from __future__ import annotations

import json
from collections.abc import Callable

from conftest import SMALL_WINDOW, Harness

from flynn.distill.distiller import TIERS
from flynn.distill.runs import plan_jobs
from flynn.messages import ChannelAccount, CommandCall, SessionKey
from flynn.providers.base import ChatResponse, ToolCall
from flynn.sessions.orchestrator import Orchestrator

USERS = {"alice": {"gateway": ["alice-laptop"]}, "bob": {"gateway": ["bob-laptop"]}}


def _person(h: Harness, client: str) -> Orchestrator:
    assert h.app is not None
    return h.app.sessions.orchestrator(
        SessionKey("gateway", client), ChannelAccount("gateway", client)
    )


async def _set(h: Harness, person: Orchestrator, text: str, minutes: int) -> str:
    """Has the model set one reminder for ``person``; returns what the tool answered."""
    arguments = json.dumps({"text": text, "in_seconds": minutes * 60})
    h.chat.push(ChatResponse("", tool_calls=(ToolCall("c1", "reminder_set", arguments),)), "ok")
    await person.handle(f"remind me to {text}")
    (result,) = [m for m in h.chat.requests[-1].messages if m.tool_results][-1].tool_results
    assert not result.is_error, result.content
    return result.content


async def test_reminders_in_a_chat_are_numbered_per_person_and_keep_their_numbers(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SMALL_WINDOW, users=USERS, persona={"tier": 2})
    app = h.open()
    # As a daemon's first start does: three distillation runs each, ids 1-6.
    people = {"users/alice": "UTC", "users/bob": "UTC"}
    assert plan_jobs(app.schedule, people, dict.fromkeys(TIERS, "0 3 * * *"), now=h.clock()) == 6
    alice, bob = _person(h, "alice@alice-laptop"), _person(h, "bob@bob-laptop")

    assert (await _set(h, alice, "call mum", 30)).startswith("Reminder set: 1. call mum")
    assert (await _set(h, bob, "water plants", 5)).startswith("Reminder set: 1. water plants")
    assert (await _set(h, alice, "pay rent", 20)).startswith("Reminder set: 2. pay rent")
    assert (await _set(h, alice, "dentist", 10)).startswith("Reminder set: 3. dentist")

    listed = (await alice.handle(CommandCall("reminders"))).text
    assert [line.split(": ")[0] for line in listed.splitlines()] == [
        "3. dentist",  # soonest first
        "2. pay rent",
        "1. call mum",
    ]

    cancelled = await alice.handle(CommandCall("reminders", "cancel 2"))
    assert cancelled.error_code is None and cancelled.text == "Cancelled reminder 2: pay rent"
    again = await alice.handle(CommandCall("reminders", "cancel #2"))
    assert again.error_code == "bad_request" and "no pending reminder 2" in again.text

    # Bob has no reminder 3: alice's is not his to cancel.
    refused = await bob.handle(CommandCall("reminders", "cancel 3"))
    assert refused.error_code == "bad_request" and "shows the numbers" in refused.text
    assert "1. water plants" in (await bob.handle(CommandCall("reminders"))).text

    listed = (await alice.handle(CommandCall("reminders"))).text
    assert [line.split(": ")[0] for line in listed.splitlines()] == ["3. dentist", "1. call mum"]
    assert (await _set(h, alice, "stretch", 40)).startswith("Reminder set: 4. stretch")

    await alice.handle("what's coming up?")
    system = h.chat.requests[-1].system
    block = system[system.index("Pending reminders") :]
    assert "- 3. dentist (next " in block and "- 1. call mum (next " in block
    assert "- 4. stretch (next " in block and "pay rent" not in block
    assert "water plants" not in system
