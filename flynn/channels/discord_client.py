"""The part of discord.py the Discord channel drives, as narrow Protocols (the seam tests replace
with fakes), and the real client with the intents it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from types import TracebackType
from typing import Any, Protocol, TypeVar, runtime_checkable

import discord

_CoroT = TypeVar("_CoroT", bound=Callable[..., Coroutine[Any, Any, Any]])


class DiscordUser(Protocol):
    """A message author or mentioned user (``discord.User``, ``discord.Member``)."""

    @property
    def id(self) -> int: ...

    @property
    def bot(self) -> bool: ...

    @property
    def display_name(self) -> str: ...


class DiscordSent(Protocol):
    @property
    def id(self) -> int: ...


@runtime_checkable
class DiscordTarget(Protocol):
    """A text channel, thread or DM we can write to. ``type`` is ``None`` only for a partial
    channel discord.py could not classify."""

    @property
    def id(self) -> int: ...

    @property
    def type(self) -> discord.ChannelType | None: ...

    def typing(self) -> AbstractAsyncContextManager[None]: ...

    async def send(
        self,
        content: str,
        *,
        allowed_mentions: discord.AllowedMentions = ...,
        reference: discord.MessageReference = ...,
        mention_author: bool = ...,
    ) -> DiscordSent: ...


class DiscordReference(Protocol):
    @property
    def type(self) -> discord.MessageReferenceType:
        """``default`` for a reply, ``forward`` for a forwarded message."""
        ...

    @property
    def resolved(self) -> object | None:
        """The replied-to message, a deleted-message stub, or ``None`` when not resolved."""
        ...


class DiscordSnapshot(Protocol):
    """The copy a forward carries of the message it forwards (``discord.MessageSnapshot``)."""

    @property
    def content(self) -> str: ...


class DiscordAttachment(Protocol):
    """A file that came with a message (``discord.Attachment``): its metadata from the gateway,
    and its bytes fetched from Discord's CDN on ``read``."""

    @property
    def filename(self) -> str: ...

    @property
    def content_type(self) -> str | None:
        """The MIME type Discord gave (``text/plain; charset=utf-8``), or None."""
        ...

    @property
    def size(self) -> int:
        """What Discord says it weighs, in bytes."""
        ...

    async def read(self) -> bytes:
        """Downloads it; raises ``discord.HTTPException`` (``NotFound``, ``Forbidden``)."""
        ...


class DiscordMessage(Protocol):
    """What the channel reads from a ``discord.Message``; threads also carry ``parent_id``."""

    @property
    def id(self) -> int: ...

    @property
    def author(self) -> DiscordUser: ...

    @property
    def content(self) -> str: ...

    @property
    def channel(self) -> DiscordTarget: ...

    @property
    def guild(self) -> object | None: ...

    @property
    def mentions(self) -> Sequence[DiscordUser]: ...

    @property
    def reference(self) -> DiscordReference | None: ...

    @property
    def message_snapshots(self) -> Sequence[DiscordSnapshot]:
        """For a forward, the forwarded message (its own ``content`` is empty)."""
        ...

    @property
    def created_at(self) -> datetime: ...

    @property
    def attachments(self) -> Sequence[DiscordAttachment]: ...


class DiscordAccount(Protocol):
    """A user we can open a DM with (``discord.User``)."""

    @property
    def id(self) -> int: ...

    async def create_dm(self) -> object:
        """The DM channel with this user (a ``DiscordTarget``), opened if need be."""
        ...


class DiscordClient(Protocol):
    """The part of ``discord.Client`` the channel drives; the seam tests replace."""

    @property
    def user(self) -> DiscordUser | None: ...

    def event(self, coro: _CoroT, /) -> _CoroT: ...

    async def start(self, token: str, *, reconnect: bool = ...) -> None: ...

    def get_channel(self, id: int, /) -> object | None: ...

    async def fetch_channel(self, channel_id: int, /) -> object: ...

    async def fetch_user(self, user_id: int, /) -> DiscordAccount: ...

    async def __aenter__(self) -> object: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


ClientFactory = Callable[[discord.Intents], DiscordClient]


def discord_intents() -> discord.Intents:
    """Guilds, DMs and guild messages with their content (a privileged intent: enable "Message
    Content Intent" for the bot in the developer portal)."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.dm_messages = True
    intents.guild_messages = True
    intents.message_content = True
    return intents


def discord_client(intents: discord.Intents) -> DiscordClient:
    # Mentions off by default as well, so nothing sent through the client can ping anyone.
    return discord.Client(intents=intents, allowed_mentions=discord.AllowedMentions.none())
