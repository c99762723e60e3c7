"""The tool loop through the real ``openai`` and ``anthropic`` SDKs against local fake servers,
streamed and not: a tool that raises, hangs or gets bad arguments leaves the session working,
and ``tools.max_steps`` stops a model that calls tools forever."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeAnthropic, FakeModelServer, FakeOpenAI, Reply
from fakes.clock import FakeClock
from fakes.script import ToolUse

from flynn.app import App
from flynn.messages import ChannelAccount, SessionKey
from flynn.sessions.orchestrator import Orchestrator
from flynn.settings import load_settings
from flynn.tools.base import Arguments, ToolContext, ToolRegistry, TypedTool
from flynn.tools.tasks import TaskAdd, TaskList

VENDORS = [
    ("openai", False),
    ("openai", True),
    ("anthropic", False),
    ("anthropic", True),
]


class Nothing(Arguments):
    pass


class Explodes(TypedTool[Nothing]):
    name = "explodes"
    description = "Always fails."
    arguments = Nothing

    async def run(self, args: Nothing, context: ToolContext) -> str:
        raise RuntimeError("boom")


class Hangs(TypedTool[Nothing]):
    name = "hangs"
    description = "Never returns."
    arguments = Nothing

    async def run(self, args: Nothing, context: ToolContext) -> str:
        await asyncio.Event().wait()
        return "never"


@pytest.fixture(params=VENDORS, ids=[f"{v}-{'stream' if s else 'chat'}" for v, s in VENDORS])
async def world(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[FakeModelServer, App]]:
    vendor, stream = request.param
    server: FakeModelServer = FakeOpenAI() if vendor == "openai" else FakeAnthropic()
    async with server:
        settings = load_settings(
            {
                "data_dir": str(tmp_path / "data"),
                "llm": {
                    "provider": vendor,
                    "base_url": server.base_url,
                    "model": "fake-model",
                    "api_key": "sk-test",
                    "max_retries": 0,
                    "stream": stream,
                },
                "memory": {"user_namespace": "user", "auto_extract": False},
                "tools": {"max_steps": 3},
            }
        )
        app = App.open(settings, {}, clock=FakeClock())
        try:
            yield server, app
        finally:
            await app.aclose()


def session(app: App, tools: ToolRegistry | None = None) -> Orchestrator:
    key = SessionKey("gateway", "laptop")
    if tools is None:
        return app.sessions.orchestrator(key, ChannelAccount("gateway", "laptop"))
    services = dataclasses.replace(
        app.services, person=dataclasses.replace(app.services.person, tools=tools)
    )
    return Orchestrator(
        key, app.sessions.scope_for(key, ChannelAccount("gateway", "laptop")), services
    )


async def ask(orchestrator: Orchestrator, text: str) -> str:
    deltas: list[str] = []

    async def on_delta(piece: str) -> None:
        deltas.append(piece)

    result = await orchestrator.handle(text, on_delta)
    assert not result.is_error, result.text
    return result.text


def tool_results(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """(content, is_error) of every tool result in a recorded request, either vendor's form."""
    found: list[tuple[str, bool]] = []
    for message in body["messages"]:
        if message.get("role") == "tool":
            content = message["content"]
            found.append((content, content.startswith("error:")))
        elif isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    if isinstance(content, list):
                        content = "".join(part.get("text", "") for part in content)
                    found.append((content, bool(block.get("is_error"))))
    return found


