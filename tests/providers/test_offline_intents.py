"""The plain requests the offline assistant acts on, and the many it leaves alone."""

from __future__ import annotations

import json

import pytest

from flynn.providers.offline_intents import tool_call_for

ALL = frozenset(
    {"reminder_set", "reminder_list", "reminder_cancel", "task_add", "task_list", "task_done"}
)


@pytest.mark.parametrize(
    ("text", "name", "arguments"),
    [
        (
            "remind me in 20 seconds to stretch",
            "reminder_set",
            {"text": "stretch", "in_seconds": 20},
        ),
        (
            "Remind me in 10 minutes to check the oven!",
            "reminder_set",
            {"text": "check the oven", "in_seconds": 600},
        ),
        (
            "remind me in an hour to call Sam",
            "reminder_set",
            {"text": "call Sam", "in_seconds": 3600},
        ),
        (
            "remind me in half an hour about the laundry",
            "reminder_set",
            {"text": "the laundry", "in_seconds": 1800},
        ),
        ("remind me at 18:30 to call mum", "reminder_set", {"text": "call mum", "at": "18:30"}),
        (
            "remind me at 7pm to water the plants",
            "reminder_set",
            {"text": "water the plants", "at": "19:00"},
        ),
        ("remind me at 12am to sleep", "reminder_set", {"text": "sleep", "at": "00:00"}),
        ("remind me to stretch in 5 min", "reminder_set", {"text": "stretch", "in_seconds": 300}),
        (
            "please remind me to call mum at 9.15",
            "reminder_set",
            {"text": "call mum", "at": "09:15"},
        ),
        (
            "remind me in 2 weeks to renew the passport",
            "reminder_set",
            {"text": "renew the passport", "in_seconds": 14 * 86400},
        ),
        ("what are my reminders?", "reminder_list", {}),
        ("Show my reminders", "reminder_list", {}),
        ("cancel reminder 2", "reminder_cancel", {"id": 2}),
        ("delete reminder #12.", "reminder_cancel", {"id": 12}),
        ("add buy milk to my tasks", "task_add", {"text": "buy milk"}),
        ("Add call the plumber to my to-do list", "task_add", {"text": "call the plumber"}),
        ("what are my tasks?", "task_list", {}),
        ("task 3 is done", "task_done", {"id": 3}),
        ("mark task 1 as done", "task_done", {"id": 1}),
        ("done with task 4", "task_done", {"id": 4}),
    ],
)
def test_requests_become_tool_calls(text: str, name: str, arguments: dict[str, object]) -> None:
    call = tool_call_for(text, ALL)
    assert call is not None
    assert call.name == name
    assert json.loads(call.arguments) == arguments


@pytest.mark.parametrize(
    "text",
    [
        "can you remind me what we said about Lisbon?",
        "remind me at 25:00 to sleep",
        "remind me at 13pm to eat",
        "the reminders app is broken",
        "add salt to the soup",
        "my tasks today were hard",
        "hello",
        "remind me in 0 seconds to blink",
        "remind me in a few minutes to blink",  # no time to set
        "remind me in 3 months to renew",  # months are no number of seconds: the model's
    ],
)
def test_other_text_is_left_alone(text: str) -> None:
    assert tool_call_for(text, ALL) is None


def test_a_tool_not_on_offer_is_not_called() -> None:
    assert tool_call_for("what are my reminders?", frozenset({"task_list"})) is None
