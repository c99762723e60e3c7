"""The tool loop in the orchestrator: model -> tool calls -> results -> model, with the calls
stored beside the reply, replayed after a restart, scoped to the person, and never able to break
the session."""

from __future__ import annotations

import json
from collections.abc import Callable

from conftest import SMALL_WINDOW, Harness

from flynn.memory.store import StoredMessage
from flynn.messages import ChannelAccount, CommandCall, SessionKey
from flynn.providers.base import ChatRequest, ChatResponse, ToolCall

SHARED = {**SMALL_WINDOW, "memory": {"user_namespace": "user"}}


def calls(*items: tuple[str, dict[str, object] | str]) -> ChatResponse:
    return ChatResponse(
        "",
        tool_calls=tuple(
            ToolCall(f"call-{n}", name, args if isinstance(args, str) else json.dumps(args))
            for n, (name, args) in enumerate(items)
        ),
    )


def results_in(request: ChatRequest) -> list[tuple[str, str, bool]]:
    """The results of the last tool round the request carries."""
    last = [message for message in request.messages if message.tool_results][-1]
    return [(result.name, result.content, result.is_error) for result in last.tool_results]


async def test_a_tool_call_runs_and_the_model_answers_with_its_result(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    h.chat.push(calls(("task_add", {"text": "buy milk"})), "Added it to your list.")
    session = h.session()
    result = await session.handle("add buy milk to my tasks")
    assert result.text == "Added it to your list."
    assert not result.is_error
    first, second = h.chat.requests[-2:]
    assert {spec.name for spec in first.tools} >= {"task_add", "reminder_set", "remember"}
    assert results_in(second) == [("task_add", "Added task 1: buy milk", False)]
    assert json.loads((h.data_dir / "user" / "TASKS.json").read_text())[0]["text"] == "buy milk"


async def test_tool_calls_are_stored_with_the_reply_and_replayed_after_a_restart(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    h.chat.push(calls(("task_add", {"text": "buy milk"})), "Done.")
    await h.session().handle("add buy milk to my tasks")
    await h.close()

    h.open()  # a daemon restart: the session is rebuilt from the database
    await h.session().handle("and what else?")
    messages = h.chat.requests[-1].messages
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[1].tool_calls[0].name == "task_add"
    assert messages[2].tool_results[0].content == "Added task 1: buy milk"
    assert messages[3].content == "Done."


async def test_failing_tools_go_back_to_the_model_and_the_session_keeps_working(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    h.chat.push(
        calls(
            ("task_done", {"id": 99}),
            ("task_add", "{not json"),
            ("launch_rockets", {}),
            ("reminder_set", {"text": "x", "at": "yesterday-ish"}),
        ),
        "Sorry, that did not work.",
    )
    session = h.session()
    result = await session.handle("do things")
    assert result.text == "Sorry, that did not work."
    outcomes = results_in(h.chat.requests[-1])
    assert [(name, failed) for name, _, failed in outcomes] == [
        ("task_done", True),
        ("task_add", True),
        ("launch_rockets", True),
        ("reminder_set", True),
    ]
    assert "there is no task 99" in outcomes[0][1]
    assert "invalid arguments" in outcomes[1][1]
    assert (await session.handle("still there?")).text == "ok"


async def test_max_steps_stops_a_model_that_calls_tools_forever(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED, tools={"max_steps": 3})
    h.open()
    h.chat.default = calls(("task_list", {}))
    result = await h.session().handle("loop")
    assert "stopped after 3 rounds" in result.text
    assert len(h.chat.requests) == 4  # three rounds of tools, then the call that was refused
    h.chat.default = "ok"
    assert (await h.session().handle("next")).text == "ok"


async def test_streamed_rounds_show_text_as_it_comes(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    h.chat.push(
        ChatResponse("Let me look.", tool_calls=(ToolCall("c", "task_list", "{}"),)),
        "You have no tasks.",
    )
    deltas: list[str] = []

    async def on_delta(text: str) -> None:
        deltas.append(text)

    result = await h.session().handle("my tasks?", on_delta)
    assert result.text == "Let me look.\n\nYou have no tasks."
    assert "".join(deltas) == result.text


async def test_off_the_record_offers_no_tool_that_writes(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    await session.handle(CommandCall("otr", "on"))
    h.chat.push(calls(("task_add", {"text": "secret plan"})), "ok")
    await session.handle("add secret plan to my tasks")
    offered = {spec.name for spec in h.chat.requests[-2].tools}
    assert "task_list" in offered
    assert not offered & {"task_add", "remember", "reminder_set", "scratch_write"}
    assert results_in(h.chat.requests[-1])[0][2] is True
    assert not (h.data_dir / "user" / "TASKS.json").exists()


async def test_tools_off_offers_none(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED, tools={"enabled": False})
    h.open()
    await h.session().handle("hi")
    assert h.chat.requests[-1].tools == ()
    assert "turned off" in (await h.session().handle(CommandCall("tasks"))).text


async def test_two_people_never_see_each_others_tasks_scratch_or_reminders(
    harness: Callable[..., Harness],
) -> None:
    users = {"alice": {"gateway": ["alice-laptop"]}, "bob": {"gateway": ["bob-laptop"]}}
    h = harness(**SMALL_WINDOW, users=users)
    app = h.open()
    alice = app.sessions.orchestrator(
        SessionKey("gateway", "alice@alice-laptop"), ChannelAccount("gateway", "alice@alice-laptop")
    )
    bob = app.sessions.orchestrator(
        SessionKey("gateway", "bob@bob-laptop"), ChannelAccount("gateway", "bob@bob-laptop")
    )
    h.chat.push(
        calls(
            ("task_add", {"text": "alice's surprise party"}),
            ("scratch_write", {"text": "alice's draft"}),
            ("reminder_set", {"text": "alice's dentist", "in_seconds": 3600}),
        ),
        "ok",
    )
    await alice.handle("plan things")
    h.chat.push(calls(("task_list", {}), ("scratch_read", {}), ("reminder_list", {})), "ok")
    await bob.handle("what do I have?")
    seen = " ".join(content for _, content, _ in results_in(h.chat.requests[-1]))
    assert "alice" not in seen
    assert "No open tasks." in seen
    assert "empty" in seen
    assert "No reminders" in seen
    for command in (CommandCall("tasks"), CommandCall("reminders")):
        assert "alice" not in (await bob.handle(command)).text
        assert "alice" in (await alice.handle(command)).text
    h.chat.push(calls(("reminder_cancel", {"id": 1}), ("task_done", {"id": 1})), "ok")
    await bob.handle("cancel reminder 1")
    assert all(failed for _, _, failed in results_in(h.chat.requests[-1]))
    assert "alice's dentist" in (await alice.handle(CommandCall("reminders"))).text
    assert (h.data_dir / "users" / "alice" / "TASKS.json").exists()
    assert not (h.data_dir / "users" / "bob" / "TASKS.json").exists()


async def test_the_persons_reminders_and_tasks_reach_their_prompt(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED, persona={"tier": 4})
    h.open()
    session = h.session()
    await session.handle(CommandCall("tasks", "add water the plants"))
    h.chat.push(calls(("reminder_set", {"text": "stretch", "in_seconds": 600})), "Set.")
    await session.handle("remind me in 10 minutes to stretch")
    await session.handle("what's up?")
    system = h.chat.requests[-1].system
    assert "--- TASKS.json ---\n1. water the plants" in system
    assert "--- REMINDERS.md ---" in system
    assert "stretch (next 2026-11-02 09:40" in system


async def test_remember_goes_through_reconciliation_and_refuses_credentials(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    h.chat.push(
        calls(
            ("remember", {"text": "Lisbon", "field": "location"}),
            ("remember", {"text": "the admin password is hunter2"}),
        ),
        "ok",
    )
    await h.session().handle("remember I live in Lisbon and my password")
    outcomes = results_in(h.chat.requests[-1])
    assert outcomes[0] == ("remember", "Remembered: location = Lisbon", False)
    assert outcomes[1][2] is True
    assert "credentials are never stored" in outcomes[1][1]
    h.chat.push(calls(("remember", {"text": "Porto", "field": "location"})), "ok")
    await h.session().handle("I moved to Porto, remember that")
    active = app.memory.facts.active("user/profile", field="location")
    assert [(fact.value, fact.source) for fact in active] == [("Porto", "tool")]
    assert not any("hunter2" in fact.value for fact in app.memory.facts.active("user/profile"))


async def test_forgetting_a_field_redacts_it_from_stored_tool_calls_too(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    h.chat.push(calls(("remember", {"text": "Lisbon", "field": "location"})), "Noted.")
    session = h.session()
    await session.handle("please keep where I live")
    assert "Lisbon" in json.dumps(app.memory.history.tool_steps([m.id for m in session_rows(h)]))
    reply = await session.handle(CommandCall("forget", "location"))
    assert "Forgotten: location" in reply.text
    await session.handle("hello again")
    request = h.chat.requests[-1]
    sent = request.system + json.dumps(
        [
            [m.content, [c.arguments for c in m.tool_calls], [r.content for r in m.tool_results]]
            for m in request.messages
        ]
    )
    assert "Lisbon" not in sent
    assert "(forgotten)" in sent


def session_rows(h: Harness) -> list[StoredMessage]:
    assert h.app is not None
    return h.app.memory.history.recent("gateway:laptop")


async def test_a_restart_starts_the_session_afresh_with_who_they_are_now(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    await h.session().handle("hi")  # the session context is built now, knowing nothing
    await h.session().handle("My name is Ana.")
    await h.session().handle("and again")
    assert "name: Ana" not in h.chat.requests[-1].system  # no re-injection mid-session
    await h.close()
    h.open()  # a daemon restart: the first message starts the session again
    await h.session().handle("hello")
    assert "name: Ana" in h.chat.requests[-1].system


async def test_a_long_pause_starts_the_session_afresh_and_status_says_why(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED, session={"idle_restart_hours": 6})
    h.open()
    session = h.session()
    await session.handle("hi")
    status = (await session.handle(CommandCall("status"))).text
    assert "on the first message since Flynn started" in status
    await session.handle("My name is Ana.")
    h.clock.advance(hours=5)
    await session.handle("still here")
    assert "name: Ana" not in h.chat.requests[-1].system  # within the session: not again
    h.clock.advance(hours=7)
    await session.handle("good morning")
    assert "name: Ana" in h.chat.requests[-1].system  # a new session after the pause
    status = (await session.handle(CommandCall("status"))).text
    assert "on 7 hours without messages" in status
    await session.handle(CommandCall("reset"))
    await session.handle("again")
    assert "on /reset" in (await session.handle(CommandCall("status"))).text
