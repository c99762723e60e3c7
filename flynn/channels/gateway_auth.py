"""What a gateway ``hello`` token proves: the channel token is the owner's; a person's own token
(``flynn users token NAME``) makes the connection that person, whatever client id it names.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass

PersonTokens = Callable[[str], str | None]
"""The person whose live token this is (a person of ``users:``), else None: the daemon's view of
``flynn.memory.person_tokens``. Called on the event loop at each hello; it must be quick."""


@dataclass(frozen=True, slots=True)
class Proof:
    """A token that passed: ``person`` is None for the channel token."""

    person: str | None


class HelloTokens:
    """Checks hello tokens: the channel token in constant time, then people's tokens."""

    def __init__(self, channel_token: str, people: PersonTokens | None = None) -> None:
        if not channel_token:
            raise ValueError("the gateway needs a non-empty token")
        self._channel_token = channel_token.encode()
        self.people = people

    def check(self, token: object) -> Proof | None:
        """What ``token`` proves; None when it is no token this gateway takes."""
        if not isinstance(token, str) or not token:
            return None
        if hmac.compare_digest(token.encode(), self._channel_token):
            return Proof(None)
        if self.people is not None:
            person = self.people(token)
            if person is not None:
                return Proof(person)
        return None
