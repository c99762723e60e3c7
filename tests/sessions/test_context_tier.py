"""``/tier``: a session chooses its context tier within ``persona.max_tier``; the choice changes
which persona files its prompts load, lasts while the session goes quiet, and ends at ``/new``,
``/reset`` or a session restart. Asserted on the system prompt the model receives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import SMALL_WINDOW, Harness

from flynn.messages import CommandCall
from flynn.sessions.orchestrator import Orchestrator

SHARED = {**SMALL_WINDOW, "memory": {"user_namespace": "user"}}
TIER_3 = "--- CONTEXT_TIERS.md ---"
TIER_4 = "--- SCRATCH.md ---\nplan: the kiln at ten"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _files(h: Harness) -> None:
    persona = h.data_dir / "persona" / "flynn"
    _write(persona / "SOUL.md", "Be kind.")
    _write(persona / "CONTEXT_TIERS.md", "Tiers as the README says.")
    _write(h.data_dir / "user" / "SCRATCH.md", "plan: the kiln at ten")


async def system_after(h: Harness, session: Orchestrator, text: str = "hello") -> str:
    result = await session.handle(text)
    assert not result.is_error, result.text
    return h.chat.requests[-1].system


async def test_a_chosen_tier_loads_its_files_until_new(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    _files(h)
    session = h.session()
    default = await system_after(h, session)
    assert "--- SOUL.md ---" in default and TIER_3 not in default and TIER_4 not in default

    chosen = await session.handle(CommandCall("tier", "4"))
    assert chosen.error_code is None
    assert chosen.text.startswith("Context tier 4 from your next message")
    system = await system_after(h, session)
    assert TIER_3 in system and TIER_4 in system
    assert (
        "Context tier: 4 (chosen for this conversation)"
        in (await session.handle(CommandCall("tier"))).text
    )
    assert (
        "Context tier: 4 (chosen with /tier)" in (await session.handle(CommandCall("status"))).text
    )

    # Another conversation of the same person keeps the default.
    other = h.session("telegram", "42")
    assert TIER_4 not in await system_after(h, other)

    minimal = await session.handle(CommandCall("tier", "1"))
    assert minimal.error_code is None
    assert "--- SOUL.md ---" not in await system_after(h, session)

    await session.handle(CommandCall("new"))
    system = await system_after(h, session)
    assert "--- SOUL.md ---" in system and TIER_4 not in system
    assert (
        "Context tier: 2 (the default, persona.tier)"
        in (await session.handle(CommandCall("tier"))).text
    )


async def test_the_choice_outlasts_an_idle_drop_but_not_a_restart(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    app = h.open()
    _files(h)
    session = h.session()
    await session.handle(CommandCall("tier", "4"))
    await system_after(h, session)

    # Idle for the router's while: the orchestrator is dropped, and made again on the next message.
    await app.sessions.evict(session.key)
    again = h.session()
    assert again is not session
    assert TIER_4 in await system_after(h, again)

    # A long pause starts the session afresh, at persona.tier.
    h.clock.advance(hours=7)
    assert TIER_4 not in await system_after(h, again)

    await again.handle(CommandCall("tier", "3"))
    await again.handle(CommandCall("reset"))
    assert TIER_3 not in await system_after(h, again)

    await again.handle(CommandCall("tier", "3"))
    await h.close()  # a daemon restart
    h.open()
    assert TIER_3 not in await system_after(h, h.session())


async def test_max_tier_caps_the_choice(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED, persona={"tier": 1, "max_tier": 3})
    h.open()
    _files(h)
    session = h.session()
    refused = await session.handle(CommandCall("tier", "4"))
    assert refused.error_code == "bad_request"
    assert "persona.max_tier: 3" in refused.text
    assert "--- SOUL.md ---" not in await system_after(h, session)  # still tier 1

    listing = (await session.handle(CommandCall("tier"))).text
    assert "Context tier: 1 (the default, persona.tier)" in listing
    assert "4 – + SCRATCH.md, TASKS.json: full state, agent mode (above persona.max_tier" in (
        listing
    )
    assert "/tier N loads tier N (1-3)" in listing

    for bad in ("0", "5", "two", "-1", "3.5"):
        answer = await session.handle(CommandCall("tier", bad))
        assert answer.error_code == "bad_request", bad
        assert answer.text.startswith("Usage: /tier"), bad

    assert (await session.handle(CommandCall("tier", "3"))).error_code is None
    assert TIER_3 in await system_after(h, session)
