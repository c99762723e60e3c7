"""What a gateway ``hello`` token proves: the channel token is the owner's; a person's own token
(``flynn users token NAME``) makes the connection that person, whatever client id it names.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from flynn.channels.gateway.protocol import CLIENT_ID
from flynn.identity import GatewayClient

ChannelToken = Callable[[str], bool]
"""Whether a presented token is the channel token, checked in constant time (against a digest
kept in the database every worker shares, ``flynn.gateway_token``); called at each hello."""
PersonTokens = Callable[[str], str | None]
"""The person whose live token this is (a person of ``users:``), else None: the daemon's view of
``flynn.memory.person_tokens``. Called on the event loop at each hello; it must be quick."""


@dataclass(frozen=True, slots=True)
class Proof:
    """A token that passed: ``person`` is None for the channel token."""

    person: str | None


@dataclass(frozen=True, slots=True)
class HelloRefused:
    """Why a first frame opens nothing: the error frame's code (``unauthorized`` closes with
    4401, ``bad_request`` with 4400) and its message."""

    code: Literal["unauthorized", "bad_request"]
    message: str


class HelloTokens:
    """Checks hello tokens: the channel token in constant time (the token itself, or a
    ``ChannelToken`` check), then people's tokens."""

    def __init__(
        self, channel_token: str | ChannelToken, people: PersonTokens | None = None
    ) -> None:
        if not channel_token:
            raise ValueError("the gateway needs a non-empty token")
        self._is_channel_token = (
            _equal_to(channel_token) if isinstance(channel_token, str) else channel_token
        )
        self.people = people

    def check(self, token: object) -> Proof | None:
        """What ``token`` proves; None when it is no token this gateway takes."""
        if not isinstance(token, str) or not token:
            return None
        if self._is_channel_token(token):
            return Proof(None)
        if self.people is not None:
            person = self.people(token)
            if person is not None:
                return Proof(person)
        return None

    def read_hello(self, frame: dict[str, object] | None) -> GatewayClient | HelloRefused:
        """Who the first frame (parsed JSON, None when it was none) says the client is."""
        if frame is None or frame.get("type") != "hello":
            return HelloRefused("unauthorized", "The first frame must be a hello.")
        proof = self.check(frame.get("token"))
        if proof is None:
            return HelloRefused("unauthorized", "The token is wrong.")
        client_id = frame.get("client_id")
        if not isinstance(client_id, str) or not CLIENT_ID.fullmatch(client_id):
            return HelloRefused(
                "bad_request", "A client_id is 1 to 128 characters of A-Z a-z 0-9 _ . : -"
            )
        return GatewayClient(client_id, proof.person)


def _equal_to(expected: str) -> ChannelToken:
    wanted = expected.encode()
    return lambda token: hmac.compare_digest(token.encode(), wanted)