async def test_failing_tools_answer_the_model_and_the_session_goes_on(
    world: tuple[FakeModelServer, App],
) -> None:
    server, app = world
    registry = ToolRegistry(
        [Explodes(), Hangs(), TaskAdd(), TaskList()], timeout_seconds=0.2, result_max_chars=2000
    )
    orchestrator = session(app, registry)
    bad_arguments: dict[str, Any] | str = (
        "{not json" if isinstance(server, FakeOpenAI) else {"text": ""}
    )
    server.enqueue(
        Reply(
            "Trying.",
            tool_calls=(
                ToolUse("explodes", {}),
                ToolUse("hangs", {}),
                ToolUse("task_add", bad_arguments),
                ToolUse("no_such_tool", {}),
            ),
        ),
        Reply("Some of that failed, sorry."),
    )
    answer = await ask(orchestrator, "do everything")
    assert answer == "Trying.\n\nSome of that failed, sorry."
    first, second = server.requests
    names = {tool.get("name") or tool["function"]["name"] for tool in first.json["tools"]}
    assert names == {"explodes", "hangs", "task_add", "task_list"}
    results = tool_results(second.json)
    assert [failed for _, failed in results] == [True, True, True, True]
    assert "RuntimeError" in results[0][0]
    assert "did not finish" in results[1][0]
    assert "invalid arguments" in results[2][0]
    assert "no_such_tool" in results[3][0]

    server.enqueue(Reply("Still here."))
    assert await ask(orchestrator, "are you ok?") == "Still here."
    replayed = tool_results(server.requests[-1].json)
    assert len(replayed) == 4  # the earlier round went back with the history, whole


async def test_max_steps_stops_a_model_that_calls_tools_forever(
    world: tuple[FakeModelServer, App],
) -> None:
    server, app = world
    server.responder = lambda request: Reply("", tool_calls=(ToolUse("task_list", {}),))
    answer = await ask(session(app), "loop forever")
    assert "stopped after 3 rounds" in answer
    assert len(server.requests) == 4
    server.responder = None
    server.enqueue(Reply("Back to normal."))
    assert await ask(session(app), "hello") == "Back to normal."


async def test_a_reminder_set_through_the_sdk_is_stored_for_the_person(
    world: tuple[FakeModelServer, App],
) -> None:
    server, app = world
    server.enqueue(
        Reply("", tool_calls=(ToolUse("reminder_set", {"text": "call mum", "at": "18:30"}),)),
        Reply("I'll remind you at 18:30."),
    )
    assert await ask(session(app), "remind me at 18:30 to call mum") == "I'll remind you at 18:30."
    (job,) = app.schedule.jobs("user", kind="reminder")
    assert job.text == "call mum"
    assert job.target is not None and job.target.chat_id == "laptop"
    (content, failed) = tool_results(server.requests[-1].json)[0]
    assert not failed and "Reminder set: 1. call mum" in content
    assert json.loads(json.dumps(server.requests[0].json["tools"]))  # schemas are plain JSON


async def test_an_empty_answer_is_an_error_and_is_not_kept_as_said(
    world: tuple[FakeModelServer, App],
) -> None:
    server, app = world
    orchestrator = session(app)
    server.enqueue(Reply(""))
    result = await orchestrator.handle("what's on today?", None)
    assert result.is_error and result.error_code == "llm_unavailable"
    assert "answered with nothing" in result.text and "Your message is saved" in result.text
    stored = app.memory.history.recent(orchestrator.session_id)
    assert [(m.role, m.content) for m in stored] == [("user", "what's on today?")]

    server.enqueue(Reply("Nothing today."))
    assert await ask(orchestrator, "and now?") == "Nothing today."
    roles = [message["role"] for message in server.requests[-1].json["messages"]]
    assert "assistant" not in roles  # no empty (or invented) reply went back to the model


async def test_no_words_after_tools_that_worked_answers_with_what_they_reported(
    world: tuple[FakeModelServer, App],
) -> None:
    server, app = world
    server.enqueue(Reply("", tool_calls=(ToolUse("task_add", {"text": "buy milk"}),)), Reply(""))
    answer = await ask(session(app), "add buy milk to my tasks")
    (content, failed) = tool_results(server.requests[-1].json)[0]
    assert not failed and answer == content and "buy milk" in answer


async def test_no_words_after_tools_that_all_failed_is_an_error(
    world: tuple[FakeModelServer, App],
) -> None:
    server, app = world
    registry = ToolRegistry([Explodes()], timeout_seconds=0.2, result_max_chars=2000)
    server.enqueue(Reply("", tool_calls=(ToolUse("explodes", {}),)), Reply(""))
    result = await session(app, registry).handle("try it", None)
    assert result.error_code == "llm_unavailable" and "Done." not in result.text
