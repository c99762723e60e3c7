"""TypingIndicators: one task per chat, kept up while messages wait, stopped by the last reply."""

from __future__ import annotations

import asyncio

from flynn.channels.typing_indicator import TypingIndicators


class Recorder:
    def __init__(self) -> None:
        self.chats: list[str] = []
        self.sent = asyncio.Event()

    async def __call__(self, chat: str) -> None:
        self.chats.append(chat)
        self.sent.set()


def _tasks() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("test.typing")]


async def test_typing_stops_after_the_last_pending_message() -> None:
    recorder = Recorder()
    typing = TypingIndicators(recorder, interval=0.01, limit=60, name="test")
    typing.start("a", "1")
    typing.start("a", "2")
    await recorder.sent.wait()
    assert len(_tasks()) == 1

    await typing.finish("a", "1")
    assert len(_tasks()) == 1
    await typing.finish("a", "2")
    assert _tasks() == []
    assert set(recorder.chats) == {"a"}


async def test_finish_without_an_id_clears_the_chat() -> None:
    typing = TypingIndicators(Recorder(), interval=0.01, limit=60, name="test")
    typing.start("a", "1")
    typing.start("a", "2")
    await typing.finish("a", None)
    assert _tasks() == []
    await typing.finish("a", "1")  # nothing left: a no-op


async def test_typing_gives_up_after_the_limit() -> None:
    typing = TypingIndicators(Recorder(), interval=0.001, limit=0.02, name="test")
    typing.start("a", "1")
    [task] = _tasks()
    await task
    assert _tasks() == []
    typing.start("a", "2")  # a new message starts a fresh indicator
    assert len(_tasks()) == 1
    await typing.aclose()
    assert _tasks() == []
