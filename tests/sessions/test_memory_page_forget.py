"""Forgetting from the memory page reaches the person's live sessions: what they had loaded (the
session context built at their start, the turns in their prompt) quoted the fact, and the next
turn of each must not."""

from __future__ import annotations

from collections.abc import Callable

from conftest import Harness

from flynn.app import memory_view

SHARED = {"memory": {"user_namespace": "user"}}


async def test_the_next_prompt_of_every_live_session_has_forgotten_it(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    web = h.session("gateway", "laptop")
    await web.handle("My name is Ana.")
    phone = h.session("telegram", "42")
    await phone.handle("hi")  # its session starts now: who they are, with the name in it
    assert "name: Ana" in h.chat.requests[-1].system
    [name] = app.memory.facts.active("user/profile", field="name")

    view = memory_view(app)
    forgotten = await view.forget("laptop", name.id)
    assert forgotten is not None and forgotten["fact"] == name.id

    await phone.handle("what do you know about me?")
    assert "Ana" not in h.chat.requests[-1].system
    await web.handle("and now?")
    request = h.chat.requests[-1]
    assert "Ana" not in request.system
    assert not any("Ana" in str(message.content) for message in request.messages)
