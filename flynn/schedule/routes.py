"""Where an unprompted message goes: the person's ``notify`` channel when
``users:`` names one, else a chat of theirs that can be written to later."""

from __future__ import annotations

from flynn.identity import GATEWAY, GatewayClient
from flynn.messages import SessionKey
from flynn.schedule.jobs import Target
from flynn.settings import UserAccounts

PUSH_CHANNELS = frozenset({"telegram", "discord", "gateway"})
"""Channels that can carry a message nobody just asked for (``flynn chat`` cannot)."""


def notify_target(name: str | None, person: UserAccounts | None) -> Target | None:
    """The ``notify`` account of the person ``name`` (``person`` their accounts), when they named
    one. On the gateway that is their first listed client id, under their own token: the owner's
    client of the same id is not them."""
    if name is None or person is None or person.notify is None:
        return None
    accounts: list[str] = getattr(person, person.notify)
    recipient = accounts[0]
    if person.notify == GATEWAY:
        recipient = GatewayClient(recipient, name).key
    return Target(person.notify, recipient=recipient)


def chat_target(key: SessionKey) -> Target | None:
    """The chat (and thread) of session ``key``, if its channel can be written to unprompted; a
    group chat split per sender is still that group's chat."""
    if key.channel not in PUSH_CHANNELS:
        return None
    return Target(key.channel, key.chat_id, key.thread)
