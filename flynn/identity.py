"""Who is talking: a channel account resolves to the memory scope its sessions read and write.

Three modes: a ``users:`` map gives each listed person ``users/<name>``;
``memory.user_namespace`` gives every account one shared namespace; with neither, memory is scoped
to the session (``sessions/<channel>:<chat_id>``), the seeds' unchanged behaviour.

A person is an account listed under them in ``users:`` or approved as them by pairing
(``flynn users approve``); on the gateway, only a connection that said hello with the person's
own token (``GatewayClient``): a client id proves nothing, since anyone may name any.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from flynn.messages import ChannelAccount, SessionKey
from flynn.settings import UserAccounts

FactTarget = Literal["profile", "patterns"]
"""Where a fact about a person lives under their root: ``profile`` (who they are, how they like
things: fields and observations) or ``patterns`` (their "when I say X, do Y" shortcuts)."""


def facts_namespace(root: str, target: FactTarget) -> str:
    """The one place a fact of ``target`` about the person at ``root`` is kept, whoever learnt
    it (a rule, the ``remember`` tool, the extraction model): one set of facts, so one
    reconciliation and one session-start profile see them all."""
    return f"{root}/{target}"


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """Where one session's memory lives.

    ``shared`` scopes belong to a person (all their sessions read and write them): session-start
    injection, working memory and the personal-assistant compaction prompt apply only to those.
    """

    root: str
    shared: bool
    user: str | None = None

    @property
    def profile(self) -> str:
        return facts_namespace(self.root, "profile")

    @property
    def patterns(self) -> str:
        return facts_namespace(self.root, "patterns")

    @property
    def working(self) -> str:
        return f"{self.root}/working"

    @property
    def facts(self) -> str:
        """Where the extraction model's facts were kept before they joined ``profile`` and
        ``patterns`` (migration 16 moved them); read with the rest, written by nothing."""
        return f"{self.root}/facts"

    def session_context(self, session: SessionKey) -> str:
        """Where the session-start context built for ``session`` is kept."""
        return f"{self.root}/context/{session}"


GATEWAY = "gateway"
_PERSON_MARK = "@"
"""Joins a person and a client id in a gateway client key; no client id may hold it."""


@dataclass(frozen=True, slots=True)
class GatewayClient:
    """Who a gateway connection is: the ``client_id`` its hello named and the ``person`` its
    token proved (None for the channel token, which is the owner's)."""

    client_id: str
    person: str | None = None

    @property
    def key(self) -> str:
        """Its account and chat id on the gateway (its session is ``gateway:<key>``): the
        client id for the channel token, ``<person>@<client_id>`` for a person's token. Client
        ids are ``[A-Za-z0-9_.:-]``, so no client id spells a person's key, and two people
        naming the same client id get two keys."""
        if self.person is None:
            return self.client_id
        return f"{self.person}{_PERSON_MARK}{self.client_id}"

    @classmethod
    def from_key(cls, key: str) -> GatewayClient:
        """Inverse of ``key``."""
        person, mark, client_id = key.partition(_PERSON_MARK)
        return cls(client_id, person) if mark else cls(key)


class Approvals(Protocol):
    """Accounts let in by pairing (``flynn.memory.pairing.SqlitePairing``)."""

    def person_of(self, account: ChannelAccount) -> str | None:
        """The person ``account`` was approved as, if it was."""
        ...


class Identity:
    """Maps accounts to memory scopes. Unknown accounts in multi-user mode get a scope of their own
    session only: nothing of anyone's memory. On the gateway, the channel token's clients are the
    owner (``user_namespace``) whatever client id they name, listed under a person or not."""

    def __init__(
        self,
        *,
        user_namespace: str | None,
        users: Mapping[str, UserAccounts],
        approvals: Approvals | None = None,
    ) -> None:
        self._user_namespace = user_namespace
        self._people = frozenset(users)
        self._approvals = approvals
        self._owners: dict[ChannelAccount, str] = {}
        for name, accounts in users.items():
            # Gateway ids are not accounts: a person's gateway clients prove who they are with
            # their token; the ids listed are where ``notify: gateway`` reaches them.
            for channel in ("telegram", "discord", "cli"):
                for external_id in getattr(accounts, channel):
                    self._owners[ChannelAccount(channel, external_id)] = name

    @property
    def is_multi_user(self) -> bool:
        return bool(self._people)

    def is_person(self, name: str) -> bool:
        """Whether ``name`` is a person of ``users:``."""
        return name in self._people

    def can_approve_as(self, name: str) -> bool:
        """Whether pairing may let an account in as ``name``: a person of ``users:``, or the
        owner (``memory.user_namespace``)."""
        return name in self._people or (bool(name) and name == self._user_namespace)

    def person_of(self, account: ChannelAccount) -> str | None:
        """Who ``account`` is: a person of ``users:`` or the owner; None for nobody known."""
        if account.channel == GATEWAY:
            person = GatewayClient.from_key(account.external_id).person
            return person if person is not None and person in self._people else None
        name = self._owners.get(account)
        if name is None and self._approvals is not None:
            name = self._approvals.person_of(account)
            if name is not None and not self.can_approve_as(name):
                return None  # approved as someone no longer in users:
        return name

    def remembers_across_chats(self, account: ChannelAccount) -> bool:
        """Whether ``account``'s memory reaches beyond the chat it writes in (a person of
        ``users:``, the owner), as ``resolve`` scopes a chat account: what its memory commands
        answer is then more than what it said in that chat."""
        if self.person_of(account) is not None:
            return True
        return not self._people and bool(self._user_namespace)

    def resolve(self, account: ChannelAccount, session: SessionKey) -> MemoryScope:
        name = self.person_of(account)
        if name is not None:
            return self._scope_of(name)
        if self._people and account.channel != GATEWAY:
            return self._session_scope(session)
        if self._user_namespace and not GatewayClient.from_key(account.external_id).person:
            return self._owner_scope(self._user_namespace)
        return self._session_scope(session)

    def scope_for_user(self, name: str | None) -> MemoryScope | None:
        """The shared scope of a configured person (``--user NAME``), or the single-user one."""
        if name is not None:
            if name not in self._people:
                return None
            return MemoryScope(f"users/{name}", shared=True, user=name)
        if self._user_namespace:
            return MemoryScope(self._user_namespace, shared=True, user=self._user_namespace)
        return None

    def _scope_of(self, name: str) -> MemoryScope:
        if name in self._people:
            return MemoryScope(f"users/{name}", shared=True, user=name)
        return self._owner_scope(name)

    @staticmethod
    def _owner_scope(namespace: str) -> MemoryScope:
        return MemoryScope(namespace, shared=True, user=namespace)

    @staticmethod
    def _session_scope(session: SessionKey) -> MemoryScope:
        return MemoryScope(f"sessions/{session}", shared=False)
