"""The live sessions of one process: one orchestrator per session key, created on first use and
dropped when idle; the router's ``Sessions`` seam."""

from __future__ import annotations

from collections.abc import Callable

from flynn.identity import Identity, MemoryScope
from flynn.messages import Attachment, ChannelAccount, SessionKey
from flynn.sessions.orchestrator import Orchestrator
from flynn.sessions.services import SessionServices


def _nobody(root: str) -> None:
    pass


class SessionRegistry:
    """Creates orchestrators lazily (each resumes its stored history) and forgets them.

    ``aclose`` waits for every session's compaction, learning and embedding in flight."""

    def __init__(
        self,
        identity: Identity,
        services: SessionServices,
        *,
        tell_workers: Callable[[str], None] = _nobody,
    ) -> None:
        """``tell_workers(root)``: the other workers' live sessions of ``root`` drop what they
        loaded (``Coordination.forgotten``), after a ``/forget`` here."""
        self._identity = identity
        self._services = services
        self._tell_workers = tell_workers
        self._live: dict[SessionKey, Orchestrator] = {}
        self._started: set[SessionKey] = set()
        self._people: set[str] = set()
        # The tier a session chose (/tier), kept while its orchestrator is dropped for idling:
        # the choice lasts until the session restarts, not until it goes quiet.
        self._tiers: dict[SessionKey, int] = {}

    def scope_for(self, key: SessionKey, account: ChannelAccount) -> MemoryScope:
        """Whose memory a session of ``account`` reads and writes."""
        return self._identity.resolve(account, key)

    def orchestrator(self, key: SessionKey, account: ChannelAccount) -> Orchestrator:
        """The session's orchestrator, created on first use (resuming stored history; the
        session context is rebuilt the first time in this process)."""
        orchestrator = self._live.get(key)
        if orchestrator is None:
            scope = self.scope_for(key, account)
            files = self._services.person.files
            if scope.shared and files is not None and scope.root not in self._people:
                # A person's folder starts with its templates: the owner's come
                # from `flynn init`, everyone else's at their first message.
                self._people.add(scope.root)
                files.ensure_templates(scope.root)
            orchestrator = Orchestrator(key, scope, self._services, on_forgotten=self._forgot_in)
            orchestrator.choose_tier(self._tiers.pop(key, None))
            if key not in self._started:
                # A session starts at its first message after the daemon starts:
                # who they are and what was happening is built afresh, not taken from the
                # context kept by the last run. Within a run, an orchestrator dropped while
                # idle and made again keeps the session's context (no re-injection).
                self._started.add(key)
                orchestrator.rebuild_context("the first message since Flynn started")
            self._live[key] = orchestrator
        return orchestrator

    def keep_files(
        self, key: SessionKey, account: ChannelAccount, attachments: tuple[Attachment, ...]
    ) -> tuple[Attachment, ...]:
        """Durable intake's part: a message's pictures and files kept in the person's files
        folder now, before the channel is told it was taken (each marked kept, or refused with
        why: ``FileStore.keep_now``); unchanged where no files are kept."""
        person = self._services.person
        if not attachments or person.file_store is None or person.files is None:
            return attachments
        folder = person.files.directory(self.scope_for(key, account).root)
        return tuple(person.file_store.keep_now(folder, item) for item in attachments)

    def discard_files(
        self, key: SessionKey, account: ChannelAccount, attachments: tuple[Attachment, ...]
    ) -> None:
        """Deletes what ``keep_files`` kept for a message that was already taken (a
        redelivery, a resend): its first arrival's files are the ones kept."""
        person = self._services.person
        if person.file_store is not None and person.files is not None:
            folder = person.files.directory(self.scope_for(key, account).root)
            person.file_store.discard(folder, attachments)

    def live(self, key: SessionKey) -> Orchestrator | None:
        """The session's orchestrator if one exists now (without creating one)."""
        return self._live.get(key)

    async def evict(self, key: SessionKey) -> None:
        """Drops the session's orchestrator after waiting for its work in flight."""
        orchestrator = self._live.pop(key, None)
        if orchestrator is not None:
            if orchestrator.chosen_tier is not None:
                self._tiers[key] = orchestrator.chosen_tier
            await orchestrator.aclose()

    async def forgotten(self, root: str, *, but: SessionKey | None = None) -> None:
        """Something under the memory ``root`` was forgotten from outside a session (the memory
        page), or by ``/forget`` in session ``but`` (which rebuilt itself): each other live
        session of it drops its session context and loaded turns, which may quote it, once its
        work in flight is done (as ``/forget`` does for its own)."""
        for key, orchestrator in list(self._live.items()):
            if orchestrator.scope.root == root and key != but:
                await orchestrator.wait_idle()
                # No await since wait_idle returned: no turn can have started in between.
                orchestrator.rebuild_context()

    async def _forgot_in(self, orchestrator: Orchestrator) -> None:
        """A command of ``orchestrator``'s session (``/forget``) forgot something of its root:
        the other workers are told, then this process's other sessions of it rebuilt."""
        self._tell_workers(orchestrator.scope.root)
        await self.forgotten(orchestrator.scope.root, but=orchestrator.key)

    async def aclose(self) -> None:
        """Waits for every session's work in flight, then forgets them all."""
        for orchestrator in list(self._live.values()):
            await orchestrator.aclose()
        self._live.clear()
