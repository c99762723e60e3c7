"""Who is talking: a channel account resolves to the memory scope its sessions read and write.

Three modes (DESIGN.md section 4): a ``users:`` map gives each listed person ``users/<name>``;
``memory.user_namespace`` gives every account one shared namespace; with neither, memory is scoped
to the session (``sessions/<channel>:<chat_id>``), the seeds' unchanged behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flynn.messages import ChannelAccount, SessionKey
from flynn.settings import UserAccounts


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
        return f"{self.root}/profile"

    @property
    def patterns(self) -> str:
        return f"{self.root}/patterns"

    @property
    def working(self) -> str:
        return f"{self.root}/working"

    @property
    def facts(self) -> str:
        return f"{self.root}/facts"

    def session_context(self, session: SessionKey) -> str:
        """Where the session-start context built for ``session`` is kept."""
        return f"{self.root}/context/{session}"


class Identity:
    """Maps accounts to memory scopes. Unknown accounts in multi-user mode get a scope of their own
    session only: nothing of anyone's memory."""

    def __init__(self, *, user_namespace: str | None, users: Mapping[str, UserAccounts]) -> None:
        self._user_namespace = user_namespace
        self._owners: dict[ChannelAccount, str] = {}
        for name, accounts in users.items():
            for channel in ("telegram", "discord", "gateway", "cli"):
                for external_id in getattr(accounts, channel):
                    self._owners[ChannelAccount(channel, external_id)] = name

    @property
    def is_multi_user(self) -> bool:
        return bool(self._owners)

    def resolve(self, account: ChannelAccount, session: SessionKey) -> MemoryScope:
        if self._owners:
            owner = self._owners.get(account)
            if owner is not None:
                return MemoryScope(f"users/{owner}", shared=True, user=owner)
            return self._session_scope(session)
        if self._user_namespace:
            return MemoryScope(self._user_namespace, shared=True, user=self._user_namespace)
        return self._session_scope(session)

    def scope_for_user(self, name: str | None) -> MemoryScope | None:
        """The shared scope of a configured person (``--user NAME``), or the single-user one."""
        if name is not None:
            if name not in set(self._owners.values()):
                return None
            return MemoryScope(f"users/{name}", shared=True, user=name)
        if self._user_namespace:
            return MemoryScope(self._user_namespace, shared=True, user=self._user_namespace)
        return None

    @staticmethod
    def _session_scope(session: SessionKey) -> MemoryScope:
        return MemoryScope(f"sessions/{session}", shared=False)
