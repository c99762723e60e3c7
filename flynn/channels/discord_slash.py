"""Discord's slash commands: the chat commands Discord users reach with ``/``, registered through
discord.py's ``app_commands``, and the reply handle that answers an interaction in its followups
(ephemeral, seen by the asker alone, where the answer is private).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import discord
from discord import app_commands

from flynn.commands import CHAT_COMMANDS

SLASH_COMMANDS: Final = ("new", "status", "compact", "reminders", "tasks", "forget", "memory")
"""The chat commands offered as slash commands (the others stay typed commands)."""
_TAKES_WORDS: Final = {
    "reminders": "cancel N",
    "tasks": "add TEXT, done N or all",
    "forget": "a field to delete (name, city...); none deletes this conversation",
    "memory": "words to search my memory for",
}
_DESCRIPTION_MAX = 100
"""Discord refuses longer command descriptions."""
_SLASH_ID = re.compile(r"slash:(\d+)(?::dm:(\d+))?")

OnSlash = Callable[[discord.Interaction, str, str], Awaitable[None]]
"""What runs a slash command: the interaction, the command's name and its words (or "")."""


@dataclass(frozen=True, slots=True)
class DiscordInteractionReply:
    """The reply handle of a slash command: its answer goes in the interaction's followups,
    ephemeral when ``private``, once ``acknowledged`` says whether the interaction was
    deferred (``False``: it expired or was refused, so the answer goes where a replayed one
    would)."""

    interaction: discord.Interaction
    private: bool
    acknowledged: asyncio.Future[bool]


def command_tree(client: discord.Client, on_slash: OnSlash) -> app_commands.CommandTree:
    """The client's command tree with the slash commands, each handing its interaction to
    ``on_slash``; ``tree.sync()`` registers them with Discord."""
    tree = app_commands.CommandTree(client)
    about = {command.name: command.about for command in CHAT_COMMANDS}
    for name in SLASH_COMMANDS:
        tree.add_command(_slash_command(name, about[name], on_slash))
    return tree


def _slash_command(
    name: str, about: str, on_slash: OnSlash
) -> app_commands.Command[Any, ..., None]:
    description = about if len(about) <= _DESCRIPTION_MAX else about[: _DESCRIPTION_MAX - 1] + "…"
    words = _TAKES_WORDS.get(name)
    if words is None:

        async def bare(interaction: discord.Interaction) -> None:
            await on_slash(interaction, name, "")

        return app_commands.Command(name=name, description=description, callback=bare)

    async def with_words(interaction: discord.Interaction, what: str | None = None) -> None:
        await on_slash(interaction, name, (what or "").strip())

    described = app_commands.describe(what=words)(with_words)
    return app_commands.Command(name=name, description=description, callback=described)


def slash_message_id(interaction_id: int, *, private_to: int | None) -> str:
    """The id durable intake keeps for an interaction. A private answer in a guild names its
    asker, so an answer sent after a restart (without the interaction) goes to them in a DM
    rather than to everyone in the channel."""
    base = f"slash:{interaction_id}"
    return base if private_to is None else f"{base}:dm:{private_to}"


def private_recipient(message_id: str | None) -> str | None:
    """The user a reply to ``message_id`` must reach privately, if it answers a private slash
    command asked in a guild."""
    found = _SLASH_ID.fullmatch(message_id or "")
    return found.group(2) if found else None
