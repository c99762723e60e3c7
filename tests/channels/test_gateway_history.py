"""The gateway's ``history`` frame over a real websockets client: a session's stored conversation
from a real SQLite history (compacted turns too, oldest first, the newest ``limit``), limits
checked, nothing of any other session; the pushes delivered to the client among them (not those
still waiting, nor another client's); and through the daemon, nothing said off the record."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from gateway_harness import TOKEN, final_answer, recv, running_daemon, running_gateway, send
from websockets.asyncio.client import ClientConnection, connect

from flynn.channels.gateway.history import StoredTurn
from flynn.memory.stores import SqliteMemory
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqlitePushes
from flynn.settings import load_settings

START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[SqliteMemory]:
    with SqliteMemory.open(tmp_path / "flynn.db", SCHEMA) as memory:
        yield memory


def say(memory: SqliteMemory, session: str, texts: Sequence[str], *, at: datetime = START) -> None:
    """Stores ``texts`` in ``session``, user and assistant in turn, a minute apart."""
    for index, text in enumerate(texts):
        role = "user" if index % 2 == 0 else "assistant"
        when = at + timedelta(minutes=index)
        memory.history.append(session, "user", role, text, tokens=1, now=when)


async def history(ws: ClientConnection, **frame: Any) -> dict[str, Any]:
    await send(ws, {"type": "history", **frame})
    answer = dict(await recv(ws))
    assert answer["type"] in ("history", "error"), answer
    return answer


async def test_history_is_the_sessions_conversation_oldest_first(memory: SqliteMemory) -> None:
    say(memory, "gateway:tab", ["Hi, I'm Ana.", "Hello **Ana**!", "What's on today?"])
    first = memory.history.recent("gateway:tab")[0]
    # Compaction marks turns summarised but keeps them: the page still shows them.
    memory.history.save_summary("gateway:tab", "Ana said hi.", through_id=first.id, now=START)
    memory.history.append(
        "gateway:tab", "user", "assistant", "  ", tokens=0, now=START + timedelta(minutes=3)
    )
    async with (
        running_gateway(transcript=memory.history) as gateway,
        gateway.client("tab") as ws,
    ):
        answer = await history(ws, limit=50)
    assert answer == {
        "type": "history",
        "messages": [
            {"role": "user", "text": "Hi, I'm Ana.", "at": "2026-11-20T09:00:00+00:00"},
            {
                "role": "assistant",
                "text": "Hello **Ana**!",
                "at": "2026-11-20T09:01:00+00:00",
                "html": "<p>Hello <strong>Ana</strong>!</p>\n",
            },
            {"role": "user", "text": "What's on today?", "at": "2026-11-20T09:02:00+00:00"},
        ],
    }


async def test_delivered_pushes_are_among_the_messages_in_time_order(
    memory: SqliteMemory,
) -> None:
    say(memory, "gateway:tab", ["Remind me at ten.", "I will.", "Done.", "Good."])
    pushes = SqlitePushes(memory.db)

    def push(text: str, target: Target, *, delivered_minute: float | None) -> None:
        added = pushes.add(namespace="user", kind="reminder", text=text, target=target, now=START)
        if delivered_minute is not None:
            at = START + timedelta(minutes=delivered_minute)
            assert pushes.delivered(added.id, now=at)

    push("Ten o'clock.", Target("gateway", "tab"), delivered_minute=1.5)
    push("To the recipient.", Target("gateway", recipient="tab"), delivered_minute=3.5)
    push("Still waiting.", Target("gateway", "tab"), delivered_minute=None)
    push("Another tab's.", Target("gateway", "other"), delivered_minute=2.5)
    push("On Telegram.", Target("telegram", "tab"), delivered_minute=2.5)
    async with (
        running_gateway(transcript=memory.history, push_log=pushes) as gateway,
        gateway.client("tab", protocol=2) as ws,
        gateway.client("tab") as old,
    ):
        answer = await history(ws, limit=50)
        newest = await history(ws, limit=2)
        # Protocol 1's history keeps its two roles: a push entry could break an older client.
        v1 = await history(old, limit=50)
    assert {m["role"] for m in v1["messages"]} == {"user", "assistant"}
    texts = [(m["role"], m["text"]) for m in answer["messages"]]
    assert texts == [
        ("user", "Remind me at ten."),
        ("assistant", "I will."),
        ("push", "Ten o'clock."),
        ("user", "Done."),
        ("assistant", "Good."),
        ("push", "To the recipient."),
    ]
    assert answer["messages"][2] == {
        "role": "push",
        "text": "Ten o'clock.",
        "at": "2026-11-20T09:01:30+00:00",
        "kind": "reminder",
        "id": "p1",
    }
    assert [m["text"] for m in newest["messages"]] == ["Good.", "To the recipient."]


async def test_limit_gives_the_newest_messages_and_defaults_to_50(memory: SqliteMemory) -> None:
    say(memory, "gateway:tab", [f"message {n}" for n in range(120)])
    first = memory.history.recent("gateway:tab")[59]
    memory.history.save_summary("gateway:tab", "the first half", through_id=first.id, now=START)
    async with (
        running_gateway(transcript=memory.history) as gateway,
        gateway.client("tab") as ws,
    ):
        newest = await history(ws, limit=5, id="h1")
        everything = await history(ws, limit=200)
        default = await history(ws)
    assert newest["id"] == "h1"
    assert [m["text"] for m in newest["messages"]] == [f"message {n}" for n in range(115, 120)]
    # Compacted (the first 60) and not: one conversation, in order.
    assert [m["text"] for m in everything["messages"]] == [f"message {n}" for n in range(120)]
    assert [m["text"] for m in default["messages"]] == [f"message {n}" for n in range(70, 120)]


@pytest.mark.parametrize("limit", [0, -1, 201, 10**12, 2.5, "5", True, None, [5]])
async def test_a_bad_limit_is_a_bad_request_and_the_connection_stays(
    memory: SqliteMemory, limit: object
) -> None:
    say(memory, "gateway:tab", ["hello", "hi"])
    async with (
        running_gateway(transcript=memory.history) as gateway,
        gateway.client("tab") as ws,
    ):
        error = await history(ws, id="h1", limit=limit)
        assert error == {
            "type": "error",
            "id": "h1",
            "code": "bad_request",
            "message": "A history limit is a whole number from 1 to 200.",
        }
        assert len((await history(ws, limit=1))["messages"]) == 1


async def test_no_other_sessions_messages_ever(memory: SqliteMemory) -> None:
    say(memory, "gateway:tab", ["mine", "yours truly"])
    # Another web client, a "thread" of this client's id, and the same person elsewhere.
    say(memory, "gateway:tab2", ["their secret", "kept"])
    say(memory, "gateway:tab:2", ["a thread's secret", "kept"])
    say(memory, "telegram:111", ["my phone's secret", "kept"])
    async with (
        running_gateway(transcript=memory.history) as gateway,
        gateway.client("tab") as ws,
        gateway.client("stranger") as other,
    ):
        mine = await history(ws, limit=200)
        theirs = await history(other, limit=200)
    assert [m["text"] for m in mine["messages"]] == ["mine", "yours truly"]
    assert theirs["messages"] == []


async def test_without_a_transcript_the_history_is_empty() -> None:
    async with running_gateway() as gateway, gateway.client("tab") as ws:
        assert await history(ws, limit=10) == {"type": "history", "messages": []}


class BrokenTranscript:
    def latest(self, session: str, limit: int) -> Sequence[StoredTurn]:
        raise RuntimeError("disk on fire")


async def test_a_failed_read_is_an_internal_error_in_words() -> None:
    async with (
        running_gateway(transcript=BrokenTranscript()) as gateway,
        gateway.client("tab") as ws,
    ):
        error = await history(ws, id="h7", limit=10)
        assert error == {
            "type": "error",
            "id": "h7",
            "code": "internal",
            "message": "The conversation so far could not be read; try again.",
        }
        await send(ws, {"type": "message", "id": "c1", "text": "still here"})
        assert (await recv(ws))["type"] == "delta"


# Through the daemon: what the history holds is what the sessions stored.


@pytest.fixture
async def daemon(tmp_path: Path) -> AsyncIterator[int]:
    """The daemon in-process on its offline provider; yields the gateway's port."""
    settings = load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "channels": {"gateway": {"host": "127.0.0.1", "port": 0, "token": TOKEN}},
        },
        env={},
    )
    async with running_daemon(settings) as port:
        yield port


