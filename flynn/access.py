"""Who may talk to Flynn on a chat channel (Telegram, Discord), decided in one place: the channel's
``allowed_users``, the accounts ``users:`` lists, and accounts let in by pairing; and what a
stranger is told: in a private chat, a pairing code to give the owner (``flynn users approve``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

import structlog

from flynn.identity import Identity
from flynn.memory.pairing import PairingOffer
from flynn.messages import ChannelAccount

log = structlog.get_logger(__name__)

REFUSAL = (
    "Sorry, I only talk to my owner. "
    "If that's you, add {user_id} to channels.{channel}.allowed_users."
)
PAIRING = (
    "Hi! I don't know you yet. If my owner knows you, they can let you in: give them this "
    "code, which works for an hour: {code}\n"
    "(They type: flynn users approve {code} --as NAME)"
)
TOO_MANY = (
    "Sorry, I only talk to people my owner let in, and too many requests are waiting right now; "
    "please write again in an hour. If you are my owner, add {user_id} to "
    "channels.{channel}.allowed_users."
)


class Pairing(Protocol):
    """Where pairing codes are handed out (``flynn.memory.pairing.SqlitePairing``)."""

    def ask(
        self, account: ChannelAccount, sender_name: str | None, *, now: datetime
    ) -> PairingOffer | None: ...


class Access(Protocol):
    """A channel's door: who is let in, and what the others are told."""

    def is_allowed(self, account: ChannelAccount) -> bool: ...

    def remembers_across_chats(self, account: ChannelAccount) -> bool:
        """Whether ``account``'s memory reaches beyond the chat it writes in (a person, the
        owner): its memory commands are then not answered in a group (``PRIVATE``)."""
        ...

    def stranger_reply(
        self, account: ChannelAccount, sender_name: str | None, *, private: bool
    ) -> str:
        """What to tell ``account``, who may not talk here. The same words while nothing
        changed (the same code while it lives), so a channel that says each text once per chat
        does not flood it."""
        ...


class ChannelAccess:
    """``Access`` for one channel: ``allowed`` (its ``allowed_users`` and the ``users:`` map's
    accounts on it), then whoever ``identity`` knows (approved by pairing). Without ``pairing``
    strangers are only refused; with it, one writing in a private chat gets a code (a group
    would show it to everyone, and it is not theirs to hand out)."""

    def __init__(
        self,
        channel: str,
        allowed: frozenset[str],
        *,
        identity: Identity | None = None,
        pairing: Pairing | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if pairing is not None and clock is None:
            raise ValueError("pairing needs a clock")
        self._channel = channel
        self._allowed = allowed
        self._identity = identity
        self._pairing = pairing
        self._clock = clock

    def is_allowed(self, account: ChannelAccount) -> bool:
        if account.external_id in self._allowed:
            return True
        return self._identity is not None and self._identity.person_of(account) is not None

    def remembers_across_chats(self, account: ChannelAccount) -> bool:
        # Without an identity nobody is known to be held to one chat: the careful answer.
        return self._identity is None or self._identity.remembers_across_chats(account)

    def stranger_reply(
        self, account: ChannelAccount, sender_name: str | None, *, private: bool
    ) -> str:
        words = {"user_id": account.external_id, "channel": self._channel}
        if not private or self._pairing is None:
            return REFUSAL.format(**words)
        assert self._clock is not None
        offer = self._pairing.ask(account, sender_name, now=self._clock())
        if offer is None:
            log.warning("access.pairing_full", channel=self._channel)
            return TOO_MANY.format(**words)
        if offer.is_new:
            # The code is the owner's to see (flynn users pending): it stays out of the logs.
            log.info("access.pairing_offered", channel=self._channel, user_id=account.external_id)
        return PAIRING.format(code=offer.request.code)
