"""The chat command table is the one list every surface uses: each command runs, ``/help``
lists it, Telegram's menu accepts it and the gateway's ``command`` frame takes its name."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from conftest import SMALL_WINDOW, Harness

import flynn
from flynn.channels.gateway.protocol import COMMANDS as GATEWAY_COMMANDS
from flynn.commands import CHAT_COMMANDS, NAMES
from flynn.messages import CommandCall

SHARED = {**SMALL_WINDOW, "memory": {"user_namespace": "user"}}


async def test_every_command_runs_and_help_lists_it(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    await session.handle("My name is Ana.")
    for command in CHAT_COMMANDS:
        result = await session.handle(CommandCall(command.name))
        assert "Unknown command" not in result.text, command.name
        assert result.error_code is None, (command.name, result.text)
    help_text = (await session.handle(CommandCall("help"))).text
    for command in CHAT_COMMANDS:
        if command.name != "help":
            assert f"/{command.name}" in help_text
    # Telegram sends /start when someone opens the chat; it is /help, not an unknown command.
    assert (await session.handle(CommandCall("start"))).text == help_text


async def test_an_unknown_command_lists_the_known_ones(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    unknown = await h.session().handle(CommandCall("frobnicate", "now"))
    assert unknown.error_code == "bad_request"
    assert unknown.text.startswith("Unknown command /frobnicate.")
    assert all(f"/{name}" in unknown.text for name in NAMES)


def test_the_table_fits_telegram_and_the_gateway() -> None:
    # Bot API setMyCommands: 1-32 lowercase letters, digits or underscores; 1-256 characters.
    for command in CHAT_COMMANDS:
        assert re.fullmatch(r"[a-z0-9_]{1,32}", command.name)
        assert 1 <= len(command.about) <= 256
    assert len(NAMES) == len(CHAT_COMMANDS)
    assert GATEWAY_COMMANDS == NAMES
    # Protocol v1's six commands stay (DESIGN.md section 8); others may be added.
    assert {"new", "reset", "status", "compact", "otr", "forget"} <= GATEWAY_COMMANDS


def test_the_web_page_sends_every_command_as_a_command_frame() -> None:
    script = (Path(flynn.__file__).parent / "channels" / "web" / "app.js").read_text("utf-8")
    listed = re.search(r"const COMMANDS = new Set\(\[(.*?)\]\);", script, re.DOTALL)
    assert listed is not None
    assert set(re.findall(r'"([a-z_]+)"', listed.group(1))) == NAMES


async def test_memory_lists_what_is_known_and_searches_with_words(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    empty = await session.handle(CommandCall("memory"))
    assert empty.text == "I have nothing stored about you yet."

    await session.handle("My name is Ana.")
    listed = await session.handle(CommandCall("memory"))
    assert listed.text.startswith("What I know about you:")
    assert "name: Ana" in listed.text

    searched = await session.handle(CommandCall("memory", "Ana"))
    assert searched.error_code is None
    assert "Ana" in searched.text