async def test_off_the_record_turns_and_commands_are_not_in_the_history(daemon: int) -> None:
    hello = {"type": "hello", "token": TOKEN, "client_id": "laptop"}
    async with connect(f"ws://127.0.0.1:{daemon}/ws") as ws:
        await ws.send(json.dumps(hello))
        assert json.loads(await ws.recv())["type"] == "ready"
        said = [
            {"type": "message", "id": "1", "text": "Remember the blue notebook."},
            {"type": "command", "id": "2", "name": "otr", "arg": "on"},
            {"type": "message", "id": "3", "text": "The safe's code is 4711."},
            {"type": "command", "id": "4", "name": "otr", "arg": "off"},
            {"type": "message", "id": "5", "text": "Back on the record."},
        ]
        answers = [await final_answer(ws, frame) for frame in said]
        assert all(answer["type"] == "reply" for answer in answers), answers
        answer = await history(ws, limit=50)
    texts = [(m["role"], m["text"]) for m in answer["messages"]]
    assert texts == [
        ("user", "Remember the blue notebook."),
        ("assistant", answers[0]["text"]),
        ("user", "Back on the record."),
        ("assistant", answers[4]["text"]),
    ]
    assert "4711" not in json.dumps(answer)
    # What the page gets is what it was sent live: the reply's text and its HTML.
    assert answer["messages"][1]["html"] == answers[0]["html"]
